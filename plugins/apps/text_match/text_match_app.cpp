// text_match_app.cpp: what text matching does with rows, batches and outputs — pair encoding (one sequence
// for the single tower, two for the towers), the towers' shared forward pass and losses, metrics, prediction
// cells; the supervised-app base does the rest.
#include "text_match_app.h"

#include <ethost/app/predict_driver.h>
#include <ethost/app/text_features.h>
#include <ethost/data/batcher.h>
#include <ethost/error.h>
#include <ethost/io/state_dict.h>
#include <ethost/nn/embedding_losses.h>
#include <ethost/nn/hf/model_options.h>
#include <ethost/train/metrics.h>
#include <torch/torch.h>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "match_metrics.h"

namespace et::apps::text_match {
namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4) << v;
  return os.str();
}

const std::vector<int64_t> kRecallAt = {1, 5, 10};

Loss parse_loss(const std::string& s) {
  if (s == "softmax") return Loss::softmax;
  if (s == "cosine_margin") return Loss::cosine_margin;
  if (s == "hinge_loss") return Loss::hinge;
  return Loss::circle;  // the manifest's choices leave only circle_loss
}

const char* loss_name(Loss l) {
  switch (l) {
    case Loss::softmax:
      return "softmax";
    case Loss::cosine_margin:
      return "cosine_margin";
    case Loss::hinge:
      return "hinge_loss";
    case Loss::circle:
      return "circle_loss";
  }
  return "";
}

double default_margin(Loss l) { return l == Loss::circle ? 0.25 : 0.3; }

// x [B, t] padded on the right to T columns with `value`.
at::Tensor pad_to(const at::Tensor& x, int64_t T, double value) {
  return x.size(1) < T ? torch::constant_pad_nd(x, {0, T - x.size(1)}, value) : x;
}

std::vector<double> match_probabilities(const PairEmbeddings& p) {
  at::Tensor cos = (p.a * p.b).sum(1).to(torch::kDouble).contiguous();
  std::vector<double> prob(size_t(cos.numel()));
  for (size_t i = 0; i < prob.size(); ++i) prob[i] = (cos.data_ptr<double>()[i] + 1.0) / 2.0;
  return prob;
}

std::vector<int> gold_labels(const data::Dataset& ds, const std::vector<int64_t>& rows) {
  std::vector<int> gold;
  for (int64_t r : rows) gold.push_back(static_cast<int>(ds.examples[size_t(r)].at("labels").value(0)));
  return gold;
}

std::vector<int64_t> all_rows(const data::Dataset& ds) {
  std::vector<int64_t> rows(ds.examples.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = int64_t(i);
  return rows;
}

// Each example's two texts as token sets (token_set) without [CLS]/[SEP] (single tower: split by token type).
struct PairTokens {
  std::vector<std::vector<int32_t>> a, b;
};
PairTokens pair_tokens(const data::Dataset& ds, bool two_tower, int64_t cls, int64_t sep) {
  PairTokens p;
  for (const auto& ex : ds.examples) {
    std::vector<int32_t> a, b;
    const auto& ids = ex.at("input_ids").as<int32_t>();
    const auto& types = ex.at("token_type_ids").as<int8_t>();
    for (size_t t = 0; t < ids.size(); ++t)
      if (ids[t] != cls && ids[t] != sep) (two_tower || types[t] == 0 ? a : b).push_back(ids[t]);
    if (two_tower)
      for (int32_t id : ex.at("input_ids_b").as<int32_t>())
        if (id != cls && id != sep) b.push_back(id);
    p.a.push_back(token_set(std::move(a)));
    p.b.push_back(token_set(std::move(b)));
  }
  return p;
}

std::vector<double> overlap_scores(const PairTokens& p) {
  std::vector<double> s;
  for (size_t i = 0; i < p.a.size(); ++i) s.push_back(set_jaccard(p.a[i], p.b[i]));
  return s;
}

constexpr size_t kThresholdSample =
    4096;  // training pairs the threshold is fitted on, at most (evenly spaced)

}  // namespace

