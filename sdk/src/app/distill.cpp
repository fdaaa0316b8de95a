// distill.cpp: knowledge distillation of the supervised-app base — [distill] keys, student initialisation
// from the teacher's layers, the teacher hook and the vanilla / intermediate-layer KD loss (distill.h).
#include "distill.h"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "ethost/error.h"
#include "ethost/nn/distill_losses.h"
#include "ethost/services.h"

namespace et::app {
namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// "bert.encoder.layer.3.attention..." -> 3 (and the text around it); -1 when the name is not a layer's.
int64_t layer_index(const std::string& name, std::string* before = nullptr, std::string* after = nullptr) {
  const std::string key = "encoder.layer.";
  size_t p = name.find(key);
  if (p == std::string::npos) return -1;
  size_t b = p + key.size(), e = name.find('.', b);
  if (e == std::string::npos || e == b) return -1;
  const std::string digits = name.substr(b, e - b);
  if (!std::all_of(digits.begin(), digits.end(), ::isdigit)) return -1;
  if (before) *before = name.substr(0, b);
  if (after) *after = name.substr(e);
  return std::stoll(digits);
}

std::map<std::string, at::Tensor> tensors_of(const torch::nn::Module& m) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : m.named_parameters()) out[p.key()] = p.value();
  for (const auto& b : m.named_buffers()) out[b.key()] = b.value();
  return out;
}

// The logits distillation matches: a classifier's [B, C], else a tagger's per-token [B, T, C]; end() if none.
TensorMap::const_iterator find_logits(const TensorMap& out) {
  auto it = out.find("logits");
  return it != out.end() ? it : out.find("token_logits");
}

const char* kProjHidden = "distill_hidden_projection";
const char* kProjEmbedding = "distill_embedding_projection";

}  // namespace

const std::vector<ConfigKeySpec>& distill_config_specs() {
  static const std::vector<ConfigKeySpec> specs = {
      service_key("distill.enable_distillation", "bool", "false",
                  "train the model as a student of a teacher (knowledge distillation)"),
      service_key("distill.type", "string", "\"vanilla_kd\"",
                  "vanilla_kd: alpha*T^2*KL(teacher||student) + (1-alpha)*task loss; intermediate_kd adds "
                  "TinyBERT's hidden-state, attention-map and embedding MSE (teacher in-process)",
                  {}, {}, {"vanilla_kd", "intermediate_kd"}),
      service_key(
          "distill.teacher", "path", "\"\"",
          "the teacher's model directory (a model this app trained): its logits are computed in-process "
          "(no grad, eval mode) unless distill.logits_column is set; also the source of "
          "distill.student_layers"),
      service_key("distill.logits_column", "string", "\"\"",
                  "read the teacher's logits from this input column (a JSON array or comma-separated numbers "
                  "per row, as --mode predict --output_schema logits writes them) instead of running the "
                  "teacher"),
      service_key("distill.temperature", "float", "5.0", "softmax temperature T of the KD term", 1e-6),
      service_key("distill.alpha", "float", "0.2", "weight of the KD term (1 - alpha: the task loss)", 0.0,
                  1.0),
      service_key("distill.hidden_weight", "float", "1.0", "intermediate_kd: weight of the hidden-state MSE",
                  0.0),
      service_key("distill.attention_weight", "float", "1.0",
                  "intermediate_kd: weight of the attention-map MSE (needs equal head counts)", 0.0),
      service_key("distill.embedding_weight", "float", "1.0",
                  "intermediate_kd: weight of the embedding-layer MSE", 0.0),
      service_key("distill.layer_map", "int_list", "[]",
                  "intermediate_kd: the teacher layer (1-based) each student layer learns from; empty: "
                  "uniform (student layer j <- teacher layer j*T/S)"),
      service_key("distill.student_layers", "int", "0",
                  "> 0: the student is the teacher's architecture with this many layers, initialised from "
                  "the teacher (distill.student_init); 0: the [model] sizes or pretrain_model_name_or_path",
                  0.0),
      service_key("distill.student_init", "string", "\"every_k\"",
                  "with distill.student_layers: every_k takes teacher layers 0, k, 2k, ... (k = teacher / "
                  "student layers, DistilBERT), first_k the first ones",
                  {}, {}, {"every_k", "first_k"}),
      service_key("distill.transfer_tables", "path_list", "[]",
                  "extra unlabeled files (a transfer set): their rows train on the KD term only"),
      service_key("distill.transfer_input_schema", "string", "\"\"",
                  "data.input_schema for distill.transfer_tables (empty: the same as data.input_schema)"),
  };
  return specs;
}

