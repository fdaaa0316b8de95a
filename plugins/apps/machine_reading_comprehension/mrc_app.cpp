// mrc_app.cpp: what machine reading comprehension does with rows, windows and logits — columns, answer
// re-location, windows as examples, n-best decoding, official EM/F1 with a sentence-overlap baseline,
// prediction cells (answer, n-best, start/end logits); the supervised-app base does the rest.
#include "mrc_app.h"

#include <ethost/app/predict_driver.h>
#include <ethost/data/dataset.h>
#include <ethost/error.h>
#include <ethost/io/state_dict.h>
#include <torch/torch.h>

#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "nbest.h"

namespace et::apps::mrc {
namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2) << v;
  return os.str();
}

std::optional<size_t> find_column(const std::vector<data::Column>& cols, const std::string& name) {
  for (size_t i = 0; i < cols.size(); ++i)
    if (cols[i].name == name) return i;
  return std::nullopt;
}

const int32_t kAnswerSep = -1;  // between reference answers in the "answers_cps" meta

// A window's scores for best_spans: row `r` of the [N, T] logits, the window's token map.
WindowScores scores_of(const data::Example& win, const float* start, const float* end) {
  WindowScores s;
  s.start_logits = start;
  s.end_logits = end;
  s.char_start = win.find_meta("char_start")->as<int32_t>().data();
  s.char_end = win.find_meta("char_end")->as<int32_t>().data();
  s.max_context = win.find_meta("max_context")->as<int8_t>().data();
  s.length = win.at("input_ids").size(0);
  return s;
}

}  // namespace

MrcApp::MrcApp(const ConfigView& c, Context& ctx) : SupervisedApp(c, ctx, "machine_reading_comprehension") {
  question_col_ = c.get_string("data.first_sequence");
  context_col_ = c.get_string("data.second_sequence");
  id_col_ = c.get_string("qas_id");
  answer_col_ = c.get_string("answer_name");
  start_col_ = c.get_string("start_position_name");
  answers_col_ = c.get_string("answers_name");
  max_query_length_ = c.get_int("max_query_length");
  max_answer_length_ = c.get_int("max_answer_length");
  doc_stride_ = c.get_int("doc_stride");
  n_best_ = c.get_int("n_best_size");
  std::string lang = c.get_string("language");
  if (lang == "zh")
    language_ = Language::zh;
  else if (lang == "en")
    language_ = Language::en;
  else
    throw ConfigError("language must be zh (CMRC2018's EM/F1) or en (SQuAD's), not \"" + lang + "\"",
                      c.where("language"));
  if (options().sequence_length - max_query_length_ - 3 < 16)
    throw ConfigError("data.sequence_length " + std::to_string(options().sequence_length) +
                          " leaves fewer than 16 context tokens per window after max_query_length " +
                          std::to_string(max_query_length_),
                      c.where("data.sequence_length"),
                      "raise data.sequence_length or lower max_query_length");
  set_window_encoder([this](const Row& row, std::string& reason, bool with_label) {
    return windows_of(row, reason, with_label);
  });
}

void MrcApp::run(Mode mode) {
  mode_ = mode;
  SupervisedApp::run(mode);
}

std::string MrcApp::describe_task() const {
  return std::string("extractive question answering (") + (language_ == Language::zh ? "CMRC2018" : "SQuAD") +
         " metrics, windows of " + std::to_string(options().sequence_length) + " tokens, doc_stride " +
         std::to_string(doc_stride_) + ")";
}

WindowOptions MrcApp::window_options() const {
  WindowOptions o;
  o.max_seq_length = options().sequence_length;
  o.max_query_length = max_query_length_;
  o.doc_stride = doc_stride_;
  return o;
}

