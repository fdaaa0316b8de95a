// mrc_app.h: app/machine_reading_comprehension — extractive question answering (SQuAD v1 / CMRC2018) on a
// BERT-family encoder (HF BertForQuestionAnswering): doc_stride windows of long contexts, answers re-located
// by their text, n-best span decoding, the official CMRC2018 / SQuAD EM and F1, as hooks of the SDK's
// supervised-app base (a row makes several examples: its windows).
#pragma once

#include <ethost/app/supervised_app.h>

#include <atomic>
#include <optional>

#include "mrc_metrics.h"
#include "windows.h"

namespace et::apps::mrc {

class MrcApp final : public app::SupervisedApp {
 public:
  MrcApp(const ConfigView& cfg, Context& ctx);
  void run(Mode mode) override;

 private:
  void bind_columns(const std::vector<data::Column>& columns, bool need_label,
                    const std::string& where) override;
  std::optional<data::Example> encode(const Row& row, std::string& reason, bool with_label) const override;
  data::FeatureSchema features() const override;
  void configure_model(Config& model_config) const override;
  bool has_label_set() const override { return false; }
  std::string describe_task() const override;
  app::EvalReport evaluate_on(const data::Dataset& ds) override;
  std::pair<std::string, bool> main_metric() const override { return {"f1", true}; }
  std::vector<std::string> input_columns() const override;
  std::vector<OutputColumn> output_columns() const override;
  void postprocess(const TensorMap& outputs, const data::Batch& batch, const std::vector<PredictItem>& items,
                   const std::vector<std::string>& columns,
                   std::vector<std::vector<std::string>>& cells) const override;
  void save_extra(const std::string& dir) const override;

  // The windows of a row (training: with the answer's token span in each); empty with `reason` for a bad row.
  std::vector<data::Example> windows_of(const Row& row, std::string& reason, bool with_label) const;
  // The reference answers of a labelled row: the answers column (JSON [{text}] or [text]) when the input has
  // one, else the answer column.
  std::vector<std::string> references(const Row& row) const;
  WindowOptions window_options() const;

  std::string question_col_, context_col_, id_col_, answer_col_, start_col_, answers_col_;
  size_t col_q_ = 0, col_c_ = 0;
  std::optional<size_t> col_id_, col_answer_, col_start_, col_answers_;
  int64_t max_query_length_, max_answer_length_, doc_stride_, n_best_;
  Language language_;
  Mode mode_ = Mode::predict;  // the host drives --mode predict through the Predictor, without run()
  mutable std::atomic<int64_t> relocated_{0}, query_cut_{0};
};

}  // namespace et::apps::mrc
