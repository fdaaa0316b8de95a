// sequence_labeling_app.cpp: what sequence labeling does with rows, batches and outputs — words and tags from
// tag columns or CLUENER spans, sub-token alignment, conlleval metrics with a most-frequent-tag baseline,
// prediction cells (tags, entities, per-word logits); the supervised-app base does the rest.
#include "sequence_labeling_app.h"

#include <ethost/app/predict_driver.h>
#include <ethost/error.h>
#include <ethost/io/state_dict.h>
#include <ethost/nn/hf/model_options.h>
#include <torch/torch.h>

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "align.h"
#include "conlleval.h"

namespace et::apps::sequence_labeling {
namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4) << v;
  return os.str();
}

// CLUENER's label object {type: {entity text: [[start, end], ...]}} (end inclusive, code points) as chunks;
// "" or the reason it is malformed.
std::string parse_spans(const std::string& cell, const std::vector<std::string>& chars,
                        std::vector<Chunk>& out) {
  out.clear();
  if (cell.empty()) return "";  // no entities
  auto j = nlohmann::json::parse(cell, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return "label is not a CLUENER span object {type: {entity: [[start, end]]}}";
  for (auto& [type, ents] : j.items()) {
    if (!ents.is_object()) return "label type '" + type + "' does not map entities to spans";
    for (auto& [entity, spans] : ents.items()) {
      if (!spans.is_array()) return "entity '" + entity + "' has no list of spans";
      for (auto& sp : spans) {
        if (!sp.is_array() || sp.size() != 2 || !sp[0].is_number_integer() || !sp[1].is_number_integer())
          return "entity '" + entity + "': a span is not [start, end]";
        int64_t s = sp[0].get<int64_t>(), e = sp[1].get<int64_t>();
        if (s < 0 || e < s || e >= static_cast<int64_t>(chars.size()))
          return "entity '" + entity + "' span [" + std::to_string(s) + ", " + std::to_string(e) +
                 "] is outside the text (" + std::to_string(chars.size()) + " characters)";
        std::string at;
        for (int64_t i = s; i <= e; ++i) at += chars[size_t(i)];
        if (at != entity)
          return "entity '" + entity + "' span [" + std::to_string(s) + ", " + std::to_string(e) +
                 "] holds '" + at + "' in the text";
        out.push_back({type, s, e + 1});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const Chunk& a, const Chunk& b) { return a.start < b.start; });
  return "";
}

// Words joined back into an entity's text: characters directly, longer tokens with spaces.
std::string join_words(const std::vector<std::string>& words, int64_t start, int64_t end) {
  bool chars = true;
  std::vector<std::string> cps;
  for (int64_t i = start; i < end; ++i)
    if (!utf8_chars(words[size_t(i)], cps) || cps.size() != 1) chars = false;
  std::string s;
  for (int64_t i = start; i < end; ++i) s += (i > start && !chars ? " " : "") + words[size_t(i)];
  return s;
}

}  // namespace

SequenceLabelingApp::SequenceLabelingApp(const ConfigView& c, Context& ctx)
    : SupervisedApp(c, ctx, "sequence_labeling") {
  first_ = c.get_string("data.first_sequence");
  std::string f = c.get_string("data.label_format");
  if (f == "tags")
    format_ = LabelFormat::tags;
  else if (f == "spans")
    format_ = LabelFormat::spans;
  else
    throw ConfigError(
        "data.label_format must be \"tags\" (a tag per token) or \"spans\" (CLUENER entity spans), "
        "not \"" +
            f + "\"",
        c.where("data.label_format"));
  use_crf_ = c.get_bool("use_crf");
  user_set_crf_ = nn::hf::user_set(c, "use_crf");
  std::string s = c.get_string("data.tag_scheme");
  std::transform(s.begin(), s.end(), s.begin(), ::toupper);
  if (s == "BIO")
    scheme_ = Scheme::bio;
  else if (s == "BIOES")
    scheme_ = Scheme::bioes;
  else
    throw ConfigError("data.tag_scheme must be BIO or BIOES, not \"" + s + "\"", c.where("data.tag_scheme"));
}

void SequenceLabelingApp::run(Mode mode) {
  mode_ = mode;
  SupervisedApp::run(mode);
}

std::string SequenceLabelingApp::describe_task() const {
  return std::string("token classification (") + (scheme_ == Scheme::bio ? "BIO" : "BIOES") + ", " +
         (format_ == LabelFormat::tags ? "tag columns" : "CLUENER spans") + ")";
}

void SequenceLabelingApp::bind_columns(const std::vector<data::Column>& cols, bool need_label,
                                       const std::string& where) {
  col_text_ = data::column_index(cols, first_, "data.first_sequence (" + where + ")");
  if (need_label)
    col_label_ = data::column_index(cols, options().label_name, "data.label_name (" + where + ")");
}

data::FeatureSchema SequenceLabelingApp::features() const {
  auto s = data::FeatureSchema::bert_text(tokenizer().vocab().pad_id());
  s.sequence("token_labels", -100);
  s.sequence("label_mask", 0);  // 1 on each word's first sub-token: the positions tags are read from
  return s;
}

bool SequenceLabelingApp::crf() const {
  if (mode_ == Mode::train) return use_crf_;
  const std::string dir = saved_model_dir();
  std::ifstream in(dir + "/sequence_labeling.json");
  if (!in) return use_crf_;
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("crf") || !j["crf"].is_boolean())
    throw DataError("sequence_labeling.json is not {\"crf\": true|false, ...}",
                    dir + "/sequence_labeling.json", "re-save the model with --mode train");
  bool saved = j["crf"].get<bool>();
  if (saved != use_crf_ && user_set_crf_)
    logger().warn("use_crf = ", use_crf_ ? "true" : "false", " but the model in ", dir, " was trained ",
                  saved ? "with" : "without", " a CRF layer: decoding it as trained");
  return saved;
}