TextMatchApp::TextMatchApp(const ConfigView& c, Context& ctx) : SupervisedApp(c, ctx, "text_match") {
  configured_.two_tower = c.get_bool("two_tower");
  configured_.pooling = c.get_string("pooling");
  configured_.embedding_size = c.get_int("embedding_size");
  loss_ = parse_loss(c.get_string("loss_type"));
  margin_ = c.get_double("margin");
  if (margin_ < 0) margin_ = default_margin(loss_);
  gamma_ = c.get_double("gamma");
  temperature_ = c.get_double("temperature");
  threshold_ = c.get_double("threshold");
  if (threshold_ > 1)
    throw ConfigError("threshold must be a probability in [0, 1] (or negative: fitted)",
                      c.where("threshold"));
  first_ = c.get_string("data.first_sequence");
  second_ = c.get_string("data.second_sequence");
  if (second_.empty())
    throw ConfigError("text matching needs two texts: data.second_sequence is empty",
                      c.where("data.second_sequence"), "name the column of the second text");
}

void TextMatchApp::run(Mode mode) {
  mode_ = mode;
  SupervisedApp::run(mode);
}

const TowerSettings& TextMatchApp::towers() const {
  if (mode_ == Mode::train) return configured_;
  if (saved_) return *saved_;
  const std::string dir = saved_model_dir();
  const std::string file = dir + "/text_match.json";
  std::ifstream in(file);
  if (!in) return *(saved_ = configured_);  // e.g. an HF checkpoint: the configured towers
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("two_tower") || !j["two_tower"].is_boolean() || !j.contains("pooling") ||
      !j["pooling"].is_string() || !j.contains("embedding_size") || !j["embedding_size"].is_number_integer())
    throw DataError(
        "text_match.json is not {\"two_tower\": bool, \"pooling\": string, \"embedding_size\": int}", file,
        "re-save the model with --mode train");
  TowerSettings s{j["two_tower"].get<bool>(), j["pooling"].get<std::string>(),
                  j["embedding_size"].get<int64_t>(), j.value("threshold", 0.5)};
  if (s.two_tower != configured_.two_tower && nn::hf::user_set(root(), "two_tower"))
    logger().warn("two_tower = ", configured_.two_tower ? "true" : "false", " but the model in ", dir,
                  " was trained ", s.two_tower ? "with two towers" : "as a single tower",
                  ": using it as trained");
  return *(saved_ = s);
}

std::string TextMatchApp::describe_task() const {
  const auto& t = towers();
  if (!t.two_tower) return "single-tower pair classification";
  return "two-tower matching (" + t.pooling + " pooling" +
         (t.embedding_size > 0 ? ", projection to " + std::to_string(t.embedding_size) : std::string()) +
         ", " + loss_name(loss_) + " loss)";
}

void TextMatchApp::bind_columns(const std::vector<data::Column>& cols, bool need_label,
                                const std::string& where) {
  col_a_ = data::column_index(cols, first_, "data.first_sequence (" + where + ")");
  col_b_ = data::column_index(cols, second_, "data.second_sequence (" + where + ")");
  if (need_label)
    col_label_ = data::column_index(cols, options().label_name, "data.label_name (" + where + ")");
}

data::FeatureSchema TextMatchApp::features() const {
  const int64_t pad = tokenizer().vocab().pad_id();
  auto s = data::FeatureSchema::bert_text(pad);
  if (towers().two_tower) {
    s.sequence("input_ids_b", double(pad), "attention_mask_b");
    s.sequence("token_type_ids_b", 0);
  }
  s.scalar("labels");
  return s;
}

