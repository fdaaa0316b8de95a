// pretrain_app.h: app/pretrain (alias language_modeling) — MLM (+ NSP/SOP) pretraining from scratch or
// continued from a model, on a streamed corpus; evaluate (MLM accuracy, perplexity) and fill-mask predict.
#pragma once

#include <ethost/app.h>
#include <ethost/config.h>
#include <ethost/context.h>
#include <ethost/log.h>
#include <ethost/predictor.h>
#include <ethost/text/segmenter.h>
#include <ethost/text/tokenizer.h>
#include <ethost/train/trainer.h>

#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "stream_source.h"

namespace et::apps::pretrain {

struct PretrainOptions {
  std::vector<std::string> tables;  // train: train[,dev...]; evaluate: held-out files; predict: inputs
  std::string format;
  std::vector<std::string> text_fields;
  std::vector<std::string> exclude_tables;
  int64_t sequence_length = 128;
  std::string vocab_file;
  bool do_lower_case = true;
  bool cross_documents = true;
  bool fill_sequences = false;
  bool interleave_files = true;
  bool split_sentences = true;
  bool strict = false;
  std::string first_sequence;  // predict: the column with [MASK] texts
  PairTask pair_task = PairTask::none;
  data::MlmMaskingOptions mlm;
  bool dynamic_masking = true;
  std::string jieba_dict;
  std::string pretrained, checkpoint_dir, model_name, eval_results_file;
  int64_t eval_batch_size = 64, eval_max_sequences = 0, top_k = 5, seed = 42;
  static PretrainOptions from_config(const ConfigView& c);
};

class PretrainApp final : public App, public train::TrainTask, public Predictor {
 public:
  PretrainApp(const ConfigView& root, Context& ctx);
  ~PretrainApp() override;
  void run(Mode mode) override;
  void* query_interface(std::string_view id) override;

  // TrainTask
  TensorMap model_inputs(const data::Batch& batch) override;
  train::LossTerms loss(const TensorMap& outputs, const data::Batch& batch, const TensorMap& extras) override;
  std::map<std::string, double> evaluate() override;
  std::pair<std::string, bool> main_metric() const override { return {"mlm_accuracy", true}; }
  void save_model(const std::string& dir) override;

  // Predictor (fill-mask)
  void prepare_predict() override;
  std::vector<std::string> input_columns() const override { return {o_.first_sequence}; }
  std::vector<OutputColumn> output_columns() const override;
  void bind_columns(const std::vector<data::Column>& columns) override;
  std::optional<data::Example> encode(const Row& row, std::string& reason) const override;
  data::Batch collate(const std::vector<const data::Example*>& examples) const override;
  TensorMap predict_batch(const data::Batch& batch) override;
  void postprocess(const TensorMap& outputs, const data::Batch& batch, const std::vector<PredictItem>& items,
                   const std::vector<std::string>& columns,
                   std::vector<std::vector<std::string>>& cells) const override;

 private:
  void train();
  void run_evaluate();
  void setup_tokenizer(const std::string& model_dir);
  void make_model(const std::string& model_dir, bool pair_head);
  CorpusOptions corpus_options(std::vector<std::string> files) const;
  PackOptions pack_options() const;
  const text::Segmenter* segmenter();
  std::map<std::string, double> evaluate_files(const std::vector<std::string>& files);

  ConfigView root_;
  Context& ctx_;
  PretrainOptions o_;
  log::Logger log_;
  std::optional<text::Tokenizer> tok_;
  std::optional<text::Segmenter> seg_;
  std::unique_ptr<Model> model_;
  MaskSpec spec_;
  std::shared_ptr<const std::unordered_set<std::string>> exclude_;
  std::vector<std::string> dev_files_;
  size_t predict_col_ = 0;
};

}  // namespace et::apps::pretrain
