// crf.cpp: linear-chain CRF — path scores, the log partition by the forward algorithm, Viterbi with
// back-pointers — and left-aligned gathering of the scored positions.
#include "ethost/nn/crf.h"

#include <torch/torch.h>

namespace et::nn {

CrfImpl::CrfImpl(int64_t L) {
  transitions = register_parameter("transitions", torch::empty({L, L}).uniform_(-0.1, 0.1));
  start_transitions = register_parameter("start_transitions", torch::empty({L}).uniform_(-0.1, 0.1));
  end_transitions = register_parameter("end_transitions", torch::empty({L}).uniform_(-0.1, 0.1));
}

at::Tensor CrfImpl::nll(const at::Tensor& emissions_in, const at::Tensor& tags_in,
                        const at::Tensor& mask_in) const {
  const int64_t B = emissions_in.size(0), W = emissions_in.size(1);
  if (B == 0 || W == 0) return emissions_in.sum() * 0;
  at::Tensor em = emissions_in.to(transitions.scalar_type());
  at::Tensor mask = mask_in.to(torch::kBool);
  at::Tensor tags = torch::where(mask, tags_in.to(torch::kLong), torch::zeros_like(tags_in, torch::kLong));
  at::Tensor maskf = mask.to(em.scalar_type());
  at::Tensor lengths = mask.sum(1);  // [B]
  at::Tensor has = lengths > 0;

  // Score of the gold path.
  at::Tensor emit = em.gather(2, tags.unsqueeze(2)).squeeze(2);  // [B, W]
  at::Tensor score = start_transitions.index_select(0, tags.select(1, 0)) + (emit * maskf).sum(1);
  if (W > 1) {
    at::Tensor prev = tags.slice(1, 0, W - 1), next = tags.slice(1, 1, W);
    at::Tensor tr = transitions.index({prev.reshape(-1), next.reshape(-1)}).view({B, W - 1});
    score = score + (tr * maskf.slice(1, 1, W)).sum(1);
  }
  at::Tensor last = tags.gather(1, (lengths - 1).clamp_min(0).unsqueeze(1)).squeeze(1);
  score = score + end_transitions.index_select(0, last);

  // Log partition: alpha[b, j] = log sum over paths ending in j.
  at::Tensor alpha = start_transitions.unsqueeze(0) + em.select(1, 0);  // [B, L]
  for (int64_t i = 1; i < W; ++i) {
    at::Tensor next = torch::logsumexp(alpha.unsqueeze(2) + transitions.unsqueeze(0), 1) + em.select(1, i);
    alpha = torch::where(mask.select(1, i).unsqueeze(1), next, alpha);
  }
  at::Tensor log_z = torch::logsumexp(alpha + end_transitions.unsqueeze(0), 1);
  at::Tensor per_row = torch::where(has, log_z - score, torch::zeros_like(score));
  return per_row.sum() / static_cast<double>(std::max<int64_t>(1, has.sum().item<int64_t>()));
}

at::Tensor CrfImpl::decode(const at::Tensor& emissions_in, const at::Tensor& mask_in) const {
  torch::NoGradGuard no_grad;
  const int64_t B = emissions_in.size(0), W = emissions_in.size(1), L = num_labels();
  at::Tensor out = torch::full({B, W}, -1, torch::kLong);
  if (B == 0 || W == 0) return out;
  at::Tensor em = emissions_in.to(torch::kFloat).contiguous();
  at::Tensor mask = mask_in.to(torch::kBool);
  at::Tensor trans = transitions.to(torch::kFloat);
  at::Tensor score = start_transitions.to(torch::kFloat).unsqueeze(0) + em.select(1, 0);  // [B, L]
  std::vector<at::Tensor> back;                                                           // [B, L] per step
  // Where a row has ended, each label points at itself so the back-trace passes through unchanged.
  const at::Tensor self = torch::arange(L, torch::kLong).unsqueeze(0).expand({B, L});
  for (int64_t i = 1; i < W; ++i) {
    auto [best, arg] = torch::max(score.unsqueeze(2) + trans.unsqueeze(0), 1);  // over the previous label
    at::Tensor m = mask.select(1, i).unsqueeze(1);
    score = torch::where(m, best + em.select(1, i), score);
    back.push_back(torch::where(m, arg, self).contiguous());
  }
  score = score + end_transitions.to(torch::kFloat).unsqueeze(0);
  at::Tensor lengths = mask.sum(1).contiguous();
  at::Tensor best_last = score.argmax(1).contiguous();
  auto len = lengths.accessor<int64_t, 1>();
  auto o = out.accessor<int64_t, 2>();
  for (int64_t b = 0; b < B; ++b) {
    if (len[b] == 0) continue;
    int64_t tag = best_last.data_ptr<int64_t>()[b];
    // After the row's last position the back-pointers are the identity, so start the trace at W - 1.
    for (int64_t i = W - 1; i >= 0; --i) {
      if (i < len[b]) o[b][i] = tag;
      if (i > 0) tag = back[size_t(i - 1)].data_ptr<int64_t>()[b * L + tag];
    }
  }
  return out;
}

Gathered gather_positions(const at::Tensor& values, const at::Tensor& mask_in) {
  at::Tensor mask = mask_in.to(torch::kBool);
  const int64_t B = mask.size(0), T = mask.size(1);
  at::Tensor counts = mask.sum(1);
  const int64_t W = B ? counts.max().item<int64_t>() : 0;
  // Stable order of the selected positions first: sort by (not selected, position).
  at::Tensor key = (~mask).to(torch::kLong) * T + torch::arange(T, torch::kLong).unsqueeze(0);
  at::Tensor order = std::get<1>(key.sort(1)).slice(1, 0, W);  // [B, W]
  at::Tensor gmask = torch::arange(W, torch::kLong).unsqueeze(0) < counts.unsqueeze(1);
  std::vector<int64_t> shape{B, W};
  for (int64_t d = 2; d < values.dim(); ++d) shape.push_back(values.size(d));
  at::Tensor idx = order;
  for (int64_t d = 2; d < values.dim(); ++d) idx = idx.unsqueeze(-1);
  at::Tensor g = values.gather(1, idx.expand(shape));
  return {g, gmask, order};
}

}  // namespace et::nn
