// task_heads.h: HF's task heads for a BERT-family network, registered under HF's names so named_parameters()
// are HF's keys — classifier (sequence/token classification; classifier.dense/out_proj for RoBERTa),
// qa_outputs (span), cls.predictions (MLM, decoder tied to the word embeddings) and cls.seq_relationship
// (NSP) — and their forward with HF's loss rules.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <string>
#include <vector>

#include "ethost/export.h"
#include "ethost/model.h"
#include "ethost/nn/crf.h"
#include "ethost/nn/heads.h"
#include "ethost/nn/hf/model_options.h"

namespace et::nn::hf {

// HF's `cls`: predictions (MLM) and/or seq_relationship (NSP).
class ET_API ClsImpl : public torch::nn::Module {
 public:
  ClsImpl(const TransformerConfig& cfg, bool mlm, bool nsp, const at::Tensor& word_embeddings);
  LMPredictionHead predictions{nullptr};
  LinearHead seq_relationship{nullptr};
};
TORCH_MODULE(Cls);

class ET_API TaskHeads {
 public:
  TaskHeads() = default;
  // Registers opts.heads on `net` (the model's top module) under HF's names.
  TaskHeads(torch::nn::Module& net, const ModelOptions& opts, const at::Tensor& word_embeddings);

  // Adds each head's outputs to `out` from the trunk's last hidden state [B,T,H] and pooled output [B,H]
  // (undefined without a pooler): logits (+ sequence_loss from "labels"), token_logits (+ token_loss from
  // "token_labels"), start_logits/end_logits (+ span_loss from "start_positions"/"end_positions"), mlm_logits
  // (+ mlm_loss from "mlm_labels"), nsp_logits (+ nsp_loss from "next_sentence_label"), multiple_choice's
  // logits [B, C] (+ choice_loss from "labels" [B]; the trunk ran on the [B * C, T] flattening of the [B, C,
  // T] inputs, which `inputs` still holds). "loss" is the sum of the losses computed (HF BertForPreTraining:
  // mlm + nsp). With an int64 "mlm_positions" [N] input (flat indices b * T + t), the MLM head runs on those
  // positions only: mlm_logits is [N, vocab] and mlm_labels may be [B, T] (read at the positions) or [N] —
  // the same loss as HF's on all positions when the others are -100, for a fraction of the decoder's cost.
  // With the crf head, token_loss is the CRF's negative log-likelihood over the positions of "label_mask" [B,
  // T] (else those whose token_labels are not -100), and in eval mode "token_tags" [B, T] holds the Viterbi
  // path there (-1 elsewhere). sentence_embedding: "sentence_embedding" [B, D], the hidden states pooled by
  // opts.pooling over "attention_mask" (or the pooler's output), then projected to embedding_size when it is
  // set (no loss: the app's).
  void forward(const at::Tensor& last_hidden, const at::Tensor& pooled, const TensorMap& inputs,
               TensorMap& out);

  LinearHead classifier{nullptr};                         // BERT sequence / token classification
  RobertaClassificationHead roberta_classifier{nullptr};  // RoBERTa-style sequence classification
  LinearHead qa_outputs{nullptr};
  Cls cls{nullptr};
  Crf crf{nullptr};  // SDK 2.3: registered as "crf" (pytorch-crf's names) with the crf head
  torch::nn::Linear projection{nullptr};  // SDK 2.4: sentence_embedding with embedding_size > 0

 private:
  std::vector<std::string> heads_;
  std::string problem_type_;
  std::string pooling_;
  bool has(const std::string& h) const;
};

}  // namespace et::nn::hf
