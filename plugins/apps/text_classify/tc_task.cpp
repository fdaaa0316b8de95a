// tc_task.cpp: encoding rows, feeding the model, computing metrics, saving the model directory.
#include "tc_task.h"

#include <ethost/error.h>
#include <ethost/io/state_dict.h>
#include <ethost/train/metrics.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace et::apps::text_classify {
namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      size_t b = cur.find_first_not_of(" \t"), e = cur.find_last_not_of(" \t");
      if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

}  // namespace

Task::Task(const Options& opts, Labels labels, text::Tokenizer tokenizer, std::string vocab_path, Model* model,
           std::string resolved_config_toml)
    : opts_(opts),
      labels_(std::move(labels)),
      tok_(std::move(tokenizer)),
      vocab_path_(std::move(vocab_path)),
      model_(model),
      config_toml_(std::move(resolved_config_toml)) {}

void Task::bind_columns(const std::vector<data::Column>& cols, bool need_label, const std::string& where) {
  col_a_ = data::column_index(cols, opts_.first_sequence, "data.first_sequence (" + where + ")");
  has_b_ = !opts_.second_sequence.empty();
  if (has_b_) col_b_ = data::column_index(cols, opts_.second_sequence, "data.second_sequence (" + where + ")");
  has_label_ = need_label;
  if (need_label) col_label_ = data::column_index(cols, opts_.label_name, "data.label_name (" + where + ")");
}

std::optional<data::Example> Task::encode(const Row& row, std::string& reason, bool with_label) const {
  data::Example ex;
  const std::string& a = row.values[col_a_];
  // An empty second text (a single text in a pair table) is encoded as a single text.
  const bool pair = has_b_ && !row.values[col_b_].empty();
  text::Encoding enc = pair ? tok_.encode(a, row.values[col_b_]) : tok_.encode(a);
  if (enc.invalid_utf8) {
    reason = "text is not valid UTF-8";
    return std::nullopt;
  }
  ex.input_ids.assign(enc.input_ids.begin(), enc.input_ids.end());
  ex.token_type_ids.assign(enc.token_type_ids.begin(), enc.token_type_ids.end());
  if (!with_label) return ex;
  const std::string& y = row.values[col_label_];
  switch (opts_.problem) {
    case Problem::single_label: {
      int64_t id = labels_.id(y);
      if (id < 0) {
        reason = "label '" + y + "' is not one of the labels (" + labels_.list() + ")";
        return std::nullopt;
      }
      ex.labels = {id};
      break;
    }
    case Problem::multi_label: {
      ex.targets.assign(static_cast<size_t>(labels_.size()), 0.0f);
      for (auto& name : split_commas(y)) {
        int64_t id = labels_.id(name);
        if (id < 0) {
          reason = "label '" + name + "' is not one of the labels (" + labels_.list() + ")";
          return std::nullopt;
        }
        ex.targets[size_t(id)] = 1.0f;
      }
      break;
    }
    case Problem::regression: {
      char* end = nullptr;
      double v = std::strtod(y.c_str(), &end);
      if (y.empty() || *end != '\0' || !std::isfinite(v)) {
        reason = "regression label '" + y + "' is not a number";
        return std::nullopt;
      }
      ex.targets = {static_cast<float>(v)};
      break;
    }
  }
  return ex;
}

int64_t Task::pad_id() const { return tok_.vocab().pad_id(); }

TensorMap Task::model_inputs(const data::Batch& b) {
  TensorMap in = b.tensors;
  if (auto it = in.find("targets"); it != in.end()) {
    in["labels"] = it->second;
    in.erase(it);
  }
  return in;
}

std::map<std::string, double> Task::evaluate() {
  if (!eval_set_ || eval_set_->size() == 0) return {};
  return evaluate_on(*eval_set_, false).metrics;
}

std::pair<std::string, bool> Task::main_metric() const {
  switch (opts_.problem) {
    case Problem::single_label: return {"accuracy", true};
    case Problem::multi_label: return {"micro_f1", true};
    case Problem::regression: return {"mse", false};
  }
  return {"accuracy", true};
}

