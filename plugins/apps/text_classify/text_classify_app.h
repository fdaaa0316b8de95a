// text_classify_app.h: app/text_classify — single-label, multi-label and regression classification of texts
// or text pairs on a BERT-family encoder, as hooks of the SDK's supervised-app base.
#pragma once

#include <ethost/app/supervised_app.h>

namespace et::apps::text_classify {

enum class Problem { single_label, multi_label, regression };

class TextClassifyApp final : public app::SupervisedApp {
 public:
  TextClassifyApp(const ConfigView& cfg, Context& ctx);

 private:
  void bind_columns(const std::vector<data::Column>& columns, bool need_label,
                    const std::string& where) override;
  std::optional<data::Example> encode(const Row& row, std::string& reason, bool with_label) const override;
  data::FeatureSchema features() const override;
  void configure_model(Config& model_config) const override;
  std::vector<std::string> fixed_labels() const override;
  std::vector<std::string> labels_in_cell(const std::string& cell) const override;
  std::string describe_task() const override;
  app::EvalReport evaluate_on(const data::Dataset& ds) override;
  std::pair<std::string, bool> main_metric() const override;
  std::vector<std::string> input_columns() const override;
  std::vector<OutputColumn> output_columns() const override;
  void postprocess(const TensorMap& outputs, const data::Batch& batch, const std::vector<PredictItem>& items,
                   const std::vector<std::string>& columns,
                   std::vector<std::vector<std::string>>& cells) const override;

  std::optional<std::string> encode_label(const std::string& cell, data::Example& ex) const;

  Problem problem_;
  std::string first_, second_;
  std::string candidates_, placeholder_;  // candidates_column, candidate_placeholder (multiple choice)
  double threshold_;
  size_t col_a_ = 0, col_b_ = 0, col_label_ = 0, col_candidates_ = 0;
  bool has_b_ = false;
};

}  // namespace et::apps::text_classify
