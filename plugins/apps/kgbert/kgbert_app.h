// kgbert_app.h: app/kgbert — KGBERT pretraining on sentence–SPO corpora (DuIE layout): MLM with joint
// sentence–SPO masking, mention detection (BIO), SPO margin ranking and the knowledge-gain hinge; evaluation
// on the held-out sentences (mention_f1 beside the trie baseline, spo_rank_accuracy beside chance,
// mlm_accuracy with and without the knowledge); predict: the mentions the model finds.
#pragma once

#include <ethost/app.h>
#include <ethost/config.h>
#include <ethost/context.h>
#include <ethost/data/dataset.h>
#include <ethost/data/mlm_masking.h>
#include <ethost/kg/knowledge_inputs.h>
#include <ethost/kg/spo_corpus.h>
#include <ethost/log.h>
#include <ethost/predictor.h>
#include <ethost/text/segmenter.h>
#include <ethost/text/tokenizer.h>
#include <ethost/train/trainer.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "samples.h"

namespace et::apps::kgbert {

struct KgBertOptions {
  std::vector<std::string> tables, kg_files;
  double heldout_fraction = 0.1;
  std::string eval_split = "heldout";  // heldout | all
  int64_t sequence_length = 128, max_field_tokens = 12;
  bool strict = false;
  std::string jieba_dict;
  data::MlmMaskingOptions mlm;
  double entity_mask_probability = 0.5;
  double hard_negative_fraction = 0.5, margin = 1.0, gain_margin = 0.1;
  std::array<double, 4> weights{1.0, 1.0, 1.0, 0.1};  // mlm, mention, spo, gain
  int64_t eval_negatives = 4, eval_max_facts = 0, eval_max_facts_in_training = 300, eval_batch_size = 32,
          eval_seed = 42;
  std::string eval_results_file, first_sequence = "text";
  std::string pretrained, checkpoint_dir, model_name;
  kg::SubgraphOptions subgraph;
  int64_t min_chars = 2;
  int64_t seed = 42;
  static KgBertOptions from_config(const ConfigView& c);
};

// Sentences ready for training or evaluation, with the graph they are looked up in.
struct Corpus {
  std::vector<kg::SpoSentence> sentences;          // owned
  std::vector<SentenceSample> samples;             // one per sentence with tokens
  std::vector<std::pair<int64_t, int64_t>> facts;  // (sample, fact index) pairs
};

class KgBertApp final : public App, public train::TrainTask, public Predictor {
 public:
  KgBertApp(const ConfigView& root, Context& ctx);
  ~KgBertApp() override;
  void run(Mode mode) override;
  void* query_interface(std::string_view id) override;

  // Predictor: the mentions the model's BIO head finds, the trie's, and the subgraph's triples.
  void prepare_predict() override;
  std::vector<std::string> input_columns() const override { return {o_.first_sequence}; }
  std::vector<OutputColumn> output_columns() const override;
  void bind_columns(const std::vector<data::Column>& columns) override;
  std::optional<data::Example> encode(const et::Row& row, std::string& reason) const override;
  data::Batch collate(const std::vector<const data::Example*>& examples) const override;
  TensorMap predict_batch(const data::Batch& batch) override;
  void postprocess(const TensorMap& outputs, const data::Batch& batch, const std::vector<PredictItem>& items,
                   const std::vector<std::string>& columns,
                   std::vector<std::vector<std::string>>& cells) const override;

  // TrainTask
  train::LossTerms loss(const TensorMap& outputs, const data::Batch& batch, const TensorMap& extras) override;
  std::map<std::string, double> evaluate() override;
  std::pair<std::string, bool> main_metric() const override { return {"spo_rank_accuracy", true}; }
  void save_model(const std::string& dir) override;

  // The pieces, public for tests.
  // One training batch for facts `idx` of `c`: rows [0,B) masked joint positives (MLM, knowledge gain),
  // [B,2B) sentences (mentions), [2B,3B) clean positives and [3B,4B) clean negatives (SPO ranking).
  data::Batch training_batch(const Corpus& c, const std::vector<int64_t>& idx, int64_t epoch) const;
  std::map<std::string, double> metrics(const Corpus& c, int64_t max_facts, bool knowledge);
  void mention_metrics(const Corpus& c, const std::vector<int64_t>& samples, bool knowledge,
                       std::map<std::string, double>& res);

 private:
  void train();
  void run_evaluate();
  void setup(const std::string& model_dir);
  // evaluate / predict: the trained model of train.checkpoint_dir when it holds one, else
  // pretrain_model_name_or_path.
  std::string model_in_use() const;
  // kg_ from the graph a saved KGBERT keeps (config.json "kg_files", relative to `dir`).
  void load_saved_graph(const std::string& dir);
  void make_model(const std::string& model_dir, const std::string& kg_file);
  Corpus load(const std::vector<std::string>& files, bool heldout_side, bool all);
  data::Batch rows_batch(const std::vector<InputRow>& rows,
                         const std::vector<const kg::SpoSentence*>& sources) const;

  ConfigView root_;
  Context& ctx_;
  KgBertOptions o_;
  log::Logger log_;
  std::optional<text::Tokenizer> tok_;
  std::optional<text::Segmenter> seg_;
  data::MaskVocab mask_vocab_;
  std::unique_ptr<kg::KnowledgeGraph> kg_;
  std::unique_ptr<kg::NegativeSampler> neg_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Corpus> dev_;
  std::size_t predict_col_ = 0;
};

// Distant supervision (facts from `distant_kg` for sentences without any, counted in *distant), then the
// samples and the fact list of `c`.
void prepare_corpus(Corpus& c, const text::Tokenizer& tok, const text::Segmenter* seg, int64_t max_tokens,
                    const kg::KnowledgeGraph* distant_kg = nullptr, std::size_t* distant = nullptr);
std::string fmt(double v, int digits = 4);

}  // namespace et::apps::kgbert
