// sequence_labeling_app.h: app/sequence_labeling — named-entity (and any BIO/BIOES) tagging of characters or
// words on a BERT-family encoder (HF BertForTokenClassification), from EasyNLP/CoNLL tag columns or CLUENER
// spans, scored with conlleval's entity-level rules, as hooks of the SDK's supervised-app base.
#pragma once

#include <ethost/app/supervised_app.h>

#include <map>
#include <mutex>
#include <optional>

#include "tags.h"

namespace et::apps::sequence_labeling {

enum class LabelFormat { tags, spans };

class SequenceLabelingApp final : public app::SupervisedApp {
 public:
  SequenceLabelingApp(const ConfigView& cfg, Context& ctx);
  void run(Mode mode) override;

 private:
  void bind_columns(const std::vector<data::Column>& columns, bool need_label,
                    const std::string& where) override;
  std::optional<data::Example> encode(const Row& row, std::string& reason, bool with_label) const override;
  data::FeatureSchema features() const override;
  void configure_model(Config& model_config) const override;
  std::vector<std::string> labels_in_cell(const std::string& cell) const override;
  void save_extra(const std::string& dir) const override;
  std::string describe_task() const override;
  app::EvalReport evaluate_on(const data::Dataset& ds) override;
  std::pair<std::string, bool> main_metric() const override { return {"f1", true}; }
  std::vector<std::string> input_columns() const override { return {first_}; }
  std::vector<OutputColumn> output_columns() const override;
  void postprocess(const TensorMap& outputs, const data::Batch& batch, const std::vector<PredictItem>& items,
                   const std::vector<std::string>& columns,
                   std::vector<std::vector<std::string>>& cells) const override;

  // The words of a text cell (tags format: space-separated; spans format: its characters); "" or the reason.
  std::string words_of(const std::string& text, std::vector<std::string>& words) const;
  // The tags of a row's label cell for its words; "" or the reason the cell is bad.
  std::string tags_of(const std::vector<std::string>& words, const std::string& cell,
                      std::vector<std::string>& tags) const;
  // Whether the model has the CRF head: train mode use_crf; evaluate / predict: what the saved model says
  // (sequence_labeling.json), so a model is always decoded the way it was trained.
  bool crf() const;
  // The model directory evaluate / predict use (pretrain_model_name_or_path, else train.checkpoint_dir).
  // The most frequent tag of each character in the training table (train mode: counted once on the encoded
  // training set; evaluate mode: read from the model's tag_baseline.json, written beside every saved model).
  const std::map<int32_t, int64_t>* most_frequent() const;
  // F1 of tagging every character with its most frequent training tag (std::nullopt without a table).
  std::optional<double> baseline_f1(const data::Dataset& ds);

  LabelFormat format_;
  Scheme scheme_;
  std::string first_;
  size_t col_text_ = 0, col_label_ = 0;
  bool use_crf_ = false, user_set_crf_ = false;
  Mode mode_ = Mode::predict;  // the host drives --mode predict through the Predictor, without run()
  mutable std::mutex baseline_mutex_;
  mutable std::optional<std::map<int32_t, int64_t>> most_frequent_;  // first sub-token id -> label id
};

}  // namespace et::apps::sequence_labeling