void TextMatchApp::configure_model(Config& mc) const {
  const auto& t = towers();
  if (!t.two_tower) {
    mc.set_string_list("heads", {"sequence_classification"}, "app/text_match");
    mc.set_string("problem_type", "single_label_classification", "app/text_match");
    return;
  }
  if (labels().size() != 2)
    throw ConfigError("two-tower matching needs two labels (no match, match), found " +
                          std::to_string(labels().size()) + ": " + labels().list(),
                      root().where("data.label_enumerate_values"),
                      "set data.label_enumerate_values = [\"<no match>\", \"<match>\"]");
  mc.set_string_list("heads", {"sentence_embedding"}, "app/text_match");
  mc.set_string("pooling", t.pooling, "app/text_match");
  mc.set_int("embedding_size", t.embedding_size, "app/text_match");
}

std::optional<data::Example> TextMatchApp::encode(const Row& row, std::string& reason,
                                                  bool with_label) const {
  const std::string &a = row.values[col_a_], &b = row.values[col_b_];
  data::Example ex;
  if (towers().two_tower) {
    text::Encoding ea = tokenizer().encode(a), eb = tokenizer().encode(b);
    if (ea.invalid_utf8 || eb.invalid_utf8) {
      reason = "text is not valid UTF-8";
      return std::nullopt;
    }
    app::set_bert_text(ex, ea);
    app::set_bert_text(ex, eb, "_b");
  } else {
    text::Encoding enc = tokenizer().encode(a, b);
    if (enc.invalid_utf8) {
      reason = "text is not valid UTF-8";
      return std::nullopt;
    }
    app::set_bert_text(ex, enc);
  }
  if (!with_label) return ex;
  const std::string& y = row.values[col_label_];
  int64_t id = labels().id(y);
  if (id < 0) {
    reason = "label '" + y + "' is not one of the labels (" + labels().list() + ")";
    return std::nullopt;
  }
  ex.set("labels", data::Feature::scalar(id));
  return ex;
}

TensorMap TextMatchApp::model_inputs(const data::Batch& batch) {
  if (!towers().two_tower) return batch.tensors;
  const auto& t = batch.tensors;
  const at::Tensor &ia = t.at("input_ids"), &ib = t.at("input_ids_b");
  const int64_t T = std::max(ia.size(1), ib.size(1));
  const double pad = double(tokenizer().vocab().pad_id());
  auto both = [&](const char* a, const char* b, double value) {
    return torch::cat({pad_to(t.at(a), T, value), pad_to(t.at(b), T, value)});
  };
  return {{"input_ids", torch::cat({pad_to(ia, T, pad), pad_to(ib, T, pad)})},
          {"attention_mask", both("attention_mask", "attention_mask_b", 0)},
          {"token_type_ids", both("token_type_ids", "token_type_ids_b", 0)}};
}

at::Tensor TextMatchApp::pair_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& labels) const {
  switch (loss_) {
    case Loss::softmax:
      return nn::in_batch_softmax_loss(a, b, labels, temperature_);
    case Loss::cosine_margin:
      return nn::cosine_margin_loss(a, b, labels, margin_);
    case Loss::hinge:
      return nn::cosine_hinge_loss(a, b, labels, margin_);
    case Loss::circle:
      return nn::circle_loss(a, b, labels, margin_, gamma_);
  }
  return {};
}

train::LossTerms TextMatchApp::loss(const TensorMap& outputs, const data::Batch& batch,
                                    const TensorMap& extras) {
  if (!towers().two_tower) return SupervisedApp::loss(outputs, batch, extras);
  const at::Tensor& e = outputs.at("sentence_embedding");
  const int64_t B = batch.size;
  return {pair_loss(e.narrow(0, 0, B), e.narrow(0, B, B), batch.tensors.at("labels")), {}};
}

std::pair<std::string, bool> TextMatchApp::main_metric() const {
  if (towers().two_tower) return {"auc", true};
  return {"accuracy", true};
}

app::EvalReport TextMatchApp::evaluate_on(const data::Dataset& ds) {
  return towers().two_tower ? evaluate_two_tower(ds) : evaluate_single(ds);
}