void SequenceLabelingApp::configure_model(Config& mc) const {
  std::vector<std::string> heads{"token_classification"};
  if (crf()) heads.push_back("crf");
  mc.set_string_list("heads", heads, "app/sequence_labeling");
}

std::vector<std::string> SequenceLabelingApp::labels_in_cell(const std::string& cell) const {
  std::vector<std::string> out{"O"};
  if (format_ == LabelFormat::tags) {
    for (auto& t : split_spaces(cell)) out.push_back(t);
    return out;
  }
  auto j = nlohmann::json::parse(cell, nullptr, false);
  if (j.is_object())
    for (auto& [type, ents] : j.items())
      for (auto& l : labels_of_type(type, scheme_)) out.push_back(l);
  return out;
}

std::string SequenceLabelingApp::words_of(const std::string& text, std::vector<std::string>& words) const {
  if (format_ == LabelFormat::tags) {
    words = split_spaces(text);
    return "";
  }
  if (!utf8_chars(text, words)) return "text is not valid UTF-8";
  return "";
}

std::string SequenceLabelingApp::tags_of(const std::vector<std::string>& words, const std::string& cell,
                                         std::vector<std::string>& tags) const {
  if (format_ == LabelFormat::tags) {
    tags = split_spaces(cell);
    if (tags.size() != words.size())
      return std::to_string(words.size()) + " tokens but " + std::to_string(tags.size()) +
             " tags (data.first_sequence and data.label_name must be space-separated, one tag per token)";
    return "";
  }
  std::vector<Chunk> spans;
  if (auto why = parse_spans(cell, words, spans); !why.empty()) return why;
  return tags_from_chunks(static_cast<int64_t>(words.size()), spans, scheme_, tags);
}

std::optional<data::Example> SequenceLabelingApp::encode(const Row& row, std::string& reason,
                                                         bool with_label) const {
  std::vector<std::string> words;
  if (auto why = words_of(row.values[col_text_], words); !why.empty()) {
    reason = why;
    return std::nullopt;
  }
  if (words.empty()) {
    reason = "the text has no tokens";
    return std::nullopt;
  }
  Aligned a = align_words(tokenizer(), words, options().sequence_length);
  if (a.invalid_utf8 > 0) {
    reason = "text is not valid UTF-8";
    return std::nullopt;
  }
  data::Example ex;
  ex.set("input_ids", data::Feature::sequence(a.input_ids));
  ex.set("token_type_ids", data::Feature::sequence(std::vector<int8_t>(a.input_ids.size(), 0)));
  std::vector<int8_t> label_mask(a.input_ids.size(), 0);
  for (int32_t p : a.word_pos)
    if (p >= 0) label_mask[size_t(p)] = 1;
  ex.set("label_mask", data::Feature::sequence(std::move(label_mask)));
  ex.set_meta("word_pos", data::Feature::sequence(a.word_pos));
  if (!with_label) return ex;
  std::vector<std::string> tags;
  if (auto why = tags_of(words, row.values[col_label_], tags); !why.empty()) {
    reason = why;
    return std::nullopt;
  }
  std::vector<int32_t> token_labels(a.input_ids.size(), -100), word_labels(words.size());
  for (size_t w = 0; w < words.size(); ++w) {
    int64_t id = labels().id(tags[w]);
    if (id < 0) {
      reason = "tag '" + tags[w] + "' of token " + std::to_string(w + 1) + " is not one of the labels (" +
               labels().list() + ")";
      return std::nullopt;
    }
    word_labels[w] = static_cast<int32_t>(id);
    if (a.word_pos[w] >= 0) token_labels[size_t(a.word_pos[w])] = static_cast<int32_t>(id);
  }
  ex.set("token_labels", data::Feature::sequence(std::move(token_labels)));
  ex.set_meta("word_labels", data::Feature::sequence(std::move(word_labels)));
  return ex;
}