void MrcApp::bind_columns(const std::vector<data::Column>& cols, bool need_label, const std::string& where) {
  col_q_ = data::column_index(cols, question_col_, "data.first_sequence (" + where + ")");
  col_c_ = data::column_index(cols, context_col_, "data.second_sequence (" + where + ")");
  col_id_ = find_column(cols, id_col_);
  col_answers_ = find_column(cols, answers_col_);
  col_start_ = find_column(cols, start_col_);
  col_answer_.reset();
  if (need_label) col_answer_ = data::column_index(cols, answer_col_, "answer_name (" + where + ")");
}

data::FeatureSchema MrcApp::features() const {
  auto s = data::FeatureSchema::bert_text(tokenizer().vocab().pad_id());
  s.scalar("start_positions");
  s.scalar("end_positions");
  return s;
}

void MrcApp::configure_model(Config& mc) const {
  mc.set_string_list("heads", {"span"}, "app/machine_reading_comprehension");
}

std::optional<data::Example> MrcApp::encode(const Row&, std::string& reason, bool) const {
  reason = "internal: app/machine_reading_comprehension encodes rows as windows";
  return std::nullopt;
}

std::vector<std::string> MrcApp::references(const Row& row) const {
  std::vector<std::string> refs;
  if (col_answers_) {
    auto j = nlohmann::json::parse(row.values[*col_answers_], nullptr, /*allow_exceptions=*/false);
    if (j.is_array())
      for (auto& a : j) {
        if (a.is_string()) refs.push_back(a.get<std::string>());
        if (a.is_object() && a.contains("text") && a["text"].is_string())
          refs.push_back(a["text"].get<std::string>());
      }
  }
  if (refs.empty() && col_answer_ && !row.values[*col_answer_].empty())
    refs.push_back(row.values[*col_answer_]);
  return refs;
}

std::vector<data::Example> MrcApp::windows_of(const Row& row, std::string& reason, bool with_label) const {
  const std::string& question = row.values[col_q_];
  const std::string& context = row.values[col_c_];
  std::u32string ctx;
  if (!code_points(context, ctx)) {
    reason = "the context is not valid UTF-8";
    return {};
  }
  int64_t a_start = -1, a_end = -1;
  std::vector<std::string> refs;
  if (with_label) {
    const std::string& text = row.values[*col_answer_];
    if (text.empty()) {
      reason = "the question has no answer (" + answer_col_ +
               " is empty; unanswerable SQuAD v2 questions are not supported)";
      return {};
    }
    std::u32string ans;
    code_points(text, ans);
    int64_t given = -1;
    if (col_start_) {
      try {
        if (!row.values[*col_start_].empty()) given = std::stoll(row.values[*col_start_]);
      } catch (const std::exception&) {
        given = -1;
      }
    }
    a_start = locate_answer(ctx, ans, given);
    if (a_start < 0) {
      reason = "the answer '" + text + "' is not in the context";
      return {};
    }
    if (a_start != given) {
      int64_t n = ++relocated_;
      if (n <= 5)
        logger().warn(row.file, ":", row.line, ": answer_start ", given, " does not hold '", text,
                      "': the answer is re-located by its text at ", a_start,
                      n == 5 ? " (further re-locations are counted, not logged)" : "");
    }
    a_end = a_start + static_cast<int64_t>(ans.size());
    refs = references(row);
  }
  Windowed w = make_windows(tokenizer(), question, context, window_options(), a_start, a_end);
  if (!w.error.empty()) {
    reason = w.error;
    return {};
  }
  if (w.query_cut > 0) ++query_cut_;
  std::vector<data::Example> out;
  for (size_t k = 0; k < w.windows.size(); ++k) {
    Window& win = w.windows[k];
    data::Example ex;
    ex.set("input_ids", data::Feature::sequence(std::move(win.input_ids)));
    ex.set("token_type_ids", data::Feature::sequence(std::move(win.token_type_ids)));
    if (with_label) {
      ex.set("start_positions", data::Feature::scalar<int64_t>(win.start_position));
      ex.set("end_positions", data::Feature::scalar<int64_t>(win.end_position));
    }
    ex.set_meta("char_start", data::Feature::sequence(std::move(win.char_start)));
    ex.set_meta("char_end", data::Feature::sequence(std::move(win.char_end)));
    ex.set_meta("max_context", data::Feature::sequence(std::move(win.max_context)));
    if (k == 0 && with_label) {  // what evaluation needs once per question
      ex.set_meta("context_cps", data::Feature::sequence(std::vector<int32_t>(ctx.begin(), ctx.end())));
      std::vector<int32_t> gold;
      for (const auto& r : refs) {
        std::u32string cps;
        code_points(r, cps);
        if (!gold.empty()) gold.push_back(kAnswerSep);
        gold.insert(gold.end(), cps.begin(), cps.end());
      }
      ex.set_meta("answers_cps", data::Feature::sequence(std::move(gold)));
      const std::string base = overlap_sentence(context, question);
      std::u32string b;
      code_points(base, b);
      ex.set_meta("baseline_cps", data::Feature::sequence(std::vector<int32_t>(b.begin(), b.end())));
    }
    out.push_back(std::move(ex));
  }
  return out;
}