app::EvalReport TextMatchApp::evaluate_single(const data::Dataset& ds) {
  app::EvalReport r;
  auto out = forward_dataset(ds, {"logits", "loss"});
  const at::Tensor& logits = out.at("logits");
  r.metrics["loss"] = out.count("loss") ? out.at("loss").item<double>() : 0.0;
  auto pred_t = logits.argmax(1).contiguous();
  std::vector<int64_t> pred(pred_t.data_ptr<int64_t>(), pred_t.data_ptr<int64_t>() + pred_t.numel()), gold;
  for (auto& e : ds.examples) gold.push_back(static_cast<int64_t>(e.at("labels").value(0)));
  auto rep = metrics::classification_report(pred, gold, labels().size(), labels().names);
  std::vector<int64_t> counts(size_t(labels().size()), 0);
  for (int64_t g : gold) ++counts[size_t(g)];
  auto best = std::max_element(counts.begin(), counts.end());
  const double majority = double(*best) / double(gold.size());
  std::ostringstream text;
  if (labels().size() == 2) {
    auto p = torch::softmax(logits, 1).select(1, 1).to(torch::kDouble).contiguous();
    std::vector<double> score(p.data_ptr<double>(), p.data_ptr<double>() + p.numel());
    std::vector<int> g01(gold.begin(), gold.end());
    auto s = binary_scores(score, g01, threshold());
    r.metrics["accuracy"] = s.accuracy;
    r.metrics["precision"] = s.precision;
    r.metrics["recall"] = s.recall;
    r.metrics["f1"] = s.f1;
    r.metrics["auc"] = s.auc;
    const auto& v = tokenizer().vocab();
    r.metrics["overlap_auc"] =
        metrics::roc_auc(overlap_scores(pair_tokens(ds, false, v.cls_id(), v.sep_id())), g01);
    text << "eval accuracy " << fmt(s.accuracy) << " (majority-class baseline " << fmt(majority)
         << ", always '" << labels().names[size_t(best - counts.begin())] << "'), f1 " << fmt(s.f1)
         << " (of '" << labels().names[1] << "'), auc " << fmt(s.auc) << " (token-overlap baseline "
         << fmt(r.metrics["overlap_auc"]) << ")\n";
  } else {
    r.metrics["accuracy"] = rep.accuracy;
    r.metrics["macro_f1"] = rep.macro_f1;
    r.metrics["micro_f1"] = rep.micro_f1;
    text << "eval accuracy " << fmt(rep.accuracy) << " (majority-class baseline " << fmt(majority)
         << "), macro_f1 " << fmt(rep.macro_f1) << ", micro_f1 " << fmt(rep.micro_f1) << "\n";
  }
  text << metrics::format_classification_report(rep);
  r.text = text.str();
  return r;
}

PairEmbeddings TextMatchApp::embed_pairs(const data::Dataset& ds, const std::vector<int64_t>& rows) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> as, bs;
  PairEmbeddings p;
  const auto step = static_cast<size_t>(options().eval_batch_size);
  for (size_t start = 0; start < rows.size(); start += step) {
    std::vector<int64_t> idx(rows.begin() + long(start),
                             rows.begin() + long(std::min(rows.size(), start + step)));
    data::Batch batch = data::make_batch(ds, idx);
    at::Tensor e = model().forward(model_inputs(batch)).at("sentence_embedding").to(torch::kFloat);
    const int64_t B = batch.size;
    as.push_back(e.narrow(0, 0, B));
    bs.push_back(e.narrow(0, B, B));
    p.loss += pair_loss(as.back(), bs.back(), batch.tensors.at("labels")).item<double>() * double(B);
  }
  namespace F = torch::nn::functional;
  auto norm = F::NormalizeFuncOptions().p(2).dim(1).eps(1e-12);
  p.a = F::normalize(torch::cat(as), norm).contiguous();
  p.b = F::normalize(torch::cat(bs), norm).contiguous();
  p.loss /= double(std::max<size_t>(1, rows.size()));
  return p;
}

