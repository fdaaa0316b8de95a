// distill_losses.cpp: the KD KL, the masked MSE and the uniform layer map of nn/distill_losses.h.
#include "ethost/nn/distill_losses.h"

#include <torch/torch.h>

#include <string>

#include "ethost/error.h"

namespace et::nn {
namespace {

std::string shape_string(const at::Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

}  // namespace

at::Tensor kd_kl_loss(const at::Tensor& student_logits, const at::Tensor& teacher_logits, double temperature,
                      const at::Tensor& mask) {
  if (!(temperature > 0))
    throw ConfigError("distillation temperature must be > 0, got " + std::to_string(temperature), "");
  if (student_logits.sizes() != teacher_logits.sizes())
    throw DataError("teacher logits have shape " + shape_string(teacher_logits) + ", the student's " +
                        shape_string(student_logits),
                    "", "the teacher and the student must have the same labels");
  const int64_t C = student_logits.size(-1);
  at::Tensor s = student_logits.to(torch::kFloat).reshape({-1, C}) / temperature;
  at::Tensor t = teacher_logits.detach().to(torch::kFloat).reshape({-1, C}) / temperature;
  at::Tensor p_t = torch::softmax(t, -1);
  // sum_c p_t (log p_t - log p_s); xlogy keeps p_t = 0 terms at 0 as torch's kl_div does.
  at::Tensor per_row = (torch::xlogy(p_t, p_t) - p_t * torch::log_softmax(s, -1)).sum(-1);
  double t2 = temperature * temperature;
  if (!mask.defined()) return per_row.mean() * t2;
  at::Tensor m = mask.reshape({-1}).to(torch::kFloat);
  at::Tensor n = m.sum();
  return (per_row * m).sum() / n.clamp_min(1.0) * t2;
}

KdLoss vanilla_kd_loss(const at::Tensor& s, const at::Tensor& t, const at::Tensor& labels, double temperature,
                       double alpha) {
  KdLoss r;
  r.kd = kd_kl_loss(s, t, temperature);
  at::Tensor valid = labels.reshape({-1}) >= 0;
  if (valid.sum().item<int64_t>() == 0)
    r.ce = s.to(torch::kFloat).sum() * 0.0;
  else
    r.ce = torch::nn::functional::cross_entropy(s.to(torch::kFloat).index({valid}),
                                                labels.reshape({-1}).index({valid}).to(torch::kLong));
  r.total = alpha * r.kd + (1.0 - alpha) * r.ce;
  return r;
}

at::Tensor masked_mse(const at::Tensor& a, const at::Tensor& b, const at::Tensor& mask) {
  if (a.sizes() != b.sizes())
    throw DataError("distillation MSE of tensors with shapes " + shape_string(a) + " and " + shape_string(b),
                    "", "project the student's states to the teacher's width, or match the layers");
  at::Tensor d = (a.to(torch::kFloat) - b.detach().to(torch::kFloat)).pow(2);
  if (!mask.defined()) return d.mean();
  // Positions are the first two dims [B, S]; the rest are the elements of a position.
  at::Tensor per_pos = d.reshape({d.size(0), d.size(1), -1}).sum(-1);
  const double per = static_cast<double>(d.numel() / std::max<int64_t>(1, d.size(0) * d.size(1)));
  at::Tensor m = mask.to(torch::kFloat).reshape({d.size(0), d.size(1)});
  return (per_pos * m).sum() / (m.sum().clamp_min(1.0) * per);
}

std::vector<int64_t> uniform_layer_map(int64_t student_layers, int64_t teacher_layers) {
  if (student_layers < 1 || student_layers > teacher_layers)
    throw ConfigError("a student of " + std::to_string(student_layers) +
                          " layers cannot map uniformly onto " + std::to_string(teacher_layers) +
                          " teacher layers",
                      "", "give distill.layer_map explicitly");
  std::vector<int64_t> m;
  for (int64_t j = 1; j <= student_layers; ++j) m.push_back(j * teacher_layers / student_layers);
  return m;
}

}  // namespace et::nn
