// text_classify_app.cpp: what text classification does with rows, batches and outputs — encoding, metrics,
// prediction cells; the supervised-app base does the rest.
#include "text_classify_app.h"

#include <ethost/app/predict_driver.h>
#include <ethost/app/text_features.h>
#include <ethost/error.h>
#include <ethost/text/split.h>
#include <ethost/train/metrics.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "multiple_choice.h"

namespace et::apps::text_classify {
namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4) << v;
  return os.str();
}

}  // namespace

TextClassifyApp::TextClassifyApp(const ConfigView& c, Context& ctx) : SupervisedApp(c, ctx, "text_classify") {
  bool multi = c.get_bool("multi_label"), reg = c.get_bool("regression");
  if (multi && reg)
    throw ConfigError("multi_label and regression cannot both be true", c.where("regression"));
  problem_ = multi ? Problem::multi_label : reg ? Problem::regression : Problem::single_label;
  first_ = c.get_string("data.first_sequence");
  second_ = c.get_string("data.second_sequence");
  threshold_ = c.get_double("threshold");
  candidates_ = c.get_string("candidates_column");
  placeholder_ = c.get_string("candidate_placeholder");
  if (!candidates_.empty() && problem_ != Problem::single_label)
    throw ConfigError(
        "candidates_column (multiple choice) picks one candidate per row, so it is single-label",
        c.where("candidates_column"), "unset multi_label / regression");
  if (!placeholder_.empty() && candidates_.empty())
    throw ConfigError("candidate_placeholder is set but candidates_column is not",
                      c.where("candidate_placeholder"), "name the column that lists each row's candidates");
  if (!candidates_.empty() && !second_.empty())
    throw ConfigError(
        "candidates_column pairs data.first_sequence with each candidate; data.second_sequence ('" + second_ +
            "') would be a third text",
        c.where("data.second_sequence"), "unset data.second_sequence");
}

std::string TextClassifyApp::describe_task() const {
  switch (problem_) {
    case Problem::single_label:
      return candidates_.empty() ? "single_label_classification" : "multiple_choice";
    case Problem::multi_label:
      return "multi_label_classification";
    case Problem::regression:
      return "regression";
  }
  return "";
}

void TextClassifyApp::bind_columns(const std::vector<data::Column>& cols, bool need_label,
                                   const std::string& where) {
  col_a_ = data::column_index(cols, first_, "data.first_sequence (" + where + ")");
  has_b_ = !second_.empty();
  if (has_b_) col_b_ = data::column_index(cols, second_, "data.second_sequence (" + where + ")");
  if (need_label)
    col_label_ = data::column_index(cols, options().label_name, "data.label_name (" + where + ")");
  if (!candidates_.empty())
    col_candidates_ = data::column_index(cols, candidates_, "candidates_column (" + where + ")");
}

data::FeatureSchema TextClassifyApp::features() const {
  auto s = candidates_.empty() ? data::FeatureSchema::bert_text(tokenizer().vocab().pad_id())
                               : choice_features(tokenizer().vocab().pad_id());
  if (problem_ == Problem::single_label)
    s.scalar("labels");
  else
    s.tensor("labels", data::DType::float32);  // multi-label 0/1 vector, or one regression value
  return s;
}

void TextClassifyApp::configure_model(Config& mc) const {
  if (!candidates_.empty()) {  // HF BertForMultipleChoice: one score per candidate from the pooler
    mc.set_string_list("heads", {"multiple_choice"}, "app/text_classify");
    mc.set_string("problem_type", "single_label_classification", "app/text_classify");
    return;
  }
  mc.set_string_list("heads", {"sequence_classification"}, "app/text_classify");
  mc.set_string("problem_type", describe_task(), "app/text_classify");
}

std::vector<std::string> TextClassifyApp::fixed_labels() const {
  return problem_ == Problem::regression ? std::vector<std::string>{"score"} : std::vector<std::string>{};
}

std::vector<std::string> TextClassifyApp::labels_in_cell(const std::string& cell) const {
  return problem_ == Problem::multi_label ? split_list(cell) : std::vector<std::string>{cell};
}

