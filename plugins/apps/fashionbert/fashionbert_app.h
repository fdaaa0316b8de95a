// fashionbert_app.h: app/fashionbert — FashionBERT pretraining (MLM + MPM + ITM with adaptive loss weights)
// on image–title pairs, cross-modal retrieval evaluation (Rank@K, ACC, AUC), and ITM scoring / top-k
// retrieval prediction.
#pragma once

#include <ethost/app.h>
#include <ethost/config.h>
#include <ethost/context.h>
#include <ethost/data/dataset.h>
#include <ethost/data/mlm_masking.h>
#include <ethost/log.h>
#include <ethost/text/tokenizer.h>
#include <ethost/train/trainer.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "features.h"
#include "pairs.h"

namespace et::apps::fashionbert {

struct FashionBertOptions {
  std::vector<std::string> tables;
  std::string train_split, eval_split;  // rows whose `split` column has this value ("" = all)
  int64_t text_length = 24;
  std::string vocab_file;
  bool do_lower_case = true, strict = false;
  std::string feature_cache;
  EncoderOptions enc;
  double negative_rate = 0.5, same_subcategory_rate = 0.5;
  data::MlmMaskingOptions mlm;
  double mpm_probability = 0.1;
  std::string weighting = "adaptive";
  std::array<double, 3> fixed_weights{1.0, 1.0, 1.0};  // mlm, itm, mpm
  int64_t num_negatives = 100, max_queries = 0, max_queries_in_training = 100, eval_batch_size = 128,
          eval_seed = 42;
  std::string negative_policy = "category", ablation = "none", eval_results_file;
  std::string retrieval = "none";
  int64_t top_k = 10;
  std::string pretrained, checkpoint_dir, model_name;
  int64_t seed = 42;
  static FashionBertOptions from_config(const ConfigView& c);
};

// One table's usable pairs: the rows with a readable title and image, their tokens and features.
struct PairSet {
  PairTable table;
  FeatureStore features;
  std::vector<int64_t> rows;                // table rows in use
  std::vector<std::vector<int64_t>> ids;    // per used row: title token ids ([CLS] ... [SEP])
  std::vector<std::vector<int32_t>> words;  // per used row: whole-word ids for MLM
  std::vector<std::string> sub, master;     // per used row
  std::unordered_map<std::string, std::vector<int64_t>> by_sub;  // subCategory -> its items, in order
  int64_t size() const { return static_cast<int64_t>(rows.size()); }
};

class FashionBertApp final : public App, public train::TrainTask {
 public:
  FashionBertApp(const ConfigView& root, Context& ctx);
  ~FashionBertApp() override;
  void run(Mode mode) override;

  // TrainTask
  train::LossTerms loss(const TensorMap& outputs, const data::Batch& batch, const TensorMap& extras) override;
  std::map<std::string, double> evaluate() override;
  std::pair<std::string, bool> main_metric() const override { return {"mean_rank@10", true}; }
  void save_model(const std::string& dir) override;

  // The pieces, public for tests.
  PairSet load_pairs(const std::string& path, const std::string& split);
  data::Batch training_batch(const PairSet& s, const std::vector<int64_t>& positions, int64_t epoch) const;
  // p(match) for (image position, text position) pairs of `s`, in order.
  // With `logits`, the ITM logits [match, no match] of each pair are appended to it.
  std::vector<float> score_pairs(const PairSet& s, const std::vector<std::pair<int64_t, int64_t>>& pairs,
                                 std::vector<float>* logits = nullptr);
  std::map<std::string, double> retrieval_metrics(const PairSet& s, int64_t max_queries);

 private:
  void train();
  void run_evaluate();
  void run_predict();
  void setup_tokenizer(const std::string& model_dir);
  void make_model(const std::string& model_dir);
  PairSet open_saved_model(std::string& dir);
  void read_saved_image_settings(const std::string& dir);
  std::string cache_dir() const;

  ConfigView root_;
  Context& ctx_;
  FashionBertOptions o_;
  log::Logger log_;
  std::optional<text::Tokenizer> tok_;
  data::MaskVocab mask_vocab_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<PairSet> dev_;
};

}  // namespace et::apps::fashionbert
