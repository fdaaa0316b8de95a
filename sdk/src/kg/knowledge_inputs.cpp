// knowledge_inputs.cpp: tokens -> text -> mentions -> 1-hop subgraph (nodes, edges, name token ids), and the
// batch's padded tensors (et/kg/knowledge_inputs.h).
#include "ethost/kg/knowledge_inputs.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <unordered_map>

namespace et::kg {
namespace {

bool ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// The text of the markable tokens and, per token, its byte span in it ([0,0) for unmarkable ones). An
// unmarkable token becomes "\n" so no mention spans it.
std::string join_tokens(const std::vector<std::string>& tokens, std::vector<std::array<uint32_t, 2>>& span) {
  std::string text;
  span.assign(tokens.size(), {0, 0});
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string_view t = tokens[i];
    if (t.empty()) {
      if (!text.empty() && text.back() != '\n') text += '\n';
      continue;
    }
    const bool cont = t.size() > 2 && t.substr(0, 2) == "##";
    if (cont) t.remove_prefix(2);
    if (!cont && !text.empty() && ascii_alnum(text.back()) && ascii_alnum(t.front())) text += ' ';
    span[i] = {static_cast<uint32_t>(text.size()), static_cast<uint32_t>(text.size() + t.size())};
    text += t;
  }
  return text;
}

std::vector<int64_t> clip(std::vector<int64_t> v, std::size_t n) {
  if (v.size() > n) v.resize(n);
  return v;
}

}  // namespace

KnowledgeInputs knowledge_inputs(const KnowledgeGraph& kg, const std::vector<std::string>& tokens,
                                 const std::function<std::vector<int64_t>(std::string_view)>& encode_name,
                                 const SubgraphOptions& opts, const std::function<bool(uint32_t)>& skip) {
  KnowledgeInputs k;
  k.token_node.assign(tokens.size(), -1);
  std::vector<std::array<uint32_t, 2>> span;
  const std::string text = join_tokens(tokens, span);
  const auto ms = kg.mentions(text);
  std::unordered_map<uint32_t, int32_t> node_of;  // entity -> node
  std::vector<uint32_t> node_entity;
  auto add_node = [&](uint32_t e, bool mentioned) -> int32_t {
    auto it = node_of.find(e);
    if (it != node_of.end()) return it->second;
    if (node_entity.size() >= opts.max_nodes) return -1;
    const auto n = static_cast<int32_t>(node_entity.size());
    node_of.emplace(e, n);
    node_entity.push_back(e);
    k.node_mentioned.push_back(mentioned ? 1 : 0);
    return n;
  };
  std::vector<uint32_t> mentioned;
  for (const auto& m : ms) {
    const int32_t n = add_node(m.entity, true);
    if (n < 0) continue;
    if (std::find(mentioned.begin(), mentioned.end(), m.entity) == mentioned.end())
      mentioned.push_back(m.entity);
    for (std::size_t t = 0; t < tokens.size(); ++t)
      if (span[t][1] > span[t][0] && span[t][0] < m.byte_end && span[t][1] > m.byte_begin)
        k.token_node[t] = n;
  }
  std::vector<uint32_t> nb;
  for (uint32_t e : mentioned) {
    nb.clear();
    kg.neighbours(e, opts.per_entity + 64, opts.incoming, nb);  // extra room for skipped ones
    std::size_t taken = 0;
    for (uint32_t t : nb) {
      if (taken >= opts.per_entity || k.edges.size() >= opts.max_edges) break;
      if (skip && skip(t)) continue;
      if (std::find(k.triples.begin(), k.triples.end(), t) != k.triples.end()) continue;
      const Triple& tr = kg.triple(t);
      const int32_t s = add_node(tr.subject, false), o = add_node(tr.object, false);
      if (s < 0 || o < 0) continue;
      k.edges.push_back({s, o});
      k.triples.push_back(t);
      ++taken;
    }
  }
  std::unordered_map<uint32_t, std::vector<int64_t>> rel_names;
  for (uint32_t e : node_entity) k.node_names.push_back(clip(encode_name(kg.entity(e)), opts.name_tokens));
  for (uint32_t t : k.triples) {
    const uint32_t p = kg.triple(t).predicate;
    auto it = rel_names.find(p);
    if (it == rel_names.end())
      it = rel_names.emplace(p, clip(encode_name(kg.relation(p)), opts.name_tokens)).first;
    k.edge_names.push_back(it->second);
  }
  return k;
}

TensorMap knowledge_tensors(const std::vector<KnowledgeInputs>& batch, int64_t seq_len) {
  const auto B = static_cast<int64_t>(batch.size());
  int64_t N = 1, E = 1, Ln = 1, Lr = 1;
  for (const auto& k : batch) {
    N = std::max<int64_t>(N, static_cast<int64_t>(k.node_names.size()));
    E = std::max<int64_t>(E, static_cast<int64_t>(k.edges.size()));
    for (const auto& v : k.node_names) Ln = std::max<int64_t>(Ln, static_cast<int64_t>(v.size()));
    for (const auto& v : k.edge_names) Lr = std::max<int64_t>(Lr, static_cast<int64_t>(v.size()));
  }
  auto L = at::TensorOptions().dtype(at::kLong);
  at::Tensor token_node = at::full({B, seq_len}, -1, L), names = at::zeros({B, N, Ln}, L),
             node_mask = at::zeros({B, N}, L), mentioned = at::zeros({B, N}, L),
             edges = at::zeros({B, E, 2}, L), rels = at::zeros({B, E, Lr}, L),
             edge_mask = at::zeros({B, E}, L);
  auto tn = token_node.accessor<int64_t, 2>();
  auto nm = names.accessor<int64_t, 3>();
  auto nk = node_mask.accessor<int64_t, 2>();
  auto me = mentioned.accessor<int64_t, 2>();
  auto ed = edges.accessor<int64_t, 3>();
  auto rl = rels.accessor<int64_t, 3>();
  auto ek = edge_mask.accessor<int64_t, 2>();
  for (int64_t b = 0; b < B; ++b) {
    const auto& k = batch[static_cast<std::size_t>(b)];
    for (int64_t t = 0; t < seq_len && t < static_cast<int64_t>(k.token_node.size()); ++t)
      tn[b][t] = k.token_node[static_cast<std::size_t>(t)];
    for (std::size_t n = 0; n < k.node_names.size(); ++n) {
      nk[b][int64_t(n)] = 1;
      me[b][int64_t(n)] = k.node_mentioned[n];
      for (std::size_t j = 0; j < k.node_names[n].size(); ++j)
        nm[b][int64_t(n)][int64_t(j)] = k.node_names[n][j];
    }
    for (std::size_t e = 0; e < k.edges.size(); ++e) {
      ek[b][int64_t(e)] = 1;
      ed[b][int64_t(e)][0] = k.edges[e][0];
      ed[b][int64_t(e)][1] = k.edges[e][1];
      for (std::size_t j = 0; j < k.edge_names[e].size(); ++j)
        rl[b][int64_t(e)][int64_t(j)] = k.edge_names[e][j];
    }
  }
  return {{"kg_token_node", token_node},    {"kg_node_names", names}, {"kg_node_mask", node_mask},
          {"kg_node_mentioned", mentioned}, {"kg_edges", edges},      {"kg_edge_names", rels},
          {"kg_edge_mask", edge_mask}};
}

}  // namespace et::kg
