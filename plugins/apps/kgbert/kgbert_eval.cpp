// kgbert_eval.cpp: KGBERT's evaluation — SPO ranking against k filtered negatives, mention F1 of the BIO head
// beside the trie's longest match, MLM accuracy with and without the knowledge — and the evaluate / predict
// modes.
#include <ethost/app/model_files.h>
#include <ethost/error.h>
#include <ethost/io/state_dict.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kgbert_app.h"

namespace et::apps::kgbert {

namespace {

// The trie's mentions of a sample's sentence as token spans (the baseline for the mention head).
std::vector<std::pair<int32_t, int32_t>> trie_spans(const kg::KnowledgeGraph& g, const SentenceSample& s) {
  std::vector<std::pair<int32_t, int32_t>> out;
  const auto n = static_cast<int32_t>(s.tokens.size());
  for (const auto& m : g.mentions(s.source->text)) {
    int32_t tb = -1, te = -1;
    for (int32_t t = 0; t < n; ++t)
      if (s.tokens[std::size_t(t)].end > m.begin && s.tokens[std::size_t(t)].start < m.end) {
        if (tb < 0) tb = t;
        te = t + 1;
      }
    if (tb >= 0) out.emplace_back(tb, te);
  }
  return out;
}

}  // namespace

// Runs the model over `rows` in batches; `each(out, batch, first_row)` sees every batch's outputs.
template <typename F>
static void run_rows(Model& model, const std::vector<InputRow>& rows,
                     const std::vector<const kg::SpoSentence*>& src, bool knowledge, int64_t batch_size,
                     const std::function<data::Batch(const std::vector<InputRow>&,
                                                     const std::vector<const kg::SpoSentence*>&)>& make,
                     const std::vector<std::vector<int64_t>>* mlm_labels, F each) {
  for (std::size_t start = 0; start < rows.size(); start += std::size_t(batch_size)) {
    const std::size_t end = std::min(rows.size(), start + std::size_t(batch_size));
    std::vector<InputRow> part(rows.begin() + long(start), rows.begin() + long(end));
    std::vector<const kg::SpoSentence*> ps(src.begin() + long(start), src.begin() + long(end));
    data::Batch b = make(part, ps);
    if (!knowledge) b.tensors["kg_off"] = torch::ones({}, torch::kLong);
    if (mlm_labels) {
      const int64_t T = b.tensors.at("input_ids").size(1);
      at::Tensor y = torch::full({int64_t(end - start), T}, -100, torch::kLong);
      for (std::size_t r = start; r < end; ++r)
        std::memcpy(y[int64_t(r - start)].data_ptr<int64_t>(), (*mlm_labels)[r].data(),
                    (*mlm_labels)[r].size() * sizeof(int64_t));
      b.tensors["mlm_labels"] = y;
    }
    each(model.forward(b.tensors), b, start);
  }
}

// Mentions: the BIO head on [CLS] sentence [SEP], and the trie's longest match, against the gold spans.
void KgBertApp::mention_metrics(const Corpus& c, const std::vector<int64_t>& samples_seen, bool knowledge,
                                std::map<std::string, double>& res) {
  auto make = [this](const std::vector<InputRow>& r, const std::vector<const kg::SpoSentence*>& s) {
    return rows_batch(r, s);
  };
  std::vector<InputRow> srows;
  std::vector<const kg::SpoSentence*> ssrc;
  for (int64_t si : samples_seen) {
    srows.push_back(sentence_row(c.samples[std::size_t(si)], tok_->vocab()));
    ssrc.push_back(c.samples[std::size_t(si)].source);
  }
  F1Counts model_f1, trie_f1;
  run_rows(*model_, srows, ssrc, knowledge, o_.eval_batch_size, make, nullptr,
           [&](const TensorMap& out, const data::Batch&, std::size_t first) {
             auto tags = out.at("mention_logits").argmax(-1).contiguous();
             for (int64_t r = 0; r < tags.size(0); ++r) {
               const SentenceSample& smp = c.samples[std::size_t(samples_seen[first + std::size_t(r)])];
               const auto n = static_cast<int64_t>(smp.tokens.size());
               std::vector<int64_t> t(tags[r].data_ptr<int64_t>() + 1, tags[r].data_ptr<int64_t>() + 1 + n);
               model_f1.add(bio_spans(t), smp.spans);
               trie_f1.add(trie_spans(*kg_, smp), smp.spans);
             }
           });
  res["mention_f1"] = model_f1.f1();
  res["mention_precision"] = model_f1.precision();
  res["mention_recall"] = model_f1.recall();
  res["mention_f1_trie_baseline"] = trie_f1.f1();
}

std::map<std::string, double> KgBertApp::metrics(const Corpus& c, int64_t max_facts, bool knowledge) {
  torch::NoGradGuard ng;
  const bool was_training = model_->module().is_training();
  model_->module().eval();
  auto make = [this](const std::vector<InputRow>& r, const std::vector<const kg::SpoSentence*>& s) {
    return rows_batch(r, s);
  };
  const std::size_t nf =
      max_facts > 0 ? std::min<std::size_t>(c.facts.size(), std::size_t(max_facts)) : c.facts.size();
  const auto k = static_cast<std::size_t>(o_.eval_negatives);
  // SPO ranking: the positive against k negatives (the same draws for every model: eval.seed).
  std::vector<InputRow> rows, masked;
  std::vector<const kg::SpoSentence*> src, msrc;
  std::vector<std::vector<int64_t>> mlm_labels;
  std::vector<int64_t> samples_seen;
  std::vector<char> known;  // per ranked fact: are its subject and object both entities of the graph?
  for (std::size_t i = 0; i < nf; ++i) {
    const auto& [si, fi] = c.facts[i];
    const SentenceSample& smp = c.samples[std::size_t(si)];
    const kg::SpoFact& fact = smp.source->spo[std::size_t(fi)];
    std::mt19937_64 rng = data::masking_rng(static_cast<uint64_t>(o_.eval_seed), 1, i);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<InputRow> group{joint_row(smp, fact, *tok_, o_.sequence_length, o_.max_field_tokens)};
    for (std::size_t j = 0; j < k; ++j) {
      kg::SpoFact nf2;
      bool ok = false;
      for (int t = 0; t < 5 && !ok; ++t)
        ok =
            neg_->sample(fact, u(rng) < o_.hard_negative_fraction, rng, nf2) && !is_fact_of(*smp.source, nf2);
      if (!ok) break;
      group.push_back(joint_row(smp, nf2, *tok_, o_.sequence_length, o_.max_field_tokens));
    }
    if (group.size() == k + 1) {
      // Negatives are drawn from the graph's entities; a held-out positive's entities may be unknown to it.
      known.push_back(kg_->entity_id(fact.subject) >= 0 && kg_->entity_id(fact.object) >= 0);
      for (auto& r : group) {
        rows.push_back(std::move(r));
        src.push_back(smp.source);
      }
    }
    // MLM: the positive, masked as in training but with the evaluation seed.
    std::mt19937_64 mrng = data::masking_rng(static_cast<uint64_t>(o_.eval_seed), 0, i);
    InputRow joint = joint_row(smp, fact, *tok_, o_.sequence_length, o_.max_field_tokens);
    auto m = data::mask_tokens(joint.input_ids, joint.words, o_.mlm, mask_vocab_, mrng);
    const std::vector<int64_t> original = joint.input_ids;
    joint.input_ids = m.input_ids;
    unmark_changed(joint, original);
    masked.push_back(std::move(joint));
    mlm_labels.push_back(std::move(m.labels));
    msrc.push_back(smp.source);
    if (samples_seen.empty() || samples_seen.back() != si) samples_seen.push_back(si);
  }
  std::map<std::string, double> res;
  std::vector<float> scores;
  run_rows(*model_, rows, src, knowledge, o_.eval_batch_size, make, nullptr,
           [&](const TensorMap& out, const data::Batch&, std::size_t) {
             auto s = out.at("spo_score").to(torch::kFloat).contiguous();
             scores.insert(scores.end(), s.data_ptr<float>(), s.data_ptr<float>() + s.numel());
           });
  const std::size_t ranked = known.size();
  double correct = 0, correct_known = 0, n_known = 0;
  for (std::size_t g = 0; g < ranked; ++g) {
    const float* p = scores.data() + g * (k + 1);
    const bool top = std::all_of(p + 1, p + k + 1, [&](float x) { return p[0] > x; });
    correct += top ? 1.0 : 0.0;
    correct_known += known[g] && top ? 1.0 : 0.0;
    n_known += known[g] ? 1.0 : 0.0;
  }
  res["spo_rank_accuracy"] = ranked ? correct / double(ranked) : 0.0;
  // The same over the facts whose entities the graph knows: no "unknown entity, so the positive" shortcut.
  res["spo_rank_accuracy_in_graph"] = n_known > 0 ? correct_known / n_known : 0.0;
  res["spo_rank_chance"] = 1.0 / double(k + 1);
  res["eval_facts"] = double(ranked);
  res["eval_facts_entities_in_graph"] = ranked ? n_known / double(ranked) : 0.0;
  // MLM accuracy on the masked positives.
  double hits = 0, targets = 0;
  run_rows(*model_, masked, msrc, knowledge, o_.eval_batch_size, make, &mlm_labels,
           [&](const TensorMap& out, const data::Batch& b, std::size_t) {
             const auto& y = b.tensors.at("mlm_labels");
             auto gold = y.masked_select(y != -100);
             if (gold.numel() == 0) return;
             hits += (out.at("mlm_logits").argmax(-1) == gold).sum().item<double>();
             targets += double(gold.numel());
           });
  res["mlm_accuracy"] = targets > 0 ? hits / targets : 0.0;
  mention_metrics(c, samples_seen, knowledge, res);
  res["eval_sentences"] = double(samples_seen.size());
  if (was_training) model_->module().train();
  return res;
}

std::map<std::string, double> KgBertApp::evaluate() {
  if (!dev_ || dev_->facts.empty()) return {};
  return metrics(*dev_, o_.eval_max_facts_in_training, true);
}

void KgBertApp::load_saved_graph(const std::string& dir) {
  std::ifstream in(dir + "/config.json");
  auto j = nlohmann::json::parse(in, nullptr, false);
  std::vector<std::string> graphs;
  if (!j.is_discarded() && j.contains("kg_files") && j["kg_files"].is_string()) {
    std::stringstream list(j["kg_files"].get<std::string>());
    for (std::string f; std::getline(list, f, ',');)
      if (!f.empty()) graphs.push_back(dir + "/" + f);
  }
  if (graphs.empty())
    throw DataError("the model has no knowledge graph (config.json has no \"kg_files\")",
                    dir + "/config.json", "use a model that app/kgbert trained");
  kg::MatchOptions mo;
  mo.min_chars = static_cast<std::size_t>(o_.min_chars);
  kg_ = std::make_unique<kg::KnowledgeGraph>(kg::KnowledgeGraph::from_files(graphs, mo));
}

void KgBertApp::run_evaluate() {
  const std::string dir = model_in_use();
  app::input_tables(root_);
  setup(dir);
  load_saved_graph(dir);
  neg_ = std::make_unique<kg::NegativeSampler>(*kg_);
  make_model(dir, "");
  const bool all = o_.eval_split == "all";
  Corpus c = load(o_.tables, true, all);
  prepare_corpus(c, *tok_, seg_ ? &*seg_ : nullptr, o_.sequence_length - 2);
  if (c.facts.empty())
    throw DataError(std::string("no facts to evaluate") + (all ? "" : " on the held-out side"),
                    o_.tables.at(0),
                    "check data.tables (DuIE layout) and data.eval_split / data.heldout_fraction");
  auto m = metrics(c, o_.eval_max_facts, true);
  const auto plain = metrics(c, o_.eval_max_facts, false);
  for (const char* key : {"spo_rank_accuracy", "spo_rank_accuracy_in_graph", "mlm_accuracy", "mention_f1"})
    m[std::string(key) + "_nokg"] = plain.at(key);
  const std::string out = !o_.eval_results_file.empty() ? o_.eval_results_file
                          : !o_.checkpoint_dir.empty()  ? o_.checkpoint_dir + "/eval_results.json"
                                                        : dir + "/eval_results.json";
  nlohmann::json j = nlohmann::json::object();
  std::string line;
  for (auto& [key, v] : m) {
    j[key] = v;
    line += (line.empty() ? "" : ", ") + key + " " + fmt(v);
  }
  if (ctx_.world().is_main()) {
    io::write_file_atomic(out, j.dump(2) + "\n");
    log_.info("evaluation: ", line);
    std::cout << "eval spo_rank_accuracy " << fmt(m["spo_rank_accuracy"]) << " (chance "
              << fmt(m["spo_rank_chance"]) << ", knowledge off " << fmt(m["spo_rank_accuracy_nokg"])
              << "; facts whose entities the graph knows " << fmt(m["spo_rank_accuracy_in_graph"])
              << ", knowledge off " << fmt(m["spo_rank_accuracy_in_graph_nokg"]) << "), mention_f1 "
              << fmt(m["mention_f1"]) << " (trie " << fmt(m["mention_f1_trie_baseline"]) << "), mlm_accuracy "
              << fmt(m["mlm_accuracy"]) << " (knowledge off " << fmt(m["mlm_accuracy_nokg"])
              << ")\nmetrics written to " << out << std::endl;
  }
}

}  // namespace et::apps::kgbert
