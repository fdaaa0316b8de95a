// distill_losses.h: knowledge-distillation losses — the temperature-scaled KL of vanilla KD and the masked
// MSE of TinyBERT's intermediate-layer terms — and the uniform student-to-teacher layer map.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "ethost/export.h"

namespace et::nn {

// T^2 * KL(softmax(teacher / T) || softmax(student / T)), the mean over rows: logits [B, C] (each row one
// distribution), or [B, S, C] with mask [B, S] (1: a position that counts; the mean over those). This is
// torch's kl_div(log_softmax(s / T), softmax(t / T), reduction="batchmean") * T^2 (Hinton et al.). The
// teacher side gets no gradient. No counted row gives 0 (with a graph).
ET_API at::Tensor kd_kl_loss(const at::Tensor& student_logits, const at::Tensor& teacher_logits,
                             double temperature, const at::Tensor& mask = {});

// Vanilla KD (EasyNLP's vanilla_kd; Hinton et al.): total = alpha * kd_kl_loss(s, t, T) + (1 - alpha) * ce,
// where ce is the cross-entropy of logits [B, C] against labels [B] over the rows labelled >= 0; rows
// labelled -100 (a transfer set without labels) add the KD term only, and a batch without a labelled row has
// ce = 0.
struct KdLoss {
  at::Tensor total, kd, ce;
};
ET_API KdLoss vanilla_kd_loss(const at::Tensor& student_logits, const at::Tensor& teacher_logits,
                              const at::Tensor& labels, double temperature, double alpha);

// Mean squared error over the positions mask [B, S] counts: a, b [B, S, ...] (e.g. hidden states [B, S, H],
// or attention maps [B, heads, S, S] with the mask applied to the query dimension: pass a.transpose(1, 2)),
// sum of (a - b)^2 over counted positions / (counted positions * elements per position). No mask: every
// position. b gets no gradient.
ET_API at::Tensor masked_mse(const at::Tensor& a, const at::Tensor& b, const at::Tensor& mask = {});

// TinyBERT's uniform layer mapping: student layer j (1-based) learns from teacher layer j * T / S (1-based),
// so the top layers align. Throws et::ConfigError unless 1 <= student_layers <= teacher_layers.
ET_API std::vector<int64_t> uniform_layer_map(int64_t student_layers, int64_t teacher_layers);

}  // namespace et::nn