DistillOptions DistillOptions::from_config(const ConfigView& c) {
  DistillOptions d;
  d.enabled = c.get_bool("distill.enable_distillation", false);
  if (!d.enabled) return d;
  d.type = c.get_string("distill.type");
  d.teacher = c.get_string("distill.teacher");
  d.logits_column = c.get_string("distill.logits_column");
  d.temperature = c.get_double("distill.temperature");
  d.alpha = c.get_double("distill.alpha");
  d.hidden_weight = c.get_double("distill.hidden_weight");
  d.attention_weight = c.get_double("distill.attention_weight");
  d.embedding_weight = c.get_double("distill.embedding_weight");
  d.layer_map = c.get_int_list("distill.layer_map");
  d.student_layers = c.get_int("distill.student_layers");
  d.student_init = c.get_string("distill.student_init");
  d.transfer_tables = c.get_string_list("distill.transfer_tables");
  d.transfer_input_schema = c.get_string("distill.transfer_input_schema");
  if (d.teacher.empty() && d.logits_column.empty())
    throw ConfigError(
        "distillation needs a teacher: set distill.teacher (a model directory) or "
        "distill.logits_column (a column of teacher logits)",
        c.where("distill.enable_distillation"));
  if (d.teacher.empty() && (d.intermediate() || d.student_layers > 0))
    throw ConfigError(
        std::string(d.intermediate() ? "distill.type = \"intermediate_kd\"" : "distill.student_layers") +
            " needs the teacher model: set distill.teacher",
        c.where(d.intermediate() ? "distill.type" : "distill.student_layers"));
  if (!d.teacher.empty() && !std::filesystem::exists(d.teacher + "/config.json"))
    throw DataError("the teacher model directory has no config.json", d.teacher,
                    "set distill.teacher to a model directory written by train mode (" +
                        c.where("distill.teacher") + ")");
  return d;
}

EncoderShape encoder_shape(const torch::nn::Module& m) {
  EncoderShape s;
  for (const auto& p : m.named_parameters()) {
    int64_t i = layer_index(p.key());
    if (i >= 0) s.layers = std::max(s.layers, i + 1);
    if (p.key().find("embeddings.word_embeddings.weight") != std::string::npos) s.hidden = p.value().size(1);
  }
  return s;
}

std::vector<int64_t> init_layer_choice(const std::string& how, int64_t student_layers,
                                       int64_t teacher_layers) {
  if (student_layers < 1 || student_layers > teacher_layers)
    throw ConfigError("distill.student_layers = " + std::to_string(student_layers) + " must be in 1.." +
                          std::to_string(teacher_layers) + " (the teacher's layers)",
                      "");
  const int64_t k = teacher_layers / student_layers;
  std::vector<int64_t> from;
  for (int64_t j = 0; j < student_layers; ++j) from.push_back(how == "first_k" ? j : j * k);
  return from;
}

int64_t init_student_from_teacher(torch::nn::Module& student, const torch::nn::Module& teacher,
                                  const std::vector<int64_t>& from) {
  torch::NoGradGuard no_grad;
  auto src = tensors_of(teacher);
  int64_t copied = 0;
  for (auto& [name, dst] : tensors_of(student)) {
    std::string before, after, tname = name;
    int64_t j = layer_index(name, &before, &after);
    if (j >= 0) {
      if (j >= static_cast<int64_t>(from.size()))
        throw InternalError("student layer " + std::to_string(j) + " has no teacher layer to start from");
      tname = before + std::to_string(from[size_t(j)]) + after;
    }
    auto it = src.find(tname);
    if (it == src.end()) continue;  // e.g. a head the teacher lacks: keeps its initialisation
    if (it->second.sizes() != dst.sizes())
      throw DataError("the student's " + name + " has another shape than the teacher's " + tname, "",
                      "distill.student_layers copies the teacher's architecture: do not change its sizes");
    dst.copy_(it->second);
    ++copied;
  }
  return copied;
}

