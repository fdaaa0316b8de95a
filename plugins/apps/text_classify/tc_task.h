// tc_task.h: what text classification does with rows, batches and outputs — encoding, model inputs, metrics,
// and the model directory it saves (shared by train, evaluate and predict).
#pragma once

#include <ethost/context.h>
#include <ethost/data/batcher.h>
#include <ethost/text/tokenizer.h>
#include <ethost/train/trainer.h>

#include <map>
#include <optional>
#include <string>

#include "tc_labels.h"
#include "tc_options.h"

namespace et::apps::text_classify {

struct EvalResult {
  std::map<std::string, double> metrics;
  std::string report;         // per-class table (single-label)
  double majority = 0;        // single-label: accuracy of always predicting the most frequent gold label
  std::string majority_label;
};

class Task final : public train::TrainTask {
 public:
  Task(const Options& opts, Labels labels, text::Tokenizer tokenizer, std::string vocab_path, Model* model,
       std::string resolved_config_toml);

  // Column positions for a reader's schema. need_label: train/evaluate.
  void bind_columns(const std::vector<data::Column>& columns, bool need_label, const std::string& where);
  std::optional<data::Example> encode(const Row& row, std::string& reason, bool with_label) const;

  TensorMap model_inputs(const data::Batch& batch) override;
  std::map<std::string, double> evaluate() override;
  std::pair<std::string, bool> main_metric() const override;
  void save_model(const std::string& dir) override;

  EvalResult evaluate_on(const data::Dataset& ds, bool with_report);
  void set_eval_set(const data::Dataset* ds) { eval_set_ = ds; }
  void set_model(Model* m) { model_ = m; }
  int64_t pad_id() const;
  const Labels& labels() const { return labels_; }
  const Options& options() const { return opts_; }
  const text::Tokenizer& tokenizer() const { return tok_; }

 private:
  Options opts_;
  Labels labels_;
  text::Tokenizer tok_;
  std::string vocab_path_;
  Model* model_;
  std::string config_toml_;
  const data::Dataset* eval_set_ = nullptr;
  size_t col_a_ = 0, col_b_ = 0, col_label_ = 0;
  bool has_b_ = false, has_label_ = false;
};

}  // namespace et::apps::text_classify
