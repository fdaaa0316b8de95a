// kgbert_network.cpp: KGBERT's forward — the trunk up to the fusion layer, the GCN over the knowledge
// subgraph and the gate into the mention tokens, the rest of the trunk, the heads; optionally the
// knowledge-free rerun of the upper layers for the knowledge-gain objective.
#include "kgbert_network.h"

#include <ethost/nn/attention.h>
#include <torch/torch.h>

namespace et::models::kgbert {
namespace {

const at::Tensor* find(const TensorMap& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() || !it->second.defined() ? nullptr : &it->second;
}

// Mean of the word embeddings of each name ([..., L] token ids, 0 = padding) -> [..., H].
at::Tensor mean_name_embedding(const at::Tensor& ids, const at::Tensor& word_embeddings) {
  auto mask = (ids != 0).to(word_embeddings.scalar_type()).unsqueeze(-1);
  auto e = torch::embedding(word_embeddings, ids) * mask;
  return e.sum(-2) / mask.sum(-2).clamp_min(1.0);
}

// x [B,N,H] gathered at idx [B,K] -> [B,K,H].
at::Tensor gather_nodes(const at::Tensor& x, const at::Tensor& idx) {
  return x.gather(1, idx.unsqueeze(-1).expand({idx.size(0), idx.size(1), x.size(2)}));
}

at::Tensor scatter_nodes(int64_t n, const at::Tensor& idx, const at::Tensor& v) {
  auto out = torch::zeros({v.size(0), n, v.size(2)}, v.options());
  return out.scatter_add(1, idx.unsqueeze(-1).expand_as(v), v);
}

torch::nn::LayerNorm layer_norm(int64_t h, double eps) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({h}).eps(eps));
}

}  // namespace

GcnLayerImpl::GcnLayerImpl(int64_t h, double eps, double p) {
  self_loop = register_module("self_loop", torch::nn::Linear(h, h));
  forward_msg = register_module("forward_msg", torch::nn::Linear(h, h));
  backward_msg = register_module("backward_msg", torch::nn::Linear(h, h));
  LayerNorm = register_module("LayerNorm", layer_norm(h, eps));
  dropout = register_module("dropout", torch::nn::Dropout(p));
}

at::Tensor GcnLayerImpl::forward(const at::Tensor& x, const at::Tensor& rel, const at::Tensor& edges,
                                 const at::Tensor& edge_mask) {
  const int64_t N = x.size(1);
  auto src = edges.select(2, 0), dst = edges.select(2, 1);
  auto m = edge_mask.to(x.scalar_type()).unsqueeze(-1);
  auto fwd = forward_msg(gather_nodes(x, src) + rel) * m;   // subject -> object
  auto bwd = backward_msg(gather_nodes(x, dst) - rel) * m;  // object -> subject
  auto agg = scatter_nodes(N, dst, fwd) + scatter_nodes(N, src, bwd);
  auto deg = torch::zeros({x.size(0), N}, x.options())
                 .scatter_add(1, dst, m.squeeze(-1))
                 .scatter_add(1, src, m.squeeze(-1));
  agg = agg / deg.clamp_min(1.0).unsqueeze(-1);
  return LayerNorm(x + dropout(torch::relu(self_loop(x) + agg)));
}

KnowledgeModuleImpl::KnowledgeModuleImpl(const nn::TransformerConfig& c, int64_t gcn_layers) {
  const int64_t h = c.hidden_size;
  node_in = register_module("node_in", torch::nn::Linear(2 * h, h));
  rel_in = register_module("rel_in", torch::nn::Linear(h, h));
  LayerNorm = register_module("LayerNorm", layer_norm(h, c.layer_norm_eps));
  gcn = register_module("gcn", torch::nn::ModuleList());
  for (int64_t i = 0; i < gcn_layers; ++i) {
    layers.push_back(GcnLayer(h, c.layer_norm_eps, c.hidden_dropout_prob));
    gcn->push_back(layers.back());
  }
  gate = register_module("gate", torch::nn::Linear(2 * h, h));
  out_proj = register_module("out_proj", torch::nn::Linear(h, h));
}

at::Tensor KnowledgeModuleImpl::forward(const at::Tensor& hidden, const at::Tensor& word_embeddings,
                                        const TensorMap& in, at::Tensor* gate_mean) {
  const at::Tensor& token_node = in.at("kg_token_node");
  const at::Tensor& names = in.at("kg_node_names");
  const int64_t N = names.size(1);
  const auto dt = hidden.scalar_type();
  auto we = word_embeddings.to(dt);
  auto valid = (token_node >= 0).to(dt);  // [B,T]
  auto idx = token_node.clamp_min(0);
  // A mentioned node starts from its mention's hidden states (its name would give a masked mention away),
  // another from its name's embeddings.
  auto msum = scatter_nodes(N, idx, hidden * valid.unsqueeze(-1));
  auto mcnt = torch::zeros({hidden.size(0), N}, hidden.options()).scatter_add(1, idx, valid);
  auto has_mention = (mcnt > 0).to(dt).unsqueeze(-1);
  auto mention_part = msum / mcnt.clamp_min(1.0).unsqueeze(-1);
  auto name_part = mean_name_embedding(names, we) * (1 - has_mention);
  auto x = LayerNorm(node_in(torch::cat({name_part, mention_part}, -1)));
  auto rel = rel_in(mean_name_embedding(in.at("kg_edge_names"), we));
  const at::Tensor& edges = in.at("kg_edges");
  const at::Tensor& emask = in.at("kg_edge_mask");
  for (auto& l : layers) x = l->forward(x, rel, edges, emask);
  auto k = gather_nodes(x, idx) * valid.unsqueeze(-1);
  auto g = torch::sigmoid(gate(torch::cat({hidden, k}, -1)));
  if (gate_mean) {
    torch::NoGradGuard ng;
    *gate_mean = ((g.mean(-1) * valid).sum() / valid.sum().clamp_min(1.0)).to(torch::kFloat);
  }
  return hidden + valid.unsqueeze(-1) * g * out_proj(k);
}