std::optional<data::Example> TextClassifyApp::encode(const Row& row, std::string& reason,
                                                     bool with_label) const {
  const std::string& a = row.values[col_a_];
  data::Example ex;
  if (!candidates_.empty()) {
    const auto cands = split_list(row.values[col_candidates_], ',', EmptyItems::keep);
    if (static_cast<int64_t>(cands.size()) != labels().size()) {
      reason = "column '" + candidates_ + "' lists " + std::to_string(cands.size()) + " candidates for " +
               std::to_string(labels().size()) + " labels (data.label_enumerate_values)";
      return std::nullopt;
    }
    if (!encode_choices(tokenizer(), a, cands, placeholder_, options().sequence_length, ex, reason))
      return std::nullopt;
  }
  // An empty second text (a single text in a pair table) is encoded as a single text.
  const bool pair = has_b_ && !row.values[col_b_].empty();
  if (candidates_.empty()) {
    text::Encoding enc = pair ? tokenizer().encode(a, row.values[col_b_]) : tokenizer().encode(a);
    if (enc.invalid_utf8) {
      reason = "text is not valid UTF-8";
      return std::nullopt;
    }
    app::set_bert_text(ex, enc);
  }
  if (!with_label) return ex;
  if (auto why = encode_label(row.values[col_label_], ex)) {
    reason = *why;
    return std::nullopt;
  }
  return ex;
}