const std::map<int32_t, int64_t>* SequenceLabelingApp::most_frequent() const {
  std::lock_guard<std::mutex> lock(baseline_mutex_);
  if (!most_frequent_) {
    if (mode_ == Mode::train) {
      const data::Dataset* train = training_set();
      if (!train) return nullptr;
      std::map<int32_t, std::map<int64_t, int64_t>> counts;  // first sub-token id -> label id -> count
      for (const auto& ex : train->examples) {
        const auto& ids = ex.at("input_ids").as<int32_t>();
        const auto& pos = ex.find_meta("word_pos")->as<int32_t>();
        const auto& lab = ex.find_meta("word_labels")->as<int32_t>();
        for (size_t w = 0; w < pos.size(); ++w)
          if (pos[w] >= 0) ++counts[ids[size_t(pos[w])]][lab[w]];
      }
      most_frequent_.emplace();
      for (auto& [id, by_label] : counts) {
        auto best = std::max_element(by_label.begin(), by_label.end(),
                                     [](auto& a, auto& b) { return a.second < b.second; });
        (*most_frequent_)[id] = best->first;
      }
    } else if (mode_ == Mode::evaluate) {
      most_frequent_.emplace();
      std::ifstream in(saved_model_dir() + "/tag_baseline.json");
      auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
      if (in && j.is_object() && j.contains("most_frequent_tag"))
        for (auto& [id, tag] : j["most_frequent_tag"].items())
          if (int64_t l = labels().id(tag.get<std::string>()); l >= 0)
            (*most_frequent_)[static_cast<int32_t>(std::stoi(id))] = l;
    } else {
      return nullptr;
    }
  }
  return most_frequent_->empty() ? nullptr : &*most_frequent_;
}

void SequenceLabelingApp::save_extra(const std::string& dir) const {
  nlohmann::json info{{"crf", crf()},
                      {"tag_scheme", scheme_ == Scheme::bio ? "BIO" : "BIOES"},
                      {"label_format", format_ == LabelFormat::tags ? "tags" : "spans"}};
  io::write_file_atomic(dir + "/sequence_labeling.json", info.dump(2) + "\n");
  const auto* table = most_frequent();
  if (!table) return;
  nlohmann::json j;
  j["doc"] =
      "the most frequent tag of each token id (a character's first sub-token) in the training table: "
      "the baseline app/sequence_labeling reports next to the model";
  j["training_table"] = options().tables.empty() ? "" : options().tables[0];
  nlohmann::json m = nlohmann::json::object();
  for (auto& [id, l] : *table) m[std::to_string(id)] = labels().names[size_t(l)];
  j["most_frequent_tag"] = m;
  io::write_file_atomic(dir + "/tag_baseline.json", j.dump() + "\n");
}

std::optional<double> SequenceLabelingApp::baseline_f1(const data::Dataset& ds) {
  const auto* table = most_frequent();
  if (!table) return std::nullopt;
  ConllEval ev;
  const int64_t o = std::max<int64_t>(0, labels().id("O"));
  for (const auto& ex : ds.examples) {
    const auto& ids = ex.at("input_ids").as<int32_t>();
    const auto& pos = ex.find_meta("word_pos")->as<int32_t>();
    const auto& lab = ex.find_meta("word_labels")->as<int32_t>();
    std::vector<std::string> gold, guess;
    for (size_t w = 0; w < pos.size(); ++w) {
      int64_t g = o;
      if (pos[w] >= 0)
        if (auto it = table->find(ids[size_t(pos[w])]); it != table->end()) g = it->second;
      gold.push_back(labels().names[size_t(lab[w])]);
      guess.push_back(labels().names[size_t(g)]);
    }
    ev.add(gold, guess);
  }
  return ev.report().overall.f1();
}