SpoHeadImpl::SpoHeadImpl(int64_t h) {
  dense = register_module("dense", torch::nn::Linear(2 * h, h));
  out = register_module("out", torch::nn::Linear(h, 1));
}

at::Tensor SpoHeadImpl::forward(const at::Tensor& last, const at::Tensor& fact_mask) {
  auto m = fact_mask.to(last.scalar_type()).unsqueeze(-1);
  auto fact = (last * m).sum(1) / m.sum(1).clamp_min(1.0);
  return out(torch::tanh(dense(torch::cat({last.select(1, 0), fact}, -1)))).squeeze(-1);
}

TrunkImpl::TrunkImpl(const nn::TransformerConfig& c) {
  embeddings = register_module("embeddings", nn::Embeddings(c));
  encoder = register_module("encoder", nn::Encoder(c));
  pooler = register_module("pooler", nn::Pooler(c));
}

NetworkImpl::NetworkImpl(const nn::hf::ModelOptions& o, const KnowledgeSettings& k) : opts(o), ks(k) {
  bert = register_module("bert", Trunk(o.arch));
  knowledge = register_module("knowledge", KnowledgeModule(o.arch, k.gcn_layers));
  kg_mention_head = register_module("kg_mention_head", torch::nn::Linear(o.arch.hidden_size, 3));
  kg_spo_head = register_module("kg_spo_head", SpoHead(o.arch.hidden_size));
  heads = nn::hf::TaskHeads(*this, o, bert->embeddings->word_embeddings->weight);
}

TensorMap NetworkImpl::forward(const TensorMap& in) {
  const at::Tensor& ids = in.at("input_ids");
  const int64_t B = ids.size(0), T = ids.size(1);
  const at::Tensor* tt = find(in, "token_type_ids");
  at::Tensor h = bert->embeddings->forward(ids, tt ? *tt : at::Tensor());
  at::Tensor mask = find(in, "attention_mask") ? in.at("attention_mask").to(torch::kLong)
                                               : torch::ones({B, T}, ids.options().dtype(torch::kLong));
  auto ext = nn::extended_attention_mask(mask, h.scalar_type());
  auto& layers = bert->encoder->layers;
  const auto L = static_cast<int64_t>(layers.size());
  const int64_t k = ks.resolved_fusion_layer(L);
  for (int64_t i = 0; i < k; ++i) h = layers[size_t(i)]->forward(h, ext);
  const at::Tensor* off = find(in, "kg_off");
  const bool use_kg = ks.enabled && find(in, "kg_token_node") && !(off && off->item<int64_t>() != 0);
  TensorMap out;
  at::Tensor fused = h;
  if (use_kg) {
    at::Tensor g;
    fused = knowledge->forward(h, bert->embeddings->word_embeddings->weight, in, &g);
    out["kg_gate"] = g;
  }
  auto upper = [&](at::Tensor x) {
    for (int64_t i = k; i < L; ++i) x = layers[size_t(i)]->forward(x, ext);
    return x;
  };
  at::Tensor last = upper(fused);
  out["last_hidden_state"] = last;
  out["pooler_output"] = bert->pooler(last);

  TensorMap hin = in;
  if (const at::Tensor* y = find(in, "mlm_labels")) {  // the MLM decoder at the targets only
    auto flat = (*y != -100).nonzero();
    hin["mlm_positions"] = (flat.select(1, 0) * T + flat.select(1, 1)).contiguous();
  }
  heads.forward(last, out["pooler_output"], hin, out);
  const bool mlm_targets = find(hin, "mlm_positions") && hin.at("mlm_positions").numel() > 0;
  if (out.count("mlm_loss") && !mlm_targets) out["mlm_loss"] = last.sum() * 0.0;  // an empty mean is NaN
  out["mention_logits"] = kg_mention_head(last);
  if (const at::Tensor* y = find(in, "mention_labels")) {
    const bool any = (*y != -100).any().item<bool>();
    out["mention_loss"] =
        any ? torch::nn::functional::cross_entropy(
                  out["mention_logits"].reshape({-1, 3}).to(torch::kFloat), y->reshape({-1}),
                  torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100))
            : last.sum() * 0.0;
  }
  // The fact: segment B, without its closing [SEP] (the last attended token of each row).
  at::Tensor fact_mask = torch::zeros_like(mask);
  if (tt) {
    fact_mask = (*tt == 1).to(torch::kLong) * mask;
    auto last_tok = (mask.sum(1) - 1).clamp_min(0).unsqueeze(1);
    fact_mask = fact_mask.scatter(1, last_tok, torch::zeros_like(last_tok));
  }
  out["spo_score"] = kg_spo_head(last, fact_mask);
  const at::Tensor* gain = find(in, "kg_gain");
  if (use_kg && gain && gain->item<int64_t>() != 0 && mlm_targets && out.count("mlm_loss")) {
    TensorMap plain;
    at::Tensor last0 = upper(h);
    heads.forward(last0, bert->pooler(last0), hin, plain);
    out["mlm_loss_nokg"] = plain.at("mlm_loss");
  }
  return out;
}

}  // namespace et::models::kgbert
