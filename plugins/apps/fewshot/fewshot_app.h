// fewshot_app.h: app/fewshot — PET few-shot classification on a BERT-family MLM: a pattern turns a row into
// a cloze with a [MASK] slot, verbalizers map each label to a word, and the label is the word the MLM head
// scores best (Fuzzy-PET: several words per label, probabilities averaged over the sets; P-tuning: <pseudo>
// pattern items are trainable prompt tokens), as hooks of the SDK's supervised-app base.
#pragma once

#include <ethost/app/supervised_app.h>
#include <ethost/text/tokenizer.h>

#include <memory>

#include "auxiliary_mlm.h"
#include "pattern.h"
#include "scoring.h"

namespace et::apps::fewshot {

class FewshotApp final : public app::SupervisedApp {
 public:
  FewshotApp(const ConfigView& cfg, Context& ctx);
  void run(Mode mode) override;

 private:
  void bind_columns(const std::vector<data::Column>& columns, bool need_label,
                    const std::string& where) override;
  std::optional<data::Example> encode(const Row& row, std::string& reason, bool with_label) const override;
  data::FeatureSchema features() const override;
  void configure_model(Config& model_config) const override;
  std::string describe_task() const override;
  app::EvalReport evaluate_on(const data::Dataset& ds) override;
  std::pair<std::string, bool> main_metric() const override { return {"accuracy", true}; }
  std::vector<std::string> input_columns() const override;
  std::vector<OutputColumn> output_columns() const override;
  void postprocess(const TensorMap& outputs, const data::Batch& batch, const std::vector<PredictItem>& items,
                   const std::vector<std::string>& columns,
                   std::vector<std::vector<std::string>>& cells) const override;
  void save_extra(const std::string& dir) const override;
  TensorMap model_inputs(const data::Batch& batch) override;
  train::LossTerms loss(const TensorMap& outputs, const data::Batch& batch, const TensorMap& extras) override;

  // A <pseudo> item's prompt token ids ([unused1]...; refuses a vocabulary without enough of them).
  std::vector<int64_t> prompt_ids(const PatternItem& item) const;
  // The verbalizer table once the tokenizer and the labels are known (refuses unknown label words).
  void build_verbalizers();
  // Per-label scores [B, sets, labels] of a batch's forward: the verbalizer table's, or the row's own
  // candidates' (candidates_column).
  at::Tensor scores(const TensorMap& outputs, const TensorMap& batch) const;
  // The cloze's token ids and mask positions of a row (empty with `reason` set for a bad row).
  bool cloze(const Row& row, text::Encoding& enc, std::vector<int64_t>& mask_pos, std::string& reason) const;
  // Sets candidates_column's per-row candidate ids and weights; false with `reason` for a bad row.
  bool encode_candidates(const Row& row, data::Example& ex, std::string& reason) const;
  // Per-label probabilities [N, L] of a dataset, in eval.batch_size batches.
  at::Tensor dataset_probabilities(const data::Dataset& ds);
  // The auxiliary MLM's unlabeled sequences (auxiliary_mlm.*), read at the first training loss.
  std::unique_ptr<AuxiliaryMlm> make_auxiliary_mlm();
  // Self-training generations (fewshot_self_train.cpp), when self_training.generations > 0.
  void self_train();
  struct SelfTraining;  // their shared state (fewshot_self_train.cpp)
  // Per-label probabilities [rows x labels] of rows with the saved model (the Predictor path); rows that
  // cannot be encoded get zeros.
  std::vector<float> label_rows(const std::vector<data::Column>& columns, const std::vector<Row>& rows);

  std::string pattern_spec_, label_desc_, type_;
  std::string candidates_, placeholder_;  // candidates_column, candidate_placeholder
  int64_t candidate_tokens_ = 4;
  Pooling pooling_ = Pooling::words;  // fuzzy_pooling
  size_t col_candidates_ = 0;
  Pattern pattern_;
  std::vector<size_t> item_col_;                   // per pattern item: its column's position (columns)
  std::vector<std::vector<int64_t>> literal_ids_;  // per pattern item: a literal's (or prompt's) token ids
  VerbalizerTable table_;
  size_t col_label_ = 0;
  double aux_weight_ = 0;  // auxiliary_mlm.weight (0: off)
  int64_t aux_batch_ = 0;  // auxiliary_mlm.batch_size (0: the micro-batch's row count)
  std::unique_ptr<AuxiliaryMlm> aux_;
};

}  // namespace et::apps::fewshot
