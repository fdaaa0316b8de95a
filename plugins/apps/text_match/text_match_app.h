// text_match_app.h: app/text_match — whether two texts match, on a BERT-family encoder: a single tower (the
// pair encoded together, a classification head) or two towers (a shared siamese encoder embeds each text;
// cosine scores, in-batch and pairwise embedding losses, in-batch retrieval), as hooks of the SDK's
// supervised-app base.
#pragma once

#include <ethost/app/supervised_app.h>

namespace et::apps::text_match {

enum class Loss { softmax, cosine_margin, hinge, circle };

// How a two-tower model was built and trained: saved beside the model (text_match.json) so that evaluate
// and predict embed texts exactly as training did.
struct TowerSettings {
  bool two_tower = false;
  std::string pooling = "mean";
  int64_t embedding_size = 0;
  // Two towers: the match probability (cosine + 1) / 2 at which a pair is predicted to match — the
  // configured one, else fitted for the best accuracy on the training set when the model is saved.
  double threshold = 0.5;
};

// L2-normalised embeddings of pairs ([n, D] each) and the mean pair loss over their batches.
struct PairEmbeddings {
  at::Tensor a, b;
  double loss = 0;
};

class TextMatchApp final : public app::SupervisedApp {
 public:
  TextMatchApp(const ConfigView& cfg, Context& ctx);
  void run(Mode mode) override;

 private:
  void bind_columns(const std::vector<data::Column>& columns, bool need_label,
                    const std::string& where) override;
  std::optional<data::Example> encode(const Row& row, std::string& reason, bool with_label) const override;
  data::FeatureSchema features() const override;
  void configure_model(Config& model_config) const override;
  std::string describe_task() const override;
  app::EvalReport evaluate_on(const data::Dataset& ds) override;
  std::pair<std::string, bool> main_metric() const override;
  std::vector<std::string> input_columns() const override;
  std::vector<OutputColumn> output_columns() const override;
  void postprocess(const TensorMap& outputs, const data::Batch& batch, const std::vector<PredictItem>& items,
                   const std::vector<std::string>& columns,
                   std::vector<std::vector<std::string>>& cells) const override;
  void save_extra(const std::string& dir) const override;
  // Two towers: both texts of a batch in one forward pass (a's rows, then b's), and the embedding loss.
  TensorMap model_inputs(const data::Batch& batch) override;
  train::LossTerms loss(const TensorMap& outputs, const data::Batch& batch, const TensorMap& extras) override;

  // The tower settings in force: the saved model's in evaluate/predict, else the configured ones.
  const TowerSettings& towers() const;
  at::Tensor pair_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& labels) const;
  app::EvalReport evaluate_single(const data::Dataset& ds);
  app::EvalReport evaluate_two_tower(const data::Dataset& ds);
  PairEmbeddings embed_pairs(const data::Dataset& ds, const std::vector<int64_t>& rows);
  double fit_threshold(const data::Dataset& train);
  double threshold() const;

  int64_t fitted_version_ = -1;  // the weights' version the threshold was fitted for
  Mode mode_ = Mode::predict;    // the host drives --mode predict through the Predictor, without run()
  TowerSettings configured_;
  mutable std::optional<TowerSettings> saved_;
  Loss loss_ = Loss::softmax;
  double margin_ = 0, gamma_ = 64, temperature_ = 0.05, threshold_ = -1;  // threshold_ < 0: not configured
  std::string first_, second_;
  size_t col_a_ = 0, col_b_ = 0, col_label_ = 0;
};

}  // namespace et::apps::text_match
