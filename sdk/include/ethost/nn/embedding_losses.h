// embedding_losses.h: losses for two-tower (siamese) matching over the embeddings of B text pairs — in-batch
// softmax (contrastive), EasyTransfer's in-batch cosine margin, the pairwise cosine hinge, and circle loss.
#pragma once

#include <ATen/core/Tensor.h>

#include "ethost/export.h"

namespace et::nn {

// Every loss takes a [B, D] and b [B, D], the towers' embeddings of B pairs (L2-normalised inside: scores are
// cosines), and labels [B] (int64; 1: a_i matches b_i, 0: it does not; other values throw et::DataError), and
// returns the mean loss (a 0-d tensor). The in-batch losses (softmax, margin, circle) take each matching pair
// (a_i, b_i) as a query with one positive, b_i, and the batch's other b_j as its negatives; a pair labelled 0
// is no query but its b still serves as a negative. A batch without a matching pair gives 0 (with a graph).

// S[i][j] = cos(a_i, b_j), [B, B].
ET_API at::Tensor cosine_scores(const at::Tensor& a, const at::Tensor& b);

// Cross-entropy of softmax(S[i] / temperature) against b_i, over the matching pairs (InfoNCE, "multiple
// negatives ranking").
ET_API at::Tensor in_batch_softmax_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& labels,
                                        double temperature);

// EasyTransfer's matching_embedding_margin_loss (losses/matching_loss.py, m = 0.3): for a matching pair i,
// (1/B) * sum over j != i of max(0, margin + S[i][j] - S[i][i]); the mean over matching pairs. (EasyTransfer
// takes every pair of a batch as matching; here pairs labelled 0 are no queries.)
ET_API at::Tensor cosine_margin_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& labels,
                                     double margin);

// The pairwise hinge on the cosine of each pair (torch's cosine_embedding_loss with targets 2y - 1): 1 - s
// for a matching pair, max(0, s - margin) for a pair labelled 0; the mean over all pairs. (EasyNLP's hinge
// loss passed emb2 as the target of hinge_embedding_loss; this is the loss it meant.)
ET_API at::Tensor cosine_hinge_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& labels,
                                    double margin);

// Circle loss (Sun et al., CVPR 2020, eq. 4 with eq. 6-8) per query: s_p = S[i][i], s_n = S[i][j], j != i;
// alpha_p = [1 + m - s_p]+, alpha_n = [s_n + m]+ (held constant: no gradient through them, as in the paper),
// delta_p = 1 - m, delta_n = m; loss = softplus(logsumexp_j(gamma alpha_n (s_n - delta_n)) - gamma alpha_p
// (s_p - delta_p)); the mean over matching pairs. A batch of one pair has no negatives and gives 0.
ET_API at::Tensor circle_loss(const at::Tensor& a, const at::Tensor& b, const at::Tensor& labels,
                              double margin, double gamma);

}  // namespace et::nn