app::EvalReport MrcApp::evaluate_on(const data::Dataset& ds) {
  auto out = forward_dataset(ds, {"start_logits", "end_logits", "loss"});
  at::Tensor start = out.at("start_logits").contiguous(), end = out.at("end_logits").contiguous();
  const int64_t T = start.size(1);
  const float* sp = start.data_ptr<float>();
  const float* ep = end.data_ptr<float>();
  std::vector<GoldQuestion> gold;
  std::map<std::string, std::string> predicted, baseline;
  int64_t no_span = 0;
  auto cps_of = [](const data::Feature& f) {
    const auto& v = f.as<int32_t>();
    return std::u32string(v.begin(), v.end());
  };
  for (size_t i = 0; i < ds.examples.size();) {
    size_t j = i;
    while (j < ds.examples.size() && ds.examples[j].index == ds.examples[i].index) ++j;
    const auto& first = ds.examples[i];
    const std::u32string context = cps_of(*first.find_meta("context_cps"));
    std::vector<WindowScores> windows;
    for (size_t k = i; k < j; ++k)
      windows.push_back(scores_of(ds.examples[k], sp + int64_t(k) * T, ep + int64_t(k) * T));
    auto best = best_spans(windows, context, n_best_, max_answer_length_);
    const std::string id = std::to_string(first.index);
    GoldQuestion q{id, {}};
    std::u32string cur;
    for (int32_t c : first.find_meta("answers_cps")->as<int32_t>()) {
      if (c == kAnswerSep) {
        q.answers.push_back(utf8(cur));
        cur.clear();
      } else {
        cur.push_back(static_cast<char32_t>(c));
      }
    }
    q.answers.push_back(utf8(cur));
    gold.push_back(std::move(q));
    if (best.empty()) ++no_span;
    predicted[id] = best.empty() ? "" : best[0].text;
    baseline[id] = utf8(cps_of(*first.find_meta("baseline_cps")));
    i = j;
  }
  SpanScores s = score_predictions(gold, predicted, language_);
  SpanScores b = score_predictions(gold, baseline, language_);
  app::EvalReport r;
  r.metrics["em"] = s.em;
  r.metrics["f1"] = s.f1;
  r.metrics["baseline_em"] = b.em;
  r.metrics["baseline_f1"] = b.f1;
  r.metrics["questions"] = double(s.total);
  r.metrics["windows"] = double(ds.size());
  r.metrics["loss"] = out.count("loss") ? out.at("loss").item<double>() : 0.0;
  std::ostringstream text;
  text << "eval " << (language_ == Language::zh ? "CMRC2018" : "SQuAD") << " EM " << fmt(s.em) << ", F1 "
       << fmt(s.f1) << " over " << s.total << " questions (" << ds.size()
       << " windows); sentence-overlap baseline EM " << fmt(b.em) << ", F1 " << fmt(b.f1) << "\n";
  if (no_span > 0) text << no_span << " question(s) had no valid span and were answered \"\"\n";
  if (int64_t n = relocated_.load(); n > 0)
    text << n << " answer(s) were re-located by their text (answer_start did not hold them)\n";
  if (int64_t n = query_cut_.load(); n > 0)
    text << n << " question(s) were cut to max_query_length " << max_query_length_ << " tokens\n";
  r.text = text.str();
  return r;
}

