// distill.h (SDK-private): knowledge distillation for every supervised app — the [distill] keys, the teacher
// as a forward hook, the student initialised from the teacher's layers, and the KD loss around the task's
// loss.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ethost/config.h"
#include "ethost/log.h"
#include "ethost/model.h"
#include "ethost/train/trainer.h"

namespace torch::nn {
class Module;
}

namespace et::app {

struct DistillOptions {
  bool enabled = false;            // distill.enable_distillation
  std::string type;                // distill.type: vanilla_kd | intermediate_kd
  std::string teacher;             // distill.teacher: model directory (in-process logits, student init)
  std::string logits_column;       // distill.logits_column: teacher logits read from this column
  double temperature = 5.0;        // distill.temperature
  double alpha = 0.2;              // distill.alpha
  double hidden_weight = 1.0;      // distill.hidden_weight (intermediate_kd)
  double attention_weight = 1.0;   // distill.attention_weight (intermediate_kd)
  double embedding_weight = 1.0;   // distill.embedding_weight (intermediate_kd)
  std::vector<int64_t> layer_map;  // distill.layer_map (1-based teacher layers), empty: uniform
  int64_t student_layers = 0;      // distill.student_layers (0: the [model] / pretrained student)
  std::string student_init;        // distill.student_init: every_k | first_k
  std::vector<std::string> transfer_tables;  // distill.transfer_tables: unlabeled rows, KD term only
  std::string transfer_input_schema;         // distill.transfer_input_schema
  bool intermediate() const { return type == "intermediate_kd"; }
  bool teacher_in_process() const { return enabled && (logits_column.empty() || intermediate()); }
  // Reads and checks the keys (a ConfigError names the key).
  static DistillOptions from_config(const ConfigView& root);
};

const std::vector<ConfigKeySpec>& distill_config_specs();

// The encoder's depth and width, read from a BERT-family module's parameter names and shapes.
struct EncoderShape {
  int64_t layers = 0;
  int64_t hidden = 0;
};
EncoderShape encoder_shape(const torch::nn::Module& m);

// The 0-based teacher layer each student layer is initialised from: first_k (0, 1, ...) or every_k (0, k, 2k,
// ..., k = teacher / student layers, DistilBERT's choice).
std::vector<int64_t> init_layer_choice(const std::string& how, int64_t student_layers,
                                       int64_t teacher_layers);

// Copies the teacher's tensors into the student by name — encoder layer j from teacher layer from[j], every
// other tensor (embeddings, pooler, task heads) from the same name. Throws et::DataError on a shape mismatch.
// Returns how many tensors were copied.
int64_t init_student_from_teacher(torch::nn::Module& student, const torch::nn::Module& teacher,
                                  const std::vector<int64_t>& from);

// The TrainTask the trainer sees when distilling: the app's task with the KD loss around its own, and (with a
// teacher in-process) the ForwardHook that runs the teacher.
class DistillTask final : public train::TrainTask, public train::ForwardHook {
 public:
  // teacher: null when the logits come from the column. Registers the projections (student width != the
  // teacher's) on the student module, so the optimizer trains them; they are never saved with the model.
  DistillTask(train::TrainTask& task, Model& student, Model* teacher, DistillOptions options,
              const log::Logger& log);
  ~DistillTask() override;

  TensorMap model_inputs(const data::Batch& batch) override;
  train::LossTerms loss(const TensorMap& outputs, const data::Batch& batch, const TensorMap& extras) override;
  std::map<std::string, double> evaluate() override;
  std::pair<std::string, bool> main_metric() const override;
  void save_model(const std::string& dir) override;
  void forward(const data::Batch& batch, const TensorMap& inputs, TensorMap& extras) override;
  // Takes the projections off the student module (before loading saved weights into it).
  void remove_projections();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace et::app