double TextMatchApp::fit_threshold(const data::Dataset& train) {
  // The weights' in-place version counters (an optimizer step or a load bumps them): unchanged weights keep
  // their threshold — an evaluation, the best-model save and the checkpoint of one step fit it once.
  int64_t weights_version = 0;
  for (const auto& p : model().module().parameters()) weights_version += p._version();
  if (weights_version == fitted_version_) return configured_.threshold;
  std::vector<int64_t> rows;
  const size_t n = train.examples.size(), stride = (n + kThresholdSample - 1) / kThresholdSample;
  for (size_t i = 0; i < n; i += std::max<size_t>(1, stride)) rows.push_back(int64_t(i));
  const bool was_training = model().module().is_training();
  model().module().eval();
  PairEmbeddings p = embed_pairs(train, rows);
  if (was_training) model().module().train();
  configured_.threshold = best_accuracy_threshold(match_probabilities(p), gold_labels(train, rows));
  fitted_version_ = weights_version;
  logger().info("match threshold ", fmt(configured_.threshold), " (cosine ",
                fmt(2 * configured_.threshold - 1), "): the best accuracy on ", rows.size(),
                " training pairs");
  return configured_.threshold;
}

double TextMatchApp::threshold() const {
  if (threshold_ >= 0) return threshold_;
  return towers().two_tower ? towers().threshold : 0.5;
}

app::EvalReport TextMatchApp::evaluate_two_tower(const data::Dataset& ds) {
  if (mode_ == Mode::train && threshold_ < 0 && training_set()) fit_threshold(*training_set());
  const auto rows = all_rows(ds);
  PairEmbeddings p = embed_pairs(ds, rows);
  const at::Tensor &a = p.a, &b = p.b;
  std::vector<int> gold = gold_labels(ds, rows);
  auto s = binary_scores(match_probabilities(p), gold, threshold());
  const int64_t dim = a.size(1);
  std::vector<float> av(a.data_ptr<float>(), a.data_ptr<float>() + a.numel()),
      bv(b.data_ptr<float>(), b.data_ptr<float>() + b.numel());
  auto rr = in_batch_recall(av, bv, dim, gold, options().eval_batch_size, kRecallAt);
  // The lexical-overlap baseline, measured the same way: token-set Jaccard instead of the cosine.
  const auto& v = tokenizer().vocab();
  const PairTokens toks = pair_tokens(ds, true, v.cls_id(), v.sep_id());
  const double overlap_auc = metrics::roc_auc(overlap_scores(toks), gold);
  auto ro =
      in_batch_recall([&](int64_t i, int64_t j) { return set_jaccard(toks.a[size_t(i)], toks.b[size_t(j)]); },
                      gold, options().eval_batch_size, kRecallAt);

  app::EvalReport r;
  r.metrics["loss"] = p.loss;
  r.metrics["accuracy"] = s.accuracy;
  r.metrics["precision"] = s.precision;
  r.metrics["recall"] = s.recall;
  r.metrics["f1"] = s.f1;
  r.metrics["auc"] = s.auc;
  r.metrics["overlap_auc"] = overlap_auc;
  for (auto& [k, x] : rr.recall) r.metrics["recall@" + std::to_string(k)] = x;
  for (auto& [k, x] : ro.recall) r.metrics["overlap_recall@" + std::to_string(k)] = x;
  const double majority = std::max(s.positive_rate, 1.0 - s.positive_rate);
  std::ostringstream text;
  text << "eval auc " << fmt(s.auc) << " (token-overlap baseline " << fmt(overlap_auc)
       << ", random 0.5), accuracy " << fmt(s.accuracy) << " at probability " << fmt(threshold())
       << " (majority-class baseline " << fmt(majority) << "), f1 " << fmt(s.f1) << "\n"
       << "in-batch retrieval (" << rr.queries << " matching pairs, groups of " << options().eval_batch_size
       << "):";
  for (auto& [k, x] : rr.recall)
    text << " recall@" << k << " " << fmt(x) << " (overlap " << fmt(ro.recall[k]) << ", random "
         << fmt(rr.random[k]) << ")";
  text << "\n";
  r.text = text.str();
  return r;
}

