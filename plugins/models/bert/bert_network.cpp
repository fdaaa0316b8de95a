// bert_network.cpp: module assembly and the forward pass (trunk, then the SDK's task heads).
#include "bert_network.h"

#include <ethost/error.h>
#include <ethost/nn/attention.h>
#include <ethost/nn/model_types.h>
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

NetworkImpl::NetworkImpl(const nn::hf::ModelOptions& o) : opts(o) {
  const std::string trunk = nn::model_type_info(o.arch.model_type, "model_type").trunk_prefix;
  core = register_module(trunk, Core(o.arch, o.has_pooler()));
  heads = nn::hf::TaskHeads(*this, o, core->embeddings->word_embeddings->weight);
}

TensorMap NetworkImpl::forward(const TensorMap& in) {
  const auto* ids = find(in, "input_ids");
  if (!ids)
    throw PluginError(
        "model/bert needs an 'input_ids' tensor [batch, seq]", "",
        "the app passes inputs this model does not take: choose a model the app supports (model.name)");
  if (ids->dim() == 3 && opts.has_head("multiple_choice")) {
    // HF BertForMultipleChoice: [batch, choices, seq] inputs run as [batch * choices, seq]; the head reads
    // the choice count from the original inputs.
    TensorMap flat = in;
    for (const char* name : {"input_ids", "attention_mask", "token_type_ids", "position_ids"})
      if (const auto* t = find(in, name)) flat[name] = t->reshape({-1, t->size(-1)});
    return forward_flat(flat, in);
  }
  if (ids->dim() != 2)
    throw PluginError(
        "model/bert: input_ids must be [batch, seq]" +
            std::string(opts.has_head("multiple_choice") ? " or [batch, choices, seq]" : "") + ", got " +
            std::to_string(ids->dim()) + " dims",
        "", "the app passes inputs this model does not take: choose a model the app supports (model.name)");
  return forward_flat(in, in);
}

TensorMap NetworkImpl::forward_flat(const TensorMap& in, const TensorMap& head_inputs) {
  const auto* ids = find(in, "input_ids");
  const int64_t T = ids->size(1);
  if (T > opts.arch.max_position_embeddings)
    throw ConfigError(
        "model/bert: an input of " + std::to_string(T) + " tokens exceeds max_position_embeddings " +
            std::to_string(opts.arch.max_position_embeddings),
        "",
        "lower data.sequence_length (or the app's own length key) to at most " +
            std::to_string(opts.arch.max_position_embeddings) + ", or use a model with more positions");
  const auto* mask = find(in, "attention_mask");
  const auto* types = find(in, "token_type_ids");
  const auto* pos = find(in, "position_ids");

  TensorMap out;
  auto emb = core->embeddings->forward(*ids, types ? *types : at::Tensor(), pos ? *pos : at::Tensor());
  auto ext = nn::extended_attention_mask(mask ? *mask : torch::ones_like(*ids), emb.scalar_type());
  auto enc = core->encoder->forward(emb, ext, opts.output_hidden_states, opts.output_attentions);
  const at::Tensor& last = enc.last_hidden_state;
  out["last_hidden_state"] = last;
  for (size_t i = 0; i < enc.hidden_states.size(); ++i)
    out["hidden_states." + std::to_string(i)] = enc.hidden_states[i];
  for (size_t i = 0; i < enc.attentions.size(); ++i)
    out["attentions." + std::to_string(i)] = enc.attentions[i];
  at::Tensor pooled;
  if (core->pooler) out["pooler_output"] = pooled = core->pooler(last);
  heads.forward(last, pooled, head_inputs, out);
  return out;
}

}  // namespace et::models::bert