// ------------------------------------------------------------------------------------------ DistillTask
struct DistillTask::Impl {
  train::TrainTask& task;
  Model& student;
  Model* teacher;
  DistillOptions o;
  log::Logger log;
  torch::nn::Linear proj_hidden{nullptr}, proj_embedding{nullptr};
  bool registered = false;
  std::vector<int64_t> map;  // 1-based teacher layer per student layer (intermediate_kd)

  Impl(train::TrainTask& t, Model& s, Model* te, DistillOptions opts, const log::Logger& l)
      : task(t), student(s), teacher(te), o(std::move(opts)), log(l) {}

  void add_projections() {
    if (!proj_hidden || registered) return;
    student.module().register_module(kProjHidden, proj_hidden);
    student.module().register_module(kProjEmbedding, proj_embedding);
    registered = true;
  }
  void drop_projections() {
    if (!registered) return;
    student.module().unregister_module(kProjHidden);
    student.module().unregister_module(kProjEmbedding);
    registered = false;
  }
};

DistillTask::DistillTask(train::TrainTask& task, Model& student, Model* teacher, DistillOptions options,
                         const log::Logger& log)
    : impl_(std::make_unique<Impl>(task, student, teacher, std::move(options), log)) {
  auto& I = *impl_;
  if (teacher) teacher->module().eval();
  if (!I.o.intermediate()) return;
  EncoderShape s = encoder_shape(student.module()), t = encoder_shape(teacher->module());
  I.map = I.o.layer_map.empty() ? nn::uniform_layer_map(s.layers, t.layers) : I.o.layer_map;
  if (static_cast<int64_t>(I.map.size()) != s.layers)
    throw ConfigError("distill.layer_map has " + std::to_string(I.map.size()) + " entries for a student of " +
                          std::to_string(s.layers) + " layers",
                      "distill.layer_map", "give one teacher layer (1-based) per student layer");
  for (int64_t m : I.map)
    if (m < 1 || m > t.layers)
      throw ConfigError("distill.layer_map names teacher layer " + std::to_string(m) +
                            "; the teacher has 1.." + std::to_string(t.layers),
                        "distill.layer_map");
  if (s.hidden != t.hidden) {  // TinyBERT's W_h and W_e: learned, trained with the student, not saved
    I.proj_hidden = torch::nn::Linear(s.hidden, t.hidden);
    I.proj_embedding = torch::nn::Linear(s.hidden, t.hidden);
    I.add_projections();
    log.info("distillation: student width ", s.hidden, " is projected to the teacher's ", t.hidden);
  }
  std::string m;
  for (size_t j = 0; j < I.map.size(); ++j)
    m += (j ? ", " : "") + std::to_string(j + 1) + "<-" + std::to_string(I.map[j]);
  log.info("distillation: student layer <- teacher layer: ", m);
}

DistillTask::~DistillTask() = default;

TensorMap DistillTask::model_inputs(const data::Batch& batch) {
  TensorMap in = impl_->task.model_inputs(batch);
  in.erase("teacher_logits");
  return in;
}

void DistillTask::forward(const data::Batch&, const TensorMap& inputs, TensorMap& extras) {
  auto& I = *impl_;
  if (!I.teacher) return;
  // Without labels: the teacher's own task loss would be computed and thrown away every step.
  TensorMap in = inputs;
  in.erase("labels");
  TensorMap out = I.teacher->forward(in);
  auto it = find_logits(out);
  if (it == out.end())
    throw ConfigError("the teacher model returns no logits", I.o.teacher,
                      "distill.teacher must be a model of this task with a classifier head");
  if (I.o.logits_column.empty()) extras["teacher_logits"] = it->second;
  if (!I.o.intermediate()) return;
  for (auto& [k, v] : out)
    if (starts_with(k, "hidden_states.") || starts_with(k, "attentions.")) extras["teacher." + k] = v;
}

