// knowledge_inputs.h: a token sequence's knowledge subgraph as index lists — which tokens mention which node,
// the nodes' and relations' name token ids, the edges — and their batched tensors, for a model's GCN and gate
// (model/kgbert); the app and the model build them the same way.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ethost/export.h"
#include "ethost/kg/knowledge_graph.h"
#include "ethost/model.h"

namespace et::kg {

struct SubgraphOptions {
  std::size_t max_nodes = 16;   // mentioned entities first (mention order), then their neighbours
  std::size_t max_edges = 24;   // 1-hop triples of the mentioned entities
  std::size_t per_entity = 4;   // triples per mentioned entity
  std::size_t name_tokens = 8;  // name token ids kept per node and per relation
  bool incoming = false;        // also triples whose object is mentioned
};

struct KnowledgeInputs {
  std::vector<int32_t> token_node;               // per token: the node its mention is, -1 for none
  std::vector<std::vector<int64_t>> node_names;  // per node: its name's token ids
  std::vector<uint8_t> node_mentioned;           // per node: 1 when the text mentions it
  std::vector<std::array<int32_t, 2>> edges;     // per edge: (subject node, object node)
  std::vector<std::vector<int64_t>> edge_names;  // per edge: the relation name's token ids
  std::vector<uint32_t> triples;                 // per edge: the graph's triple id
};

// `tokens`: the sequence's WordPiece tokens; "" marks one that may not be part of a mention (special tokens,
// another segment). Tokens are joined into text ("##" continuations glued, a space between two ASCII words)
// and the graph's mentions mapped back to the tokens they overlap. `encode_name` gives a name's token ids (no
// special tokens); `skip` hides triples (a training sentence's own gold facts), may be empty.
ET_API KnowledgeInputs
knowledge_inputs(const KnowledgeGraph& kg, const std::vector<std::string>& tokens,
                 const std::function<std::vector<int64_t>(std::string_view)>& encode_name,
                 const SubgraphOptions& opts, const std::function<bool(uint32_t)>& skip = {});

// A batch as int64 tensors (pad 0, -1 for "no node"): kg_token_node [B,T] (T = seq_len), kg_node_names
// [B,N,Ln], kg_node_mask [B,N], kg_node_mentioned [B,N], kg_edges [B,E,2], kg_edge_names [B,E,Lr],
// kg_edge_mask [B,E]; N and E are at least 1 so the shapes are never empty.
ET_API TensorMap knowledge_tensors(const std::vector<KnowledgeInputs>& batch, int64_t seq_len);

}  // namespace et::kg
