// kgbert_batches.cpp: KGBERT's batches — masking (whole words, one fact entity masked in the sentence and in
// the fact together), negatives, each row's knowledge subgraph without its sentence's own facts, padding —
// and the four losses.
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "kgbert_app.h"

namespace et::apps::kgbert {
namespace {

// True when triple t of the graph is one of the sentence's own facts (hidden from its subgraph: a training
// sentence's answer must not sit in its knowledge).
bool own_fact(const kg::KnowledgeGraph& g, const kg::SpoSentence* s, uint32_t t) {
  if (!s) return false;
  const auto& tr = g.triple(t);
  for (const auto& f : s->spo)
    if (g.entity(tr.subject) == f.subject && g.relation(tr.predicate) == f.predicate &&
        g.entity(tr.object) == f.object)
      return true;
  return false;
}

}  // namespace

data::Batch KgBertApp::rows_batch(const std::vector<InputRow>& rows,
                                  const std::vector<const kg::SpoSentence*>& sources) const {
  const auto R = static_cast<int64_t>(rows.size());
  int64_t T = 1;
  for (const auto& r : rows) T = std::max<int64_t>(T, static_cast<int64_t>(r.input_ids.size()));
  const int64_t pad = tok_->vocab().pad_id();
  at::Tensor ids = torch::full({R, T}, pad, torch::kLong), types = torch::zeros({R, T}, torch::kLong),
             attn = torch::zeros({R, T}, torch::kLong), mention = torch::full({R, T}, kIgnore, torch::kLong);
  auto encode = [this](std::string_view s) {
    std::vector<int64_t> out;
    for (const auto& t : tok_->tokenize(s)) out.push_back(t.id);
    return out;
  };
  std::vector<kg::KnowledgeInputs> kis;
  kis.reserve(rows.size());
  int64_t tokens = 0;
  for (int64_t b = 0; b < R; ++b) {
    const InputRow& r = rows[std::size_t(b)];
    const auto L = static_cast<int64_t>(r.input_ids.size());
    std::memcpy(ids[b].data_ptr<int64_t>(), r.input_ids.data(), std::size_t(L) * sizeof(int64_t));
    std::memcpy(types[b].data_ptr<int64_t>(), r.token_type_ids.data(), std::size_t(L) * sizeof(int64_t));
    std::memcpy(mention[b].data_ptr<int64_t>(), r.mention_labels.data(), std::size_t(L) * sizeof(int64_t));
    attn[b].slice(0, 0, L).fill_(1);
    tokens += L;
    const kg::SpoSentence* src = sources[std::size_t(b)];
    kis.push_back(kg::knowledge_inputs(*kg_, r.markable, encode, o_.subgraph,
                                       [this, src](uint32_t t) { return own_fact(*kg_, src, t); }));
  }
  data::Batch batch;
  batch.tensors = kg::knowledge_tensors(kis, T);
  batch.tensors["input_ids"] = ids;
  batch.tensors["token_type_ids"] = types;
  batch.tensors["attention_mask"] = attn;
  batch.tensors["mention_labels"] = mention;
  batch.tokens = tokens;
  return batch;
}

data::Batch KgBertApp::training_batch(const Corpus& c, const std::vector<int64_t>& idx, int64_t epoch) const {
  const auto B = static_cast<int64_t>(idx.size());
  std::vector<InputRow> masked, sentences, pos, neg;
  std::vector<std::vector<int64_t>> labels;
  std::vector<const kg::SpoSentence*> src;
  std::vector<float> valid;
  for (int64_t i : idx) {
    const auto& [si, fi] = c.facts[std::size_t(i)];
    const SentenceSample& smp = c.samples[std::size_t(si)];
    const kg::SpoFact& fact = smp.source->spo[std::size_t(fi)];
    std::mt19937_64 rng = data::masking_rng(static_cast<uint64_t>(o_.seed), static_cast<uint64_t>(epoch),
                                            static_cast<uint64_t>(i));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    InputRow joint = joint_row(smp, fact, *tok_, o_.sequence_length, o_.max_field_tokens);
    auto m = data::mask_tokens(joint.input_ids, joint.words, o_.mlm, mask_vocab_, rng);
    // Joint masking: one of the fact's entities, wherever it occurs (sentence and fact), becomes [MASK].
    if (u(rng) < o_.entity_mask_probability) {
      const int32_t w = u(rng) < 0.5 ? joint.subject_word : joint.object_word;
      for (std::size_t t = 0; t < joint.words.size(); ++t)
        if (joint.words[t] == w) {
          m.labels[t] = joint.input_ids[t];
          m.input_ids[t] = mask_vocab_.mask_id;
        }
    }
    InputRow mrow = joint;
    mrow.input_ids = m.input_ids;
    unmark_changed(mrow, joint.input_ids);
    masked.push_back(std::move(mrow));
    labels.push_back(std::move(m.labels));
    sentences.push_back(sentence_row(smp, tok_->vocab()));
    kg::SpoFact nf;
    bool ok = false;
    for (int t = 0; t < 5 && !ok; ++t)
      ok = neg_->sample(fact, u(rng) < o_.hard_negative_fraction, rng, nf) && !is_fact_of(*smp.source, nf);
    valid.push_back(ok ? 1.0f : 0.0f);
    pos.push_back(joint);
    neg.push_back(ok ? joint_row(smp, nf, *tok_, o_.sequence_length, o_.max_field_tokens) : joint);
    src.push_back(smp.source);
  }
  std::vector<InputRow> rows;
  for (auto* part : {&masked, &sentences, &pos, &neg})
    for (auto& r : *part) rows.push_back(std::move(r));
  std::vector<const kg::SpoSentence*> sources;
  for (int k = 0; k < 4; ++k) sources.insert(sources.end(), src.begin(), src.end());
  data::Batch batch = rows_batch(rows, sources);
  const int64_t T = batch.tensors.at("input_ids").size(1);
  at::Tensor mlm = torch::full({4 * B, T}, -100, torch::kLong);
  for (int64_t b = 0; b < B; ++b) {
    const auto& l = labels[std::size_t(b)];
    std::memcpy(mlm[b].data_ptr<int64_t>(), l.data(), l.size() * sizeof(int64_t));
  }
  batch.tensors["mlm_labels"] = mlm;
  batch.tensors["spo_valid"] = torch::tensor(valid);
  if (o_.weights[3] > 0) batch.tensors["kg_gain"] = torch::ones({}, torch::kLong);
  batch.indices = idx;
  batch.size = B;
  return batch;
}

train::LossTerms KgBertApp::loss(const TensorMap& out, const data::Batch& b, const TensorMap&) {
  const at::Tensor& valid = b.tensors.at("spo_valid");
  const int64_t B = valid.size(0);
  const at::Tensor s = out.at("spo_score").to(torch::kFloat);
  const at::Tensor pos = s.slice(0, 2 * B, 3 * B), neg = s.slice(0, 3 * B, 4 * B);
  const at::Tensor spo = (torch::relu(o_.margin - pos + neg) * valid).sum() / valid.sum().clamp_min(1.0);
  const at::Tensor& mlm = out.at("mlm_loss");
  const at::Tensor& mention = out.at("mention_loss");
  train::LossTerms t;
  t.total = o_.weights[0] * mlm + o_.weights[1] * mention + o_.weights[2] * spo;
  at::Tensor gain;
  if (auto it = out.find("mlm_loss_nokg"); it != out.end()) {
    // The hinge rewards knowledge that lowers the masked-token loss; the knowledge-free loss is a fixed
    // reference (detached), so the objective never pushes the plain model to get worse.
    gain = it->second.detach() - mlm;
    t.total = t.total + o_.weights[3] * torch::relu(o_.gain_margin - gain);
  }
  torch::NoGradGuard ng;
  t.terms.emplace_back("mlm_loss", mlm.detach());
  t.terms.emplace_back("mention_loss", mention.detach());
  t.terms.emplace_back("spo_loss", spo.detach());
  if (gain.defined()) t.terms.emplace_back("knowledge_gain", gain.detach());
  if (auto it = out.find("kg_gate"); it != out.end()) t.terms.emplace_back("kg_gate", it->second);
  t.terms.emplace_back("spo_accuracy",
                       ((pos > neg).to(torch::kFloat) * valid).sum() / valid.sum().clamp_min(1.0));
  if (auto it = out.find("mlm_logits"); it != out.end() && it->second.size(0) > 0) {
    const auto& y = b.tensors.at("mlm_labels");
    t.terms.emplace_back("mlm_accuracy",
                         (it->second.argmax(-1) == y.masked_select(y != -100)).to(torch::kFloat).mean());
  }
  return t;
}

}  // namespace et::apps::kgbert