EvalResult Task::evaluate_on(const data::Dataset& ds, bool with_report) {
  EvalResult r;
  torch::NoGradGuard no_grad;
  data::PlanOptions po;
  po.batch_size = opts_.eval_batch_size;
  po.shuffle = false;
  std::vector<at::Tensor> logits;
  double loss_sum = 0;
  int64_t n = 0;
  for (auto& idx : data::plan_epoch(ds, po, 0)) {
    data::Batch b = data::collate(ds, idx, pad_id());
    auto out = model_->forward(model_inputs(b));
    logits.push_back(out.at("logits").to(torch::kFloat));
    if (out.count("loss")) loss_sum += out.at("loss").item<double>() * static_cast<double>(b.size);
    n += b.size;
  }
  auto all = torch::cat(logits).contiguous();
  r.metrics["loss"] = loss_sum / static_cast<double>(std::max<int64_t>(1, n));
  if (opts_.problem == Problem::single_label) {
    auto pred_t = all.argmax(1).contiguous();
    std::vector<int64_t> pred(pred_t.data_ptr<int64_t>(), pred_t.data_ptr<int64_t>() + pred_t.numel()), gold;
    for (auto& e : ds.examples) gold.push_back(e.labels.at(0));
    auto rep = metrics::classification_report(pred, gold, labels_.size(), labels_.names);
    r.metrics["accuracy"] = rep.accuracy;
    r.metrics["macro_f1"] = rep.macro_f1;
    r.metrics["micro_f1"] = rep.micro_f1;
    std::vector<int64_t> counts(size_t(labels_.size()), 0);
    for (int64_t g : gold) ++counts[size_t(g)];
    auto best = std::max_element(counts.begin(), counts.end());
    r.majority = static_cast<double>(*best) / static_cast<double>(gold.size());
    r.majority_label = labels_.names[size_t(best - counts.begin())];
    if (with_report) r.report = metrics::format_classification_report(rep);
  } else if (opts_.problem == Problem::multi_label) {
    auto probs = torch::sigmoid(all).contiguous();
    std::vector<float> p(probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel()), gold;
    for (auto& e : ds.examples)
      for (float t : e.targets) gold.push_back(t > 0.5f ? 1.0f : 0.0f);
    auto s = metrics::multilabel_scores(p, gold, labels_.size(), opts_.threshold);
    r.metrics["micro_f1"] = s.micro_f1;
    r.metrics["macro_f1"] = s.macro_f1;
    r.metrics["mean_auc"] = s.mean_auc;
    r.metrics["subset_accuracy"] = s.subset_accuracy;
  } else {
    auto v = all.view({-1}).contiguous();
    std::vector<float> pred(v.data_ptr<float>(), v.data_ptr<float>() + v.numel()), gold;
    for (auto& e : ds.examples) gold.push_back(e.targets.at(0));
    auto s = metrics::regression_scores(pred, gold);
    r.metrics["mse"] = s.mse;
    r.metrics["pearson"] = s.pearson;
    r.metrics["spearman"] = s.spearman;
  }
  return r;
}

void Task::save_model(const std::string& dir) {
  model_->save(dir);
  std::ifstream vin(vocab_path_, std::ios::binary);
  if (!vin) throw DataError("cannot read the vocabulary to save it", vocab_path_);
  std::stringstream vs;
  vs << vin.rdbuf();
  io::write_file_atomic(dir + "/vocab.txt", vs.str());
  const auto& to = tok_.options();
  nlohmann::json tc = {{"tokenizer_class", "BertTokenizer"},
                       {"do_lower_case", to.do_lower_case},
                       {"tokenize_chinese_chars", to.tokenize_chinese_chars},
                       {"strip_accents", to.strip_accents ? nlohmann::json(*to.strip_accents) : nlohmann::json(nullptr)},
                       {"model_max_length", opts_.sequence_length}};
  io::write_file_atomic(dir + "/tokenizer_config.json", tc.dump(2) + "\n");
  write_label_mapping(dir, labels_);
  io::write_file_atomic(dir + "/train_config.toml", config_toml_ + "\n");
}

}  // namespace et::apps::text_classify
