// kgbert_app.cpp: the KGBERT app's set-up and modes — the held-out split by hash, the training graph from the
// training side only, training batches (masked joint positives, sentences, clean positives and negatives, all
// with their knowledge subgraphs), the four losses, evaluation and prediction.
#include "kgbert_app.h"

#include <ethost/app/model_files.h>
#include <ethost/app/predict_driver.h>
#include <ethost/error.h>
#include <ethost/io/state_dict.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

namespace fs = std::filesystem;

namespace et::apps::kgbert {

std::string fmt(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

KgBertOptions KgBertOptions::from_config(const ConfigView& c) {
  KgBertOptions o;
  o.tables = c.get_string_list("data.tables");
  o.kg_files = c.get_string_list("data.kg_files");
  o.heldout_fraction = c.get_double("data.heldout_fraction");
  o.eval_split = c.get_string("data.eval_split");
  o.sequence_length = c.get_int("data.sequence_length");
  o.max_field_tokens = c.get_int("data.max_field_tokens");
  o.strict = c.get_bool("data.strict");
  o.jieba_dict = c.get_string("data.jieba_dict");
  o.mlm.probability = c.get_double("mlm.probability");
  o.mlm.mask_ratio = c.get_double("mlm.mask_ratio");
  o.mlm.random_ratio = c.get_double("mlm.random_ratio");
  o.mlm.whole_word = c.get_bool("mlm.whole_word_mask");
  if (o.mlm.mask_ratio + o.mlm.random_ratio > 1.0 + 1e-9)
    throw ConfigError("mlm.mask_ratio + mlm.random_ratio must be at most 1", c.where("mlm.random_ratio"));
  o.entity_mask_probability = c.get_double("mlm.entity_probability");
  o.hard_negative_fraction = c.get_double("spo.hard_negative_fraction");
  o.margin = c.get_double("spo.margin");
  o.weights = {c.get_double("loss.mlm_weight"), c.get_double("loss.mention_weight"),
               c.get_double("loss.spo_weight"), c.get_double("loss.gain_weight")};
  o.gain_margin = c.get_double("loss.gain_margin");
  o.subgraph.max_nodes = static_cast<std::size_t>(c.get_int("kg.max_nodes"));
  o.subgraph.max_edges = static_cast<std::size_t>(c.get_int("kg.max_edges"));
  o.subgraph.per_entity = static_cast<std::size_t>(c.get_int("kg.per_entity"));
  o.subgraph.name_tokens = static_cast<std::size_t>(c.get_int("kg.name_tokens"));
  o.min_chars = c.get_int("kg.min_chars");
  o.eval_negatives = c.get_int("eval.negatives");
  o.eval_max_facts = c.get_int("eval.max_facts");
  o.eval_max_facts_in_training = c.get_int("eval.max_facts_in_training");
  o.eval_batch_size = c.get_int("eval.batch_size");
  o.eval_seed = c.get_int("eval.seed");
  o.eval_results_file = c.get_string("eval.results_file");
  o.first_sequence = c.get_string("data.first_sequence");
  o.pretrained = c.get_string("pretrain_model_name_or_path");
  o.checkpoint_dir = c.get_string("train.checkpoint_dir");
  o.model_name = c.get_string("model.name");
  o.seed = c.get_int("train.seed");
  return o;
}

KgBertApp::KgBertApp(const ConfigView& root, Context& ctx)
    : root_(root), ctx_(ctx), o_(KgBertOptions::from_config(root)), log_(log::get("plugin.app.kgbert")) {}
KgBertApp::~KgBertApp() = default;

void* KgBertApp::query_interface(std::string_view id) {
  if (id == Predictor::kInterfaceId) return static_cast<Predictor*>(this);
  return App::query_interface(id);
}

void KgBertApp::run(Mode mode) {
  switch (mode) {
    case Mode::train:
      return train();
    case Mode::evaluate:
      return run_evaluate();
    case Mode::predict:
      app::run_predict(ctx_, *this, root_);
      return;
    case Mode::serve:
      throw UsageError("app/kgbert does not support --mode serve", "--mode",
                       "use --mode predict for mentions, or serve the fine-tuned downstream model");
  }
}

// ------------------------------------------------------------------------------------------------- set-up
void KgBertApp::setup(const std::string& model_dir) {
  if (model_dir.empty())
    throw ConfigError(
        "app/kgbert continues from a pretrained BERT, and none is given", "pretrain_model_name_or_path",
        "set it to a BERT directory (scripts/pretrain-small.sh makes one); KGBERT never starts from "
        "random weights silently");
  tok_.emplace(app::app_tokenizer(model_dir, "", true, o_.sequence_length,
                                  root_.where("pretrain_model_name_or_path")));
  if (tok_->vocab().mask_id() < 0)
    throw DataError("the vocabulary has no [MASK] token", tok_->vocab().source(), "use a BERT vocab.txt");
  mask_vocab_ = data::mask_vocab(tok_->vocab());
  if (o_.mlm.whole_word && !seg_)
    seg_.emplace(text::Segmenter::from_file(o_.jieba_dict.empty() ? text::Segmenter::default_dict_path()
                                                                  : o_.jieba_dict));
}

std::string KgBertApp::model_in_use() const {
  if (!o_.checkpoint_dir.empty() && fs::exists(o_.checkpoint_dir + "/config.json")) return o_.checkpoint_dir;
  return app::saved_model_dir(o_.pretrained, o_.checkpoint_dir);
}

void KgBertApp::make_model(const std::string& model_dir, const std::string& kg_file) {
  Config mc = Config::from_view(root_.sub("model"));
  const std::string src = "app/kgbert";
  mc.set_string("model_dir", model_dir, src);
  mc.set_string_list("heads", {"mlm"}, src);
  if (!kg_file.empty()) {
    std::vector<std::string> files{kg_file};
    files.insert(files.end(), o_.kg_files.begin(), o_.kg_files.end());
    mc.set_string_list("kg_file", files, src);
  }
  mc.set_int("kg_max_nodes", int64_t(o_.subgraph.max_nodes), "kg.max_nodes");
  mc.set_int("kg_max_edges", int64_t(o_.subgraph.max_edges), "kg.max_edges");
  mc.set_int("kg_per_entity", int64_t(o_.subgraph.per_entity), "kg.per_entity");
  mc.set_int("kg_name_tokens", int64_t(o_.subgraph.name_tokens), "kg.name_tokens");
  mc.set_int("kg_min_chars", o_.min_chars, "kg.min_chars");
  mc.set_int("sequence_length", o_.sequence_length, "data.sequence_length");
  model_ = ctx_.create<Model>(o_.model_name, mc.view());
}

// The sentences of `files` on one side of the hash split (or all), tokenized, with their facts.
Corpus KgBertApp::load(const std::vector<std::string>& files, bool heldout_side, bool all) {
  Corpus c;
  for (const auto& f : files) {
    kg::SpoReadStats st;
    auto ss = kg::read_spo_jsonl(f, st, o_.strict);
    log_.info(f, ": ", st.summary());
    for (auto& s : ss)
      if (all || kg::held_out(s.text, o_.heldout_fraction) == heldout_side)
        c.sentences.push_back(std::move(s));
  }
  return c;
}

void prepare_corpus(Corpus& c, const text::Tokenizer& tok, const text::Segmenter* seg, int64_t max_tokens,
                    const kg::KnowledgeGraph* kg, std::size_t* distant) {
  for (auto& s : c.sentences) {
    if (!s.spo.empty() || !kg) continue;
    for (uint32_t t : kg::distant_triples(*kg, s.text, 4)) {
      const auto& tr = kg->triple(t);
      s.spo.push_back({std::string(kg->entity(tr.subject)), std::string(kg->relation(tr.predicate)),
                       std::string(kg->entity(tr.object))});
      if (distant) ++*distant;
    }
  }
  c.samples.reserve(c.sentences.size());
  for (const auto& s : c.sentences) {
    if (s.spo.empty()) continue;
    c.samples.push_back(make_sentence(s, tok, seg, max_tokens));
    for (std::size_t f = 0; f < s.spo.size(); ++f)
      c.facts.emplace_back(static_cast<int64_t>(c.samples.size() - 1), static_cast<int64_t>(f));
  }
}

// ------------------------------------------------------------------------------------------------- train
void KgBertApp::train() {
  app::input_tables(root_);
  if (o_.checkpoint_dir.empty())
    throw ConfigError("app/kgbert trains into train.checkpoint_dir, which is empty", "train.checkpoint_dir");
  setup(o_.pretrained);
  auto tr = std::make_shared<Corpus>(load(o_.tables, false, false));
  dev_ = std::make_unique<Corpus>(load(o_.tables, true, false));
  // The graph: the training side's facts only (a held-out sentence's facts never reach it), plus
  // data.kg_files.
  fs::create_directories(o_.checkpoint_dir);
  const std::string graph = o_.checkpoint_dir + "/kgbert_train_graph.spo";
  {
    std::ofstream out(graph, std::ios::binary);
    for (const auto& s : tr->sentences)
      for (const auto& f : s.spo) out << f.subject << '\t' << f.predicate << '\t' << f.object << '\n';
    if (!out) throw DataError("cannot write the training graph", graph, "check train.checkpoint_dir");
  }
  std::vector<std::string> graphs{graph};
  graphs.insert(graphs.end(), o_.kg_files.begin(), o_.kg_files.end());
  kg::MatchOptions mo;
  mo.min_chars = static_cast<std::size_t>(o_.min_chars);
  kg_ = std::make_unique<kg::KnowledgeGraph>(kg::KnowledgeGraph::from_files(graphs, mo));
  neg_ = std::make_unique<kg::NegativeSampler>(*kg_);
  log_.info("knowledge graph (training side", o_.kg_files.empty() ? "" : " + data.kg_files",
            "): ", kg_->stats().summary());
  std::size_t distant = 0;
  prepare_corpus(*tr, *tok_, seg_ ? &*seg_ : nullptr, o_.sequence_length - 2, kg_.get(), &distant);
  prepare_corpus(*dev_, *tok_, seg_ ? &*seg_ : nullptr, o_.sequence_length - 2);
  if (tr->facts.empty())
    throw DataError("no training facts: every sentence fell on the held-out side or has no spo_list",
                    o_.tables.empty() ? "data.tables" : o_.tables[0],
                    "check the files and data.heldout_fraction");
  log_.info("training: ", tr->samples.size(), " sentences, ", tr->facts.size(), " sentence-fact pairs (",
            distant, " by distant supervision); held out: ", dev_->samples.size(), " sentences, ",
            dev_->facts.size(), " facts");
  make_model(o_.pretrained, graph);
  data::Dataset ds;
  ds.schema = data::FeatureSchema::bert_text(tok_->vocab().pad_id());
  ds.examples.resize(tr->facts.size());
  for (std::size_t i = 0; i < tr->facts.size(); ++i) {
    const auto& [si, fi] = tr->facts[i];
    const auto& smp = tr->samples[std::size_t(si)];
    InputRow r =
        joint_row(smp, smp.source->spo[std::size_t(fi)], *tok_, o_.sequence_length, o_.max_field_tokens);
    ds.examples[i].index = static_cast<int64_t>(i);
    ds.examples[i].set("input_ids",
                       data::Feature::sequence(std::vector<int32_t>(r.input_ids.begin(), r.input_ids.end())));
  }
  ds.custom_collate = [this, tr](const data::Dataset&, const std::vector<int64_t>& idx,
                                 const data::CollateContext& c) {
    return training_batch(*tr, idx, c.training ? c.epoch : 0);
  };
  train::Trainer trainer(ctx_, root_, *model_, *this, ds);
  auto result = trainer.fit();
  if (ctx_.world().is_main()) {
    if (!result.best_metrics.empty()) {
      std::cout << "best model: step " << result.best_step;
      for (auto& [k, v] : result.best_metrics) std::cout << ", " << k << " " << fmt(v);
      std::cout << "\n";
    }
    std::cout << "model saved to " << fs::absolute(result.model_dir).string() << std::endl;
  }
}

void KgBertApp::save_model(const std::string& dir) {
  model_->save(dir);
  tok_->save(dir);
  io::write_file_atomic(dir + "/train_config.toml", root_.to_toml() + "\n");
}

}  // namespace et::apps::kgbert