// Sets the example's "labels"; returns the reason when the cell is not a valid label.
std::optional<std::string> TextClassifyApp::encode_label(const std::string& y, data::Example& ex) const {
  switch (problem_) {
    case Problem::single_label: {
      int64_t id = labels().id(y);
      if (id < 0) return "label '" + y + "' is not one of the labels (" + labels().list() + ")";
      ex.set("labels", data::Feature::scalar(id));
      return std::nullopt;
    }
    case Problem::multi_label: {
      std::vector<float> targets(static_cast<size_t>(labels().size()), 0.0f);
      for (auto& name : split_list(y)) {
        int64_t id = labels().id(name);
        if (id < 0) return "label '" + name + "' is not one of the labels (" + labels().list() + ")";
        targets[size_t(id)] = 1.0f;
      }
      ex.set("labels", data::Feature::sequence(std::move(targets)));
      return std::nullopt;
    }
    case Problem::regression: {
      char* end = nullptr;
      double v = std::strtod(y.c_str(), &end);
      if (y.empty() || *end != '\0' || !std::isfinite(v))
        return "regression label '" + y + "' is not a number";
      ex.set("labels", data::Feature::scalar(static_cast<float>(v)));
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::pair<std::string, bool> TextClassifyApp::main_metric() const {
  switch (problem_) {
    case Problem::single_label:
      return {"accuracy", true};
    case Problem::multi_label:
      return {"micro_f1", true};
    case Problem::regression:
      return {"mse", false};
  }
  return {"accuracy", true};
}

app::EvalReport TextClassifyApp::evaluate_on(const data::Dataset& ds) {
  app::EvalReport r;
  auto out = forward_dataset(ds, {"logits", "loss"});
  const at::Tensor& all = out.at("logits");
  r.metrics["loss"] = out.count("loss") ? out.at("loss").item<double>() : 0.0;
  std::ostringstream text;
  if (problem_ == Problem::single_label) {
    auto pred_t = all.argmax(1).contiguous();
    std::vector<int64_t> pred(pred_t.data_ptr<int64_t>(), pred_t.data_ptr<int64_t>() + pred_t.numel()), gold;
    for (auto& e : ds.examples) gold.push_back(static_cast<int64_t>(e.at("labels").value(0)));
    auto rep = metrics::classification_report(pred, gold, labels().size(), labels().names);
    r.metrics["accuracy"] = rep.accuracy;
    r.metrics["macro_f1"] = rep.macro_f1;
    r.metrics["micro_f1"] = rep.micro_f1;
    std::vector<int64_t> counts(size_t(labels().size()), 0);
    for (int64_t g : gold) ++counts[size_t(g)];
    auto best = std::max_element(counts.begin(), counts.end());
    double majority = static_cast<double>(*best) / static_cast<double>(gold.size());
    text << "eval accuracy " << fmt(rep.accuracy) << " (majority-class baseline " << fmt(majority)
         << ", always '" << labels().names[size_t(best - counts.begin())] << "'), macro_f1 "
         << fmt(rep.macro_f1) << "\n"
         << metrics::format_classification_report(rep);
  } else if (problem_ == Problem::multi_label) {
    auto probs = torch::sigmoid(all).contiguous();
    std::vector<float> p(probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel()), gold;
    for (auto& e : ds.examples)
      for (float t : e.at("labels").as<float>()) gold.push_back(t > 0.5f ? 1.0f : 0.0f);
    auto s = metrics::multilabel_scores(p, gold, labels().size(), threshold_);
    r.metrics["micro_f1"] = s.micro_f1;
    r.metrics["macro_f1"] = s.macro_f1;
    r.metrics["mean_auc"] = s.mean_auc;
    r.metrics["subset_accuracy"] = s.subset_accuracy;
  } else {
    auto v = all.view({-1}).contiguous();
    std::vector<float> pred(v.data_ptr<float>(), v.data_ptr<float>() + v.numel()), gold;
    for (auto& e : ds.examples) gold.push_back(static_cast<float>(e.at("labels").value(0)));
    auto s = metrics::regression_scores(pred, gold);
    r.metrics["mse"] = s.mse;
    r.metrics["pearson"] = s.pearson;
    r.metrics["spearman"] = s.spearman;
  }
  if (problem_ != Problem::single_label) {
    text << "eval";
    for (auto& [k, v] : r.metrics) text << " " << k << " " << fmt(v);
    text << "\n";
  }
  r.text = text.str();
  return r;
}

std::vector<std::string> TextClassifyApp::input_columns() const {
  if (!candidates_.empty()) return {first_, candidates_};
  return has_b_ ? std::vector<std::string>{first_, second_} : std::vector<std::string>{first_};
}

std::vector<OutputColumn> TextClassifyApp::output_columns() const {
  return {
      {"predictions",
       "the label (multi-label: the labels at or above threshold, comma-separated; regression: the value)"},
      {"probabilities", "softmax (multi-label: sigmoid) per label, comma-separated"},
      {"logits", "the raw scores per label as a JSON array", true}};
}

void TextClassifyApp::postprocess(const TensorMap& outputs, const data::Batch&,
                                  const std::vector<PredictItem>& items,
                                  const std::vector<std::string>& columns,
                                  std::vector<std::vector<std::string>>& cells) const {
  at::Tensor logits = outputs.at("logits").to(torch::kFloat).contiguous();
  const int64_t L = logits.size(1);
  at::Tensor probs = problem_ == Problem::single_label  ? torch::softmax(logits, 1)
                     : problem_ == Problem::multi_label ? torch::sigmoid(logits)
                                                        : logits;
  probs = probs.contiguous();
  for (size_t r = 0; r < items.size(); ++r) {
    const float* lg = logits.data_ptr<float>() + int64_t(r) * L;
    const float* pr = probs.data_ptr<float>() + int64_t(r) * L;
    std::vector<std::string> row;
    for (const auto& col : columns) {
      std::string cell;
      if (col == "predictions") {
        if (problem_ == Problem::single_label) {
          cell = labels().names[size_t(std::max_element(pr, pr + L) - pr)];
        } else if (problem_ == Problem::multi_label) {
          for (int64_t k = 0; k < L; ++k)
            if (pr[k] >= threshold_) cell += (cell.empty() ? "" : ",") + labels().names[size_t(k)];
        } else {
          cell = app::csv_floats(lg, 1);
        }
      } else if (col == "probabilities") {
        cell = app::csv_floats(pr, L);
      } else {
        cell = app::json_floats(lg, L);
      }
      row.push_back(std::move(cell));
    }
    cells.push_back(std::move(row));
  }
}

}  // namespace et::apps::text_classify