train::LossTerms DistillTask::loss(const TensorMap& outputs, const data::Batch& batch,
                                   const TensorMap& extras) {
  auto& I = *impl_;
  auto so = find_logits(outputs);
  if (so == outputs.end())
    throw ConfigError(
        "distillation matches the teacher's and the student's logits, and this model returns none "
        "(e.g. a two-tower matcher's embeddings)",
        "distill.enable_distillation", "distill a task whose model has a classifier head");
  const at::Tensor& s = so->second;
  auto te = extras.find("teacher_logits");
  at::Tensor t = te != extras.end() ? te->second : batch.tensors.at("teacher_logits");
  at::Tensor mask;
  if (s.dim() == 3) mask = batch.tensors.at("attention_mask");
  // The task's loss over the labelled rows (transfer-set rows have labels -100 and add only the KD term).
  train::LossTerms r;
  auto lab = batch.tensors.find("labels");
  if (s.dim() == 2 && lab != batch.tensors.end() && lab->second.scalar_type() == torch::kLong &&
      lab->second.dim() == 1) {
    auto k = nn::vanilla_kd_loss(s, t, lab->second, I.o.temperature, I.o.alpha);
    r.total = k.total;
    r.terms = {{"kd_loss", k.kd.detach()}, {"task_loss", k.ce.detach()}};
  } else {  // per-token logits, multi-label, regression: the task's own loss
    at::Tensor mask;
    if (s.dim() == 3) mask = batch.tensors.at("attention_mask");
    at::Tensor kd = nn::kd_kl_loss(s, t, I.o.temperature, mask);
    at::Tensor hard = I.task.loss(outputs, batch, extras).total;
    r.total = I.o.alpha * kd + (1.0 - I.o.alpha) * hard;
    r.terms = {{"kd_loss", kd.detach()}, {"task_loss", hard.detach()}};
  }
  if (!I.o.intermediate()) return r;

  at::Tensor am = batch.tensors.at("attention_mask");
  auto get = [&](const TensorMap& m, const std::string& k) -> const at::Tensor& {
    auto it = m.find(k);
    if (it == m.end()) throw InternalError("distillation: the model returned no '" + k + "'");
    return it->second;
  };
  auto proj = [&](torch::nn::Linear& p, const at::Tensor& x) {
    return p ? p(x.to(p->weight.scalar_type())) : x;
  };
  at::Tensor emb = nn::masked_mse(proj(I.proj_embedding, get(outputs, "hidden_states.0")),
                                  get(extras, "teacher.hidden_states.0"), am);
  at::Tensor hid = torch::zeros({}, s.options().dtype(torch::kFloat)), att = hid;
  for (size_t j = 0; j < I.map.size(); ++j) {
    const std::string sj = std::to_string(j + 1), tj = std::to_string(I.map[j]);
    hid = hid + nn::masked_mse(proj(I.proj_hidden, get(outputs, "hidden_states." + sj)),
                               get(extras, "teacher.hidden_states." + tj), am);
    if (I.o.attention_weight > 0)
      att = att + nn::masked_mse(
                      get(outputs, "attentions." + std::to_string(j)).transpose(1, 2),
                      get(extras, "teacher.attentions." + std::to_string(I.map[j] - 1)).transpose(1, 2), am);
  }
  r.total = r.total + I.o.hidden_weight * hid + I.o.embedding_weight * emb + I.o.attention_weight * att;
  r.terms.push_back({"hidden_loss", hid.detach()});
  r.terms.push_back({"embedding_loss", emb.detach()});
  if (I.o.attention_weight > 0) r.terms.push_back({"attention_loss", att.detach()});
  return r;
}

std::map<std::string, double> DistillTask::evaluate() { return impl_->task.evaluate(); }
std::pair<std::string, bool> DistillTask::main_metric() const { return impl_->task.main_metric(); }

void DistillTask::save_model(const std::string& dir) {
  // The projections serve training only: the saved student is a plain model of its architecture.
  bool had = impl_->registered;
  impl_->drop_projections();
  impl_->task.save_model(dir);
  if (had) impl_->add_projections();
}

void DistillTask::remove_projections() { impl_->drop_projections(); }

}  // namespace et::app
