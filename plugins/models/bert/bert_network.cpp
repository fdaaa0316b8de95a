// bert_network.cpp: module assembly and the forward pass with HF's loss rules per head.
#include "bert_network.h"

#include <ethost/error.h>
#include <ethost/nn/attention.h>
#include <torch/torch.h>

namespace et::models::bert {
namespace {

const at::Tensor* find(const TensorMap& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() || !it->second.defined() ? nullptr : &it->second;
}

}  // namespace

CoreImpl::CoreImpl(const nn::TransformerConfig& cfg, bool with_pooler) {
  embeddings = register_module("embeddings", nn::Embeddings(cfg));
  encoder = register_module("encoder", nn::Encoder(cfg));
  if (with_pooler) pooler = register_module("pooler", nn::Pooler(cfg));
}

ClsImpl::ClsImpl(const nn::TransformerConfig& cfg, bool mlm, bool nsp, const at::Tensor& word_embeddings) {
  if (mlm) predictions = register_module("predictions", nn::LMPredictionHead(cfg, word_embeddings));
  if (nsp) seq_relationship = register_module("seq_relationship", nn::LinearHead(cfg.hidden_size, 2, 0.0));
}

NetworkImpl::NetworkImpl(const BertOptions& o) : opts(o), base_(o.arch.model_type == "roberta" ? "roberta" : "bert") {
  const auto& a = o.arch;
  core = register_module(base_, Core(a, o.has_pooler()));
  double cls_dropout = a.classifier_dropout.value_or(a.hidden_dropout_prob);
  if (o.has_head("sequence_classification")) {
    if (base_ == "roberta")
      roberta_classifier = register_module("classifier", nn::RobertaClassificationHead(a, a.num_labels()));
    else
      classifier = register_module("classifier", nn::LinearHead(a.hidden_size, a.num_labels(), cls_dropout));
  }
  if (o.has_head("token_classification"))
    classifier = register_module("classifier", nn::LinearHead(a.hidden_size, a.num_labels(), cls_dropout));
  if (o.has_head("span")) qa_outputs = register_module("qa_outputs", nn::LinearHead(a.hidden_size, 2, 0.0));
  if (o.has_head("mlm") || o.has_head("nsp"))
    cls = register_module(
        "cls", Cls(a, o.has_head("mlm"), o.has_head("nsp"), core->embeddings->word_embeddings->weight));
}

TensorMap NetworkImpl::forward(const TensorMap& in) {
  const auto* ids = find(in, "input_ids");
  if (!ids) throw Error("model/bert needs an 'input_ids' tensor [batch, seq]");
  if (ids->dim() != 2) throw Error("model/bert: input_ids must be [batch, seq], got " + std::to_string(ids->dim()) + " dims");
  const int64_t T = ids->size(1);
  if (T > opts.arch.max_position_embeddings)
    throw Error("model/bert: sequence length " + std::to_string(T) + " exceeds max_position_embeddings " +
                std::to_string(opts.arch.max_position_embeddings));
  const auto* mask = find(in, "attention_mask");
  const auto* types = find(in, "token_type_ids");
  const auto* pos = find(in, "position_ids");

  TensorMap out;
  auto emb = core->embeddings->forward(*ids, types ? *types : at::Tensor(), pos ? *pos : at::Tensor());
  auto ext = nn::extended_attention_mask(mask ? *mask : torch::ones_like(*ids), emb.scalar_type());
  auto enc = core->encoder->forward(emb, ext, opts.output_hidden_states, opts.output_attentions);
  const at::Tensor& last = enc.last_hidden_state;
  out["last_hidden_state"] = last;
  for (size_t i = 0; i < enc.hidden_states.size(); ++i) out["hidden_states." + std::to_string(i)] = enc.hidden_states[i];
  for (size_t i = 0; i < enc.attentions.size(); ++i) out["attentions." + std::to_string(i)] = enc.attentions[i];
  at::Tensor pooled;
  if (core->pooler) out["pooler_output"] = pooled = core->pooler(last);

  std::vector<at::Tensor> losses;
  auto add_loss = [&](const std::string& name, const at::Tensor& l) {
    out[name] = l;
    losses.push_back(l);
  };
  const int64_t n = opts.arch.num_labels();
  if (opts.has_head("sequence_classification")) {
    auto logits = roberta_classifier ? roberta_classifier(last) : classifier(pooled);
    out["logits"] = logits;
    if (const auto* y = find(in, "labels")) {
      std::string pt = opts.arch.problem_type;
      if (pt.empty())
        pt = n == 1 ? "regression"
             : (y->scalar_type() == at::kLong || y->scalar_type() == at::kInt) ? "single_label_classification"
                                                                               : "multi_label_classification";
      if (pt == "regression")
        add_loss("sequence_loss", n == 1 ? torch::mse_loss(logits.squeeze(), y->squeeze().to(logits.scalar_type()))
                                : torch::mse_loss(logits, y->to(logits.scalar_type())));
      else if (pt == "single_label_classification")
        add_loss("sequence_loss", torch::cross_entropy_loss(logits.view({-1, n}), y->view({-1}).to(at::kLong)));
      else
        add_loss("sequence_loss", torch::binary_cross_entropy_with_logits(logits, y->to(logits.scalar_type())));
    }
  }
  if (opts.has_head("token_classification")) {
    auto logits = classifier(last);
    out["token_logits"] = logits;
    if (const auto* y = find(in, "token_labels"))
      add_loss("token_loss", torch::cross_entropy_loss(logits.view({-1, n}), y->view({-1}).to(at::kLong)));
  }
  if (opts.has_head("span")) {
    auto logits = qa_outputs(last);
    auto parts = logits.split(1, -1);
    auto start = parts[0].squeeze(-1).contiguous(), end = parts[1].squeeze(-1).contiguous();
    out["start_logits"] = start;
    out["end_logits"] = end;
    const auto* s = find(in, "start_positions");
    const auto* e = find(in, "end_positions");
    if (s && e) {
      // HF: positions outside the sequence are clamped to T and ignored.
      auto opt = torch::nn::functional::CrossEntropyFuncOptions().ignore_index(T);
      auto ls = torch::nn::functional::cross_entropy(start, s->view({-1}).clamp(0, T), opt);
      auto le = torch::nn::functional::cross_entropy(end, e->view({-1}).clamp(0, T), opt);
      add_loss("span_loss", (ls + le) / 2);
    }
  }
  if (opts.has_head("mlm")) {
    auto logits = cls->predictions(last);
    out["mlm_logits"] = logits;
    if (const auto* y = find(in, "mlm_labels"))
      add_loss("mlm_loss", torch::cross_entropy_loss(logits.view({-1, opts.arch.vocab_size}), y->view({-1})));
  }
  if (opts.has_head("nsp")) {
    auto logits = cls->seq_relationship(pooled);
    out["nsp_logits"] = logits;
    if (const auto* y = find(in, "next_sentence_label"))
      add_loss("nsp_loss", torch::cross_entropy_loss(logits.view({-1, 2}), y->view({-1})));
  }
  // "loss" is the sum of every head loss computed (HF BertForPreTraining: mlm + nsp).
  if (!losses.empty()) {
    at::Tensor total = losses[0];
    for (size_t i = 1; i < losses.size(); ++i) total = total + losses[i];
    out["loss"] = total;
  }
  return out;
}

}  // namespace et::models::bert
