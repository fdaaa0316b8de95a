// embedding_losses.cpp: in-batch softmax, cosine margin, cosine hinge and circle loss over pair embeddings.
#include "ethost/nn/embedding_losses.h"

#include <torch/torch.h>

#include "ethost/error.h"

namespace et::nn {
namespace {

void check(const at::Tensor& a, const at::Tensor& b, const at::Tensor& labels) {
  if (a.dim() != 2 || b.dim() != 2 || a.sizes() != b.sizes())
    throw DataError("pair embeddings must both be [B, D] with the same shape");
  if (labels.dim() != 1 || labels.size(0) != a.size(0))
    throw DataError("pair labels must be [B] with one label per pair");
  if (labels.numel() > 0 && ((labels != 0) & (labels != 1)).any().item<bool>())
    throw DataError("pair labels must be 0 (no match) or 1 (match)");
}

// The rows of the matching pairs (the queries).
at::Tensor queries(const at::Tensor& labels) { return (labels == 1).nonzero().view({-1}); }

at::Tensor zero_with_graph(const at::Tensor& s) { return s.sum() * 0.0; }

}  // namespace

at::Tensor cosine_scores(const at::Tensor& a, const at::Tensor& b) {
  namespace F = torch::nn::functional;
  auto o = F::NormalizeFuncOptions().p(2).dim(1).eps(1e-12);
  return torch::matmul(F::normalize(a, o), F::normalize(b, o).t());
}

at::Tensor in_batch_softmax_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& labels,
                                 double temperature) {
  check(a, b, labels);
  if (temperature <= 0) throw ConfigError("the in-batch softmax temperature must be > 0");
  at::Tensor s = cosine_scores(a, b), q = queries(labels);
  if (q.numel() == 0) return zero_with_graph(s);
  at::Tensor logits = s.index_select(0, q) / temperature;
  return torch::nn::functional::cross_entropy(logits, q);
}

at::Tensor cosine_margin_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& labels,
                              double margin) {
  check(a, b, labels);
  at::Tensor s = cosine_scores(a, b), q = queries(labels);
  if (q.numel() == 0) return zero_with_graph(s);
  const int64_t B = s.size(0);
  at::Tensor rows = s.index_select(0, q);           // [Q, B]
  at::Tensor pos = rows.gather(1, q.unsqueeze(1));  // [Q, 1]
  at::Tensor not_self = torch::ones_like(rows).scatter(1, q.unsqueeze(1), 0.0);
  at::Tensor hinge = torch::relu(margin + rows - pos) * not_self;
  return (hinge.sum(1) / double(B)).mean();
}

at::Tensor cosine_hinge_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& labels,
                             double margin) {
  check(a, b, labels);
  at::Tensor s = cosine_scores(a, b).diagonal();
  if (s.numel() == 0) return zero_with_graph(s);
  at::Tensor y = labels.to(s.scalar_type());
  return (y * (1.0 - s) + (1.0 - y) * torch::relu(s - margin)).mean();
}

at::Tensor circle_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& labels, double margin,
                       double gamma) {
  check(a, b, labels);
  if (gamma <= 0) throw ConfigError("the circle loss gamma must be > 0");
  at::Tensor s = cosine_scores(a, b), q = queries(labels);
  const int64_t B = s.size(0);
  if (q.numel() == 0 || B < 2) return zero_with_graph(s);
  at::Tensor rows = s.index_select(0, q);          // [Q, B]
  at::Tensor sp = rows.gather(1, q.unsqueeze(1));  // [Q, 1]
  at::Tensor self = torch::zeros_like(rows, torch::kBool).scatter(1, q.unsqueeze(1), true);
  at::Tensor alpha_p = torch::relu(1.0 + margin - sp.detach());
  at::Tensor alpha_n = torch::relu(rows.detach() + margin);
  at::Tensor logit_n = (gamma * alpha_n * (rows - margin)).masked_fill(self, -INFINITY);
  at::Tensor logit_p = -gamma * alpha_p * (sp - (1.0 - margin));
  return torch::softplus(torch::logsumexp(logit_n, 1) + logit_p.squeeze(1)).mean();
}

}  // namespace et::nn
