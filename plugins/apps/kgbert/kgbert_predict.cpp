// kgbert_predict.cpp: app/kgbert's Predictor — texts in; out the mentions the model's BIO head finds, the
// graph trie's longest-match mentions, and the 1-hop triples of the mentioned entities (the model builds its
// knowledge inputs itself from the saved graph).
#include <ethost/app/model_files.h>
#include <ethost/app/text_features.h>
#include <ethost/data/batcher.h>
#include <ethost/data/schema.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "kgbert_app.h"

namespace et::apps::kgbert {
namespace {

// A mention as [surface, start, end] (code points of the text).
nlohmann::json mention_json(const std::string& text, const std::vector<text::Token>& toks, int32_t b,
                            int32_t e) {
  const int64_t cb = toks[std::size_t(b)].start, ce = toks[std::size_t(e - 1)].end;
  // The surface from code point offsets.
  std::size_t byte = 0, from = 0, to = text.size();
  for (int64_t cp = 0; byte <= text.size(); ++cp) {
    if (cp == cb) from = byte;
    if (cp == ce) {
      to = byte;
      break;
    }
    if (byte == text.size()) break;
    ++byte;
    while (byte < text.size() && (static_cast<unsigned char>(text[byte]) & 0xC0) == 0x80) ++byte;
  }
  return nlohmann::json::array({text.substr(from, to - from), cb, ce});
}

}  // namespace

void KgBertApp::prepare_predict() {
  const std::string dir = model_in_use();
  o_.mlm.whole_word = false;  // no masking here: no segmenter needed
  setup(dir);
  make_model(dir, "");
  model_->module().eval();
  load_saved_graph(dir);
}

std::vector<OutputColumn> KgBertApp::output_columns() const {
  return {{"mentions",
           "the mentions the model's BIO head finds: a JSON array of [text, start, end] (code points)", true},
          {"kg_mentions", "the graph trie's longest-match mentions, as mentions", true},
          {"kg_triples",
           "the 1-hop triples of the trie's mentions (kg.per_entity each, kg.max_edges in all): JSON "
           "[[s, p, o], ...]",
           true},
          {"mention_logits", "per sentence token, the BIO logits [O, B, I] (JSON arrays)", true}};
}

void KgBertApp::bind_columns(const std::vector<data::Column>& columns) {
  predict_col_ = data::column_index(columns, o_.first_sequence, "data.first_sequence (predict)");
}

std::optional<data::Example> KgBertApp::encode(const et::Row& row, std::string& reason) const {
  text::Encoding enc = tok_->encode(row.values[predict_col_]);
  if (enc.invalid_utf8) {
    reason = "text is not valid UTF-8";
    return std::nullopt;
  }
  if (enc.input_ids.size() <= 2) {
    reason = "the text gives no tokens";
    return std::nullopt;
  }
  data::Example ex;
  app::set_bert_text(ex, enc);
  return ex;
}

data::Batch KgBertApp::collate(const std::vector<const data::Example*>& examples) const {
  return data::collate_examples(data::FeatureSchema::bert_text(tok_->vocab().pad_id()), examples);
}

TensorMap KgBertApp::predict_batch(const data::Batch& b) {
  torch::NoGradGuard no_grad;
  TensorMap out = model_->forward(b.tensors);
  return {{"mention_logits", out.at("mention_logits").to(torch::kFloat).contiguous()}};
}

void KgBertApp::postprocess(const TensorMap& out, const data::Batch&, const std::vector<PredictItem>& items,
                            const std::vector<std::string>& columns,
                            std::vector<std::vector<std::string>>& cells) const {
  const at::Tensor& logits = out.at("mention_logits");
  const auto tags = logits.argmax(-1).contiguous();
  for (std::size_t r = 0; r < items.size(); ++r) {
    const std::string& text = items[r].row->values[predict_col_];
    const auto toks = tok_->tokenize(text);
    const auto n = std::min<int64_t>(static_cast<int64_t>(toks.size()), tags.size(1) - 2);
    std::vector<int64_t> t(tags[int64_t(r)].data_ptr<int64_t>() + 1,
                           tags[int64_t(r)].data_ptr<int64_t>() + 1 + n);
    nlohmann::json model_m = nlohmann::json::array(), trie_m = nlohmann::json::array(),
                   triples = nlohmann::json::array(), lg = nlohmann::json::array();
    for (const auto& [b, e] : bio_spans(t)) model_m.push_back(mention_json(text, toks, b, e));
    const auto ms = kg_->mentions(text);
    for (const auto& m : ms)
      trie_m.push_back(nlohmann::json::array(
          {text.substr(m.byte_begin, m.byte_end - m.byte_begin), int64_t(m.begin), int64_t(m.end)}));
    for (uint32_t id : kg_->subgraph(ms, o_.subgraph.per_entity, o_.subgraph.max_edges)) {
      const auto& tr = kg_->triple(id);
      triples.push_back({std::string(kg_->entity(tr.subject)), std::string(kg_->relation(tr.predicate)),
                         std::string(kg_->entity(tr.object))});
    }
    for (int64_t i = 0; i < n; ++i) {
      const float* p = logits[int64_t(r)][i + 1].data_ptr<float>();
      lg.push_back({p[0], p[1], p[2]});
    }
    std::vector<std::string> row;
    for (const auto& c : columns)
      row.push_back(c == "mentions"      ? model_m.dump()
                    : c == "kg_mentions" ? trie_m.dump()
                    : c == "kg_triples"  ? triples.dump()
                                         : lg.dump());
    cells.push_back(std::move(row));
  }
}

}  // namespace et::apps::kgbert
