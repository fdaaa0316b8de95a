// supervised_app.h: the base of supervised AppZoo apps — train / evaluate / predict written once over a few
// hooks (bind columns, encode a row, metrics, postprocess). It resolves the tokenizer (a model directory's,
// or data.vocab_file), the model to fine-tune or the saved one, the label set (configured, discovered, or
// saved in label_mapping.json), runs the trainer, writes eval_results.json, and offers the Predictor
// capability that
// `--mode predict` (and serving) drive. Its keys come from services = ["supervised"].
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ethost/app.h"
#include "ethost/app/labels.h"
#include "ethost/config.h"
#include "ethost/context.h"
#include "ethost/data/dataset.h"
#include "ethost/export.h"
#include "ethost/log.h"
#include "ethost/predictor.h"
#include "ethost/text/tokenizer.h"
#include "ethost/train/trainer.h"

namespace et::app {

// The keys every supervised app reads (services = ["supervised"]; also the trainer's and the predictor's).
struct ET_API SupervisedOptions {
  std::vector<std::string> tables;  // data.tables: train mode "train[,dev...]"; evaluate/predict: the inputs
  std::string reader;               // data.reader
  int64_t sequence_length = 128;    // data.sequence_length
  std::string vocab_file;           // data.vocab_file (from scratch)
  bool do_lower_case = true;        // data.do_lower_case (with vocab_file)
  std::string label_name;           // data.label_name
  std::vector<std::string> label_values;  // data.label_enumerate_values
  std::string pretrained;                 // pretrain_model_name_or_path
  std::string checkpoint_dir;             // train.checkpoint_dir
  std::string model_name;                 // model.name
  int64_t eval_batch_size = 64;           // eval.batch_size
  std::string eval_results_file;          // eval.results_file
  static SupervisedOptions from_config(const ConfigView& root);
};

// The keys of services = ["supervised"] (without the trainer's and the predictor's, which it also brings).
ET_API const std::vector<ConfigKeySpec>& supervised_config_specs();

// An evaluation: flat metrics (eval_results.json, metrics.jsonl) and a text for the console (a per-class
// table).
struct EvalReport {
  std::map<std::string, double> metrics;
  std::string text;
};

class ET_API SupervisedApp : public App, public train::TrainTask {
 public:
  // app_name: "text_classify" (for messages and the config sources it writes).
  SupervisedApp(const ConfigView& root, Context& ctx, std::string app_name);
  ~SupervisedApp() override;
  void run(Mode mode) override;
  void* query_interface(std::string_view id) override;  // offers et::Predictor

 protected:
  // ---- hooks: what the task is
  // Positions of the columns the task reads in `columns` (need_label: train/evaluate). Throws et::ConfigError
  // naming the key; `where` says which input it is ("training", "predict").
  virtual void bind_columns(const std::vector<data::Column>& columns, bool need_label,
                            const std::string& where) = 0;
  // The example of a row (features as declared by features()), or std::nullopt with `reason` for a bad row.
  // Called from several threads at once.
  virtual std::optional<data::Example> encode(const Row& row, std::string& reason, bool with_label) const = 0;
  // The features encode() makes and how each is padded (default: FeatureSchema::bert_text(pad) + int64
  // "labels").
  virtual data::FeatureSchema features() const;
  // Task settings in the model's config (heads, problem_type, ...). The base has set model_dir, labels (when
  // the task has a label set), activation_checkpointing and, from scratch, vocab_size and pad_token_id.
  virtual void configure_model(Config& model_config) const;
  // The label set: fixed by the task (e.g. regression's {"score"}), else data.label_enumerate_values, else
  // discovered from the training rows. No label set at all: has_label_set() false.
  virtual bool has_label_set() const { return true; }
  virtual std::vector<std::string> fixed_labels() const { return {}; }
  // The labels one label cell holds, for discovery (default: the cell; multi-label apps split it).
  virtual std::vector<std::string> labels_in_cell(const std::string& cell) const;
  // "single_label_classification with 2 label(s): ..." — the task's name in that log line.
  virtual std::string describe_task() const;
  // Metrics on a labelled set (use forward_dataset()).
  virtual EvalReport evaluate_on(const data::Dataset& ds) = 0;
  // Prediction: the input columns read, the output columns, and each batch's cells.
  virtual std::vector<std::string> input_columns() const = 0;
  virtual std::vector<OutputColumn> output_columns() const = 0;
  virtual void postprocess(const TensorMap& outputs, const data::Batch& batch,
                           const std::vector<PredictItem>& items, const std::vector<std::string>& columns,
                           std::vector<std::vector<std::string>>& cells) const = 0;
  // Files the task adds to every saved model directory (beside weights, config, tokenizer, labels).
  virtual void save_extra(const std::string& dir) const;

  // ---- rows that make several examples
  // A task whose rows each make several examples (the doc_stride windows of machine reading comprehension)
  // registers its encoder in its constructor; encode() is then not called. Training and evaluation sets hold
  // every window (the windows of a row share its Example::index); prediction hands the Predictor one packed
  // example per row (data::pack_windows), collates all its windows, and postprocess() gets the outputs of
  // every window of its items in order (data::unpack_windows gives an item's windows back).
  using WindowEncodeFn =
      std::function<std::vector<data::Example>(const Row& row, std::string& reason, bool with_label)>;
  void set_window_encoder(WindowEncodeFn encode);

  // ---- services for the task
  const SupervisedOptions& options() const;
  const ConfigView& root() const;
  Context& context();
  const log::Logger& logger() const;
  const text::Tokenizer& tokenizer() const;  // once a mode has started
  const Labels& labels() const;
  // The encoded training set while train mode runs (evaluation, saving), e.g. to fit a baseline on it without
  // reading the table again; nullptr in the other modes.
  const data::Dataset* training_set() const;
  // The model directory evaluate and predict use: pretrain_model_name_or_path, else train.checkpoint_dir (not
  // checked here; the modes refuse one without config.json).
  std::string saved_model_dir() const;
  Model& model();
  // Runs the model over a dataset in eval.batch_size batches (eval mode, no autograd) and concatenates the
  // named outputs along dim 0; per-token outputs [B, T, ...] are zero-padded along dim 1 to the longest
  // batch.
  std::map<std::string, at::Tensor> forward_dataset(const data::Dataset& ds,
                                                    const std::vector<std::string>& names);
  // The configured reader over files.
  std::unique_ptr<Reader> open_reader(const std::vector<std::string>& files);

  // TrainTask: evaluate() runs evaluate_on(the dev set); save_model() writes the model directory.
  std::map<std::string, double> evaluate() final;
  void save_model(const std::string& dir) final;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace et::app