std::vector<std::string> TextMatchApp::input_columns() const { return {first_, second_}; }

std::vector<OutputColumn> TextMatchApp::output_columns() const {
  std::vector<OutputColumn> cols = {
      {"predictions", "the label (two towers: the match label when (cosine + 1) / 2 >= threshold)"},
      {"probabilities",
       "the probability of each label, comma-separated (two towers: 1 - p, p with p = (cosine + 1) / 2)"}};
  if (towers().two_tower) {
    cols.push_back({"score", "the cosine of the two texts' embeddings"});
    cols.push_back({"embedding_a", "the first text's embedding as a JSON array", true});
    cols.push_back({"embedding_b", "the second text's embedding as a JSON array", true});
  } else {
    cols.push_back({"logits", "the raw scores per label as a JSON array", true});
  }
  return cols;
}

void TextMatchApp::postprocess(const TensorMap& outputs, const data::Batch& batch,
                               const std::vector<PredictItem>& items, const std::vector<std::string>& columns,
                               std::vector<std::vector<std::string>>& cells) const {
  const bool two = towers().two_tower;
  at::Tensor values, a, b, cos;  // single: logits [B, L]; two towers: embeddings [B, D] and cosines [B]
  if (two) {
    at::Tensor e = outputs.at("sentence_embedding").to(torch::kFloat);
    a = e.narrow(0, 0, batch.size).contiguous();
    b = e.narrow(0, batch.size, batch.size).contiguous();
    cos = torch::cosine_similarity(a, b, 1, 1e-12).contiguous();
  } else {
    values = outputs.at("logits").to(torch::kFloat).contiguous();
  }
  const int64_t L = two ? 2 : values.size(1), D = two ? a.size(1) : 0;
  at::Tensor probs = two ? torch::stack({(1.0 - cos) / 2.0, (cos + 1.0) / 2.0}, 1).contiguous()
                         : torch::softmax(values, 1).contiguous();
  for (size_t r = 0; r < items.size(); ++r) {
    const float* pr = probs.data_ptr<float>() + int64_t(r) * L;
    std::vector<std::string> row;
    for (const auto& col : columns) {
      if (col == "predictions") {
        const size_t k = two ? (pr[1] >= threshold() ? 1 : 0) : size_t(std::max_element(pr, pr + L) - pr);
        row.push_back(labels().names[k]);
      } else if (col == "probabilities") {
        row.push_back(app::csv_floats(pr, L));
      } else if (col == "logits") {
        row.push_back(app::json_floats(values.data_ptr<float>() + int64_t(r) * L, L));
      } else if (col == "score") {
        row.push_back(app::csv_floats(cos.data_ptr<float>() + r, 1));
      } else {
        const at::Tensor& e = col == "embedding_a" ? a : b;
        row.push_back(app::json_floats(e.data_ptr<float>() + int64_t(r) * D, D));
      }
    }
    cells.push_back(std::move(row));
  }
}

void TextMatchApp::save_extra(const std::string& dir) const {
  if (mode_ == Mode::train && towers().two_tower && threshold_ < 0 && training_set())
    const_cast<TextMatchApp*>(this)->fit_threshold(
        *training_set());  // saving is const; fitting runs the model
  const auto& t = towers();
  nlohmann::json j;
  j["two_tower"] = t.two_tower;
  j["pooling"] = t.pooling;
  j["embedding_size"] = t.embedding_size;
  j["threshold"] = threshold();
  j["loss_type"] = loss_name(loss_);
  j["margin"] = margin_;
  j["gamma"] = gamma_;
  j["temperature"] = temperature_;
  io::write_file_atomic(dir + "/text_match.json", j.dump(2) + "\n");
}

}  // namespace et::apps::text_match