std::vector<std::string> MrcApp::input_columns() const { return {question_col_, context_col_}; }

std::vector<OutputColumn> MrcApp::output_columns() const {
  return {{"id", "the question's id (the qas_id column; the row's position when the input has none)"},
          {"predictions", "the best answer span's text"},
          {"nbest",
           "the n best answers as a JSON array of {text, probability, start_logit, end_logit, start, end} "
           "(code points of the context, [start, end))",
           true},
          {"start_logits", "per window, the start logit of every position: a JSON array of arrays", true},
          {"end_logits", "per window, the end logit of every position: a JSON array of arrays", true}};
}

void MrcApp::postprocess(const TensorMap& outputs, const data::Batch&, const std::vector<PredictItem>& items,
                         const std::vector<std::string>& columns,
                         std::vector<std::vector<std::string>>& cells) const {
  at::Tensor start = outputs.at("start_logits").to(torch::kFloat).contiguous();  // [all windows, T]
  at::Tensor end = outputs.at("end_logits").to(torch::kFloat).contiguous();
  const int64_t T = start.size(1);
  int64_t w0 = 0;
  for (const auto& item : items) {
    auto windows = data::unpack_windows(*item.example);
    std::u32string context;
    code_points(item.row->values[col_c_], context);
    std::vector<WindowScores> scores;
    for (size_t k = 0; k < windows.size(); ++k)
      scores.push_back(scores_of(windows[k], start.data_ptr<float>() + (w0 + int64_t(k)) * T,
                                 end.data_ptr<float>() + (w0 + int64_t(k)) * T));
    auto best = best_spans(scores, context, n_best_, max_answer_length_);
    std::vector<std::string> row;
    for (const auto& col : columns) {
      if (col == "id") {
        row.push_back(col_id_ ? item.row->values[*col_id_] : std::to_string(item.example->index));
      } else if (col == "predictions") {
        std::string t = best.empty() ? "" : best[0].text;
        for (char& ch : t)
          if (ch == '\t' || ch == '\n' || ch == '\r') ch = ' ';
        row.push_back(t);
      } else if (col == "nbest") {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& c : best)
          a.push_back({{"text", c.text},
                       {"probability", c.probability},
                       {"start_logit", c.start_logit},
                       {"end_logit", c.end_logit},
                       {"start", c.char_start},
                       {"end", c.char_end}});
        row.push_back(a.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      } else {
        const float* base = (col == "start_logits" ? start : end).data_ptr<float>();
        std::string cell = "[";
        for (size_t k = 0; k < windows.size(); ++k)
          cell += (k ? "," : "") + app::json_floats(base + (w0 + int64_t(k)) * T, scores[k].length);
        row.push_back(cell + "]");
      }
    }
    cells.push_back(std::move(row));
    w0 += static_cast<int64_t>(windows.size());
  }
}

void MrcApp::save_extra(const std::string& dir) const {
  nlohmann::json info{{"language", language_ == Language::zh ? "zh" : "en"},
                      {"max_query_length", max_query_length_},
                      {"doc_stride", doc_stride_},
                      {"max_answer_length", max_answer_length_},
                      {"sequence_length", options().sequence_length}};
  io::write_file_atomic(dir + "/machine_reading_comprehension.json", info.dump(2) + "\n");
}

}  // namespace et::apps::mrc