app::EvalReport SequenceLabelingApp::evaluate_on(const data::Dataset& ds) {
  app::EvalReport r;
  auto out = forward_dataset(ds, {"token_logits", "token_tags", "loss"});
  // The CRF's Viterbi path when the model has one, else each position's best label.
  at::Tensor pred = out.count("token_tags") ? out.at("token_tags").contiguous()
                                            : out.at("token_logits").argmax(-1).contiguous();  // [N, T]
  const int64_t T = pred.size(1);
  const int64_t* p = pred.data_ptr<int64_t>();
  ConllEval ev;
  int64_t cut = 0;
  for (size_t i = 0; i < ds.examples.size(); ++i) {
    const auto& ex = ds.examples[i];
    const auto& pos = ex.find_meta("word_pos")->as<int32_t>();
    const auto& lab = ex.find_meta("word_labels")->as<int32_t>();
    std::vector<std::string> gold, guess;
    for (size_t w = 0; w < pos.size(); ++w) {
      gold.push_back(labels().names[size_t(lab[w])]);
      // A word without a position (cut by truncation, or no sub-token) is predicted O and still scored.
      cut += pos[w] < 0;
      guess.push_back(pos[w] >= 0 ? labels().names[size_t(p[int64_t(i) * T + pos[w]])] : "O");
    }
    ev.add(gold, guess);
  }
  const ConllReport& rep = ev.report();
  r.metrics["precision"] = rep.overall.precision();
  r.metrics["recall"] = rep.overall.recall();
  r.metrics["f1"] = rep.overall.f1();
  r.metrics["accuracy"] = rep.accuracy();
  r.metrics["loss"] = out.count("loss") ? out.at("loss").item<double>() : 0.0;
  for (const auto& [type, k] : rep.per_type) {
    if (type.empty()) continue;
    r.metrics["precision_" + type] = k.precision();
    r.metrics["recall_" + type] = k.recall();
    r.metrics["f1_" + type] = k.f1();
  }
  std::ostringstream text;
  text << "eval entity f1 " << fmt(rep.overall.f1()) << ", precision " << fmt(rep.overall.precision())
       << ", recall " << fmt(rep.overall.recall());
  if (auto b = baseline_f1(ds)) {
    r.metrics["baseline_f1"] = *b;
    text << " (most-frequent-tag-per-character baseline f1 " << fmt(*b) << ")";
  }
  text << "\n";
  if (cut > 0)
    text << cut
         << " token(s) had no model position (truncated at data.sequence_length) and were scored as O\n";
  text << format_conll_report(rep);
  r.text = text.str();
  return r;
}

std::vector<OutputColumn> SequenceLabelingApp::output_columns() const {
  return {{"predictions", "the tag of each input token, space-separated (aligned with the input's tokens)"},
          {"output", "the entities as a JSON array of {word, tag, start, end} (tokens [start, end))", true},
          {"logits", "per input token, the raw scores per label: a JSON array of arrays (null: no position)",
           true}};
}

void SequenceLabelingApp::postprocess(const TensorMap& outputs, const data::Batch&,
                                      const std::vector<PredictItem>& items,
                                      const std::vector<std::string>& columns,
                                      std::vector<std::vector<std::string>>& cells) const {
  at::Tensor logits = outputs.at("token_logits").to(torch::kFloat).contiguous();  // [B, T, L]
  const int64_t T = logits.size(1), L = logits.size(2);
  auto tags_it = outputs.find("token_tags");
  at::Tensor best = tags_it != outputs.end() ? tags_it->second.to(torch::kLong).contiguous()
                                             : logits.argmax(-1).contiguous();
  for (size_t r = 0; r < items.size(); ++r) {
    std::vector<std::string> words;
    words_of(items[r].row->values[col_text_], words);
    const auto& pos = items[r].example->find_meta("word_pos")->as<int32_t>();
    std::vector<std::string> tags;
    for (size_t w = 0; w < words.size(); ++w)
      tags.push_back(pos[w] >= 0 ? labels().names[size_t(best.data_ptr<int64_t>()[int64_t(r) * T + pos[w]])]
                                 : "O");
    std::vector<std::string> row;
    for (const auto& col : columns) {
      std::string cell;
      if (col == "predictions") {
        for (size_t w = 0; w < tags.size(); ++w) cell += (w ? " " : "") + tags[w];
      } else if (col == "output") {
        nlohmann::json ents = nlohmann::json::array();
        for (const auto& c : chunks(tags))
          ents.push_back({{"word", join_words(words, c.start, c.end)},
                          {"tag", c.type},
                          {"start", c.start},
                          {"end", c.end}});
        cell = ents.dump();
      } else {
        cell = "[";
        for (size_t w = 0; w < words.size(); ++w) {
          cell += w ? "," : "";
          cell += pos[w] >= 0 ? app::json_floats(logits.data_ptr<float>() + (int64_t(r) * T + pos[w]) * L, L)
                              : "null";
        }
        cell += "]";
      }
      row.push_back(std::move(cell));
    }
    cells.push_back(std::move(row));
  }
}

}  // namespace et::apps::sequence_labeling
