// vectorization_app.h: app/vectorization — features of texts from a BERT-family encoder under EasyNLP's names
// (pooler_output, first_token_output, mean_pooling_output, all_hidden_outputs), and text -> text semantic
// search: --mode train embeds a corpus into a FAISS index (flat, IVF, HNSW) saved beside the model, --mode
// predict answers top-k queries.
#pragma once

#include <ethost/app/supervised_app.h>

#include <mutex>

#include "vector_index.h"

namespace et::apps::vectorization {

class VectorizationApp final : public app::SupervisedApp {
 public:
  VectorizationApp(const ConfigView& cfg, Context& ctx);
  void run(Mode mode) override;

 private:
  bool has_label_set() const override { return false; }
  void bind_columns(const std::vector<data::Column>& columns, bool need_label,
                    const std::string& where) override;
  std::optional<data::Example> encode(const Row& row, std::string& reason, bool with_label) const override;
  data::FeatureSchema features() const override;
  void configure_model(Config& model_config) const override;
  std::string describe_task() const override;
  app::EvalReport evaluate_on(const data::Dataset& ds) override;
  std::pair<std::string, bool> main_metric() const override { return {"", true}; }
  std::vector<std::string> input_columns() const override;
  std::vector<OutputColumn> output_columns() const override;
  void postprocess(const TensorMap& outputs, const data::Batch& batch, const std::vector<PredictItem>& items,
                   const std::vector<std::string>& columns,
                   std::vector<std::vector<std::string>>& cells) const override;

  // The search embedding of each text of a batch [B, D] (L2-normalised when `normalize`).
  at::Tensor search_embedding(const TensorMap& outputs, const data::Batch& batch) const;
  void build_index();
  void load_index() const;  // once, for predict's search columns
  std::string index_dir() const;

  std::string first_, id_column_, pooling_;
  bool normalize_ = true;
  bool tower_model_ = false;  // a two-tower text_match model: its text_match.json pooling and projection
  std::string tower_pooling_;
  int64_t tower_embedding_size_ = 0;
  int64_t top_k_ = 10;
  IndexSpec spec_;
  size_t col_text_ = 0, col_id_ = 0;
  bool has_id_ = false;
  // predict's search: the index and the corpus rows it holds (loaded once)
  mutable std::once_flag index_once_;
  mutable VectorIndex index_;
  mutable std::vector<std::string> corpus_ids_, corpus_texts_;
};

}  // namespace et::apps::vectorization
