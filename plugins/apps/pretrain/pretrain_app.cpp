// pretrain_app.cpp: the pretraining app's modes — corpus and model set-up, the trainer, held-out evaluation
// with a unigram baseline, and fill-mask prediction.
#include "pretrain_app.h"

#include <ethost/app/model_files.h>
#include <ethost/app/predict_driver.h>
#include <ethost/app/text_features.h>
#include <ethost/data/batcher.h>
#include <ethost/error.h>
#include <ethost/io/state_dict.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fs = std::filesystem;

namespace et::apps::pretrain {
namespace {

const at::Tensor* find(const TensorMap& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() || !it->second.defined() ? nullptr : &it->second;
}

// Flat positions (b * T + t) of the prediction targets.
at::Tensor target_positions(const at::Tensor& labels) {
  return (labels.reshape({-1}) != -100).nonzero().reshape({-1});
}

std::string fmt(double v, int digits = 4) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

}  // namespace

PretrainOptions PretrainOptions::from_config(const ConfigView& c) {
  PretrainOptions o;
  o.tables = c.get_string_list("data.tables");  // checked by train and evaluate (serve reads none)
  o.format = c.get_string("data.format");
  o.text_fields = c.get_string_list("data.text_fields");
  o.exclude_tables = c.get_string_list("data.exclude_tables");
  o.sequence_length = c.get_int("data.sequence_length");
  o.vocab_file = c.get_string("data.vocab_file");
  o.do_lower_case = c.get_bool("data.do_lower_case");
  o.cross_documents = c.get_bool("data.cross_documents");
  o.fill_sequences = c.get_bool("data.fill_sequences");
  o.interleave_files = c.get_bool("data.interleave_files");
  o.split_sentences = c.get_bool("data.split_sentences");
  o.strict = c.get_bool("data.strict");
  o.first_sequence = c.get_string("data.first_sequence");
  o.pair_task = parse_pair_task(c.get_string("pair_task"));
  o.mlm.probability = c.get_double("mlm.probability");
  o.mlm.mask_ratio = c.get_double("mlm.mask_ratio");
  o.mlm.random_ratio = c.get_double("mlm.random_ratio");
  if (o.mlm.mask_ratio + o.mlm.random_ratio > 1.0 + 1e-9)
    throw ConfigError("mlm.mask_ratio + mlm.random_ratio must be at most 1", c.where("mlm.random_ratio"),
                      "the rest of the targets keep their token (BERT: 0.8 + 0.1, 0.1 kept)");
  o.mlm.whole_word = c.get_bool("mlm.whole_word_mask");
  o.mlm.max_predictions = c.get_int("mlm.max_predictions");
  o.dynamic_masking = c.get_bool("mlm.dynamic_masking");
  o.jieba_dict = c.get_string("mlm.jieba_dict");
  o.pretrained = c.get_string("pretrain_model_name_or_path");
  o.checkpoint_dir = c.get_string("train.checkpoint_dir");
  o.model_name = c.get_string("model.name");
  o.eval_results_file = c.get_string("eval.results_file");
  o.eval_batch_size = c.get_int("eval.batch_size");
  o.eval_max_sequences = c.get_int("eval.max_sequences");
  o.top_k = c.get_int("predict.top_k");
  o.seed = c.get_int("train.seed");
  return o;
}

PretrainApp::PretrainApp(const ConfigView& root, Context& ctx)
    : root_(root), ctx_(ctx), o_(PretrainOptions::from_config(root)), log_(log::get("plugin.app.pretrain")) {}
PretrainApp::~PretrainApp() = default;

void* PretrainApp::query_interface(std::string_view id) {
  if (id == Predictor::kInterfaceId) return static_cast<Predictor*>(this);
  return App::query_interface(id);
}

void PretrainApp::run(Mode mode) {
  switch (mode) {
    case Mode::train:
      return train();
    case Mode::evaluate:
      return run_evaluate();
    case Mode::predict:
      app::run_predict(ctx_, *this, root_);
      return;
    case Mode::serve:
      throw UsageError("app/pretrain does not support --mode serve yet", "--mode",
                       "use train, evaluate or predict (fill-mask)");
  }
}

// ------------------------------------------------------------------------------------------------- set-up
void PretrainApp::setup_tokenizer(const std::string& model_dir) {
  tok_.emplace(app::app_tokenizer(model_dir, o_.vocab_file, o_.do_lower_case, o_.sequence_length,
                                  root_.where("data.vocab_file")));
  if (tok_->vocab().mask_id() < 0)
    throw DataError("the vocabulary has no [MASK] token", tok_->vocab().source(),
                    "use a BERT vocab.txt (with [PAD], [UNK], [CLS], [SEP], [MASK])");
  spec_.mlm = o_.mlm;
  spec_.vocab = data::mask_vocab(tok_->vocab());
  spec_.dynamic = o_.dynamic_masking;
  spec_.seed = static_cast<uint64_t>(o_.seed);
}

void PretrainApp::make_model(const std::string& model_dir, bool pair_head) {
  Config mc = Config::from_view(root_.sub("model"));
  const std::string src = "app/pretrain";
  mc.set_string("model_dir", model_dir, src);
  mc.set_string_list(
      "heads", pair_head ? std::vector<std::string>{"mlm", "nsp"} : std::vector<std::string>{"mlm"}, src);
  const std::string seq_where = root_.where("data.sequence_length");
  mc.set_int("sequence_length", o_.sequence_length,
             "data.sequence_length" + (seq_where.empty() ? std::string() : " (" + seq_where + ")"));
  if (int64_t k = root_.get_int("train.activation_checkpointing", 0); k > 0)
    mc.set_int("activation_checkpointing", k, src);
  if (model_dir.empty()) {
    mc.set_int("vocab_size", static_cast<int64_t>(tok_->vocab().size()), src);
    mc.set_int("pad_token_id", tok_->vocab().pad_id(), src);
  }
  model_ = ctx_.create<Model>(o_.model_name, mc.view());
}

PackOptions PretrainApp::pack_options() const {
  PackOptions po;
  po.max_length = o_.sequence_length;
  po.pair_task = o_.pair_task;
  po.cross_documents = o_.cross_documents;
  po.fill = o_.fill_sequences;
  po.seed = static_cast<uint64_t>(o_.seed);
  return po;
}

// The jieba segmenter for whole-word masking, loaded once (training and every evaluation share it); null
// without whole-word masking.
const text::Segmenter* PretrainApp::segmenter() {
  if (!o_.mlm.whole_word) return nullptr;
  if (!seg_)
    seg_.emplace(text::Segmenter::from_file(o_.jieba_dict.empty() ? text::Segmenter::default_dict_path()
                                                                  : o_.jieba_dict));
  return &*seg_;
}

CorpusOptions PretrainApp::corpus_options(std::vector<std::string> files) const {
  CorpusOptions co;
  co.files = std::move(files);
  co.format = o_.format;
  co.text_fields = o_.text_fields;
  co.exclude = exclude_;
  co.split_sentences = o_.split_sentences;
  co.strict = o_.strict;
  return co;
}

// ------------------------------------------------------------------------------------------------- train
void PretrainApp::train() {
  app::input_tables(root_);
  std::vector<std::string> train_files = expand_tables({o_.tables[0]});
  dev_files_ = expand_tables(std::vector<std::string>(o_.tables.begin() + 1, o_.tables.end()));
  setup_tokenizer(o_.pretrained);
  if (!o_.exclude_tables.empty()) {
    // The texts of the excluded tables (e.g. a task's dev and test sets), whole, as they appear in rows.
    auto set = std::make_shared<std::unordered_set<std::string>>();
    CorpusOptions eo = corpus_options(expand_tables(o_.exclude_tables));
    eo.exclude = nullptr;
    eo.split_sentences = false;
    Corpus ex(eo);
    std::vector<std::string> texts;
    while (ex.next_document(texts))
      for (auto& t : texts) set->insert(t);
    log_.info("data.exclude_tables: ", set->size(), " distinct texts from ", eo.files.size(),
              " file(s); training rows repeating one are dropped");
    exclude_ = set;
  }
  const PackOptions po = pack_options();
  CorpusOptions co = corpus_options(train_files);
  co.interleave = o_.interleave_files;
  co.seed = spec_.seed;
  auto corpus = std::make_unique<Corpus>(co);
  auto packer = std::make_unique<Packer>(*corpus, *tok_, segmenter(), po);
  const bool pair = o_.pair_task != PairTask::none;
  StreamSource source(std::move(corpus), std::move(packer), spec_, pair, tok_->vocab().pad_id());
  log_.info("pretraining on ", train_files.size(), " file(s), streamed; MLM ", o_.mlm.probability,
            o_.mlm.whole_word ? " whole-word" : " token", " masking (", o_.mlm.mask_ratio, "/",
            o_.mlm.random_ratio, "/", 1.0 - o_.mlm.mask_ratio - o_.mlm.random_ratio, "), ",
            o_.dynamic_masking ? "dynamic" : "static", ", pair task ",
            o_.pair_task == PairTask::nsp   ? "nsp"
            : o_.pair_task == PairTask::sop ? "sop"
                                            : "none",
            "; sequences of ", o_.sequence_length, " tokens");
  if (dev_files_.empty())
    log_.warn("no held-out table (data.tables has one entry): no evaluation during training");
  make_model(o_.pretrained, pair);
  train::Trainer trainer(ctx_, root_, *model_, *this, source);
  auto result = trainer.fit();
  if (ctx_.world().is_main()) {
    if (exclude_) {
      if (source.excluded_per_pass() >= 0)
        std::cout << source.excluded_per_pass() << " training rows dropped that repeat data.exclude_tables\n";
      else  // the run ended before reading one whole pass
        std::cout << source.corpus().excluded()
                  << " training rows dropped that repeat data.exclude_tables (before the first pass ended)\n";
    }
    if (!result.best_metrics.empty()) {
      std::cout << "best model: step " << result.best_step;
      for (auto& [k, v] : result.best_metrics) std::cout << ", " << k << " " << fmt(v);
      std::cout << "\n";
    }
    std::cout << "model saved to " << fs::absolute(result.model_dir).string() << std::endl;
  }
}

TensorMap PretrainApp::model_inputs(const data::Batch& b) {
  TensorMap in = b.tensors;
  if (const auto* y = find(in, "mlm_labels")) in["mlm_positions"] = target_positions(*y);
  return in;
}

train::LossTerms PretrainApp::loss(const TensorMap& out, const data::Batch& b, const TensorMap&) {
  train::LossTerms t;
  t.total = out.at("loss");
  torch::NoGradGuard no_grad;
  if (const auto* l = find(out, "mlm_loss")) t.terms.emplace_back("mlm_loss", l->detach());
  if (const auto* l = find(out, "nsp_loss")) t.terms.emplace_back("nsp_loss", l->detach());
  const auto& labels = b.tensors.at("mlm_labels");
  const auto pos = target_positions(labels);
  auto gold = labels.reshape({-1}).index_select(0, pos);
  auto logits = out.at("mlm_logits");
  if (logits.dim() == 3)
    logits = logits.reshape({-1, logits.size(-1)}).index_select(0, pos);  // all positions
  t.terms.emplace_back("mlm_accuracy", (logits.argmax(-1) == gold).to(torch::kFloat).mean());
  if (const auto* nsp = find(out, "nsp_logits"))
    t.terms.emplace_back(o_.pair_task == PairTask::sop ? "sop_accuracy" : "nsp_accuracy",
                         (nsp->argmax(-1) == b.tensors.at("next_sentence_label")).to(torch::kFloat).mean());
  return t;
}

std::map<std::string, double> PretrainApp::evaluate() {
  if (dev_files_.empty()) return {};
  return evaluate_files(dev_files_);
}

// Held-out MLM: static masks from the run's seed over the files' packed sequences (so every evaluation sees
// the same targets), and a unigram model fitted on the same text as a baseline.
std::map<std::string, double> PretrainApp::evaluate_files(const std::vector<std::string>& files) {
  torch::NoGradGuard no_grad;
  const PackOptions po = pack_options();
  CorpusOptions co = corpus_options(files);
  co.exclude = nullptr;
  Corpus corpus(co);
  Packer packer(corpus, *tok_, segmenter(), po);
  const bool pair = o_.pair_task != PairTask::none;
  MaskSpec spec = spec_;
  spec.dynamic = false;
  auto schema = pretrain_schema(tok_->vocab().pad_id(), pair);
  const auto V = static_cast<int64_t>(tok_->vocab().size());
  std::vector<double> counts(size_t(V), 0.0);
  std::vector<int64_t> target_ids;
  double nll = 0, correct = 0, targets = 0, pair_correct = 0, pairs = 0;
  int64_t sequences = 0;
  bool more = true;
  while (more) {
    std::vector<data::Example> exs;
    Instance in;
    while (static_cast<int64_t>(exs.size()) < o_.eval_batch_size &&
           (o_.eval_max_sequences <= 0 || sequences < o_.eval_max_sequences) && packer.next(in)) {
      for (size_t i = 0; i < in.input_ids.size(); ++i)
        if (in.word_ids[i] >= 0) counts[size_t(in.input_ids[i])] += 1;
      exs.push_back(masked_example(in, spec, 0, packer.index() - 1));
      ++sequences;
    }
    if (exs.empty()) break;
    more = static_cast<int64_t>(exs.size()) == o_.eval_batch_size;
    std::vector<const data::Example*> ptrs;
    for (auto& e : exs) ptrs.push_back(&e);
    data::Batch b = data::collate_examples(schema, ptrs);
    TensorMap out = model_->forward(model_inputs(b));
    const auto& labels = b.tensors.at("mlm_labels");
    auto gold = labels.reshape({-1}).index_select(0, target_positions(labels));
    auto logits = out.at("mlm_logits").to(torch::kFloat);
    if (logits.dim() == 3)
      logits = logits.reshape({-1, logits.size(-1)}).index_select(0, target_positions(labels));
    nll += torch::cross_entropy_loss(logits, gold, {}, at::Reduction::Sum).item<double>();
    correct += (logits.argmax(-1) == gold).sum().item<double>();
    targets += static_cast<double>(gold.numel());
    auto g = gold.contiguous();
    target_ids.insert(target_ids.end(), g.data_ptr<int64_t>(), g.data_ptr<int64_t>() + g.numel());
    if (const auto* nsp = find(out, "nsp_logits")) {
      pair_correct += (nsp->argmax(-1) == b.tensors.at("next_sentence_label")).sum().item<double>();
      pairs += static_cast<double>(nsp->size(0));
    }
  }
  if (targets == 0)
    throw DataError("the held-out data has no text to evaluate on", files.empty() ? "" : files[0],
                    "check data.tables and data.text_fields");
  // Unigram baseline: add-one smoothed token frequencies of the held-out text itself (an optimistic one).
  double total = 0, best = 0;
  int64_t best_id = 0;
  for (int64_t i = 0; i < V; ++i) {
    total += counts[size_t(i)];
    if (counts[size_t(i)] > best) best = counts[size_t(i)], best_id = i;
  }
  double uni_nll = 0, uni_correct = 0;
  for (int64_t id : target_ids) {
    uni_nll -= std::log((counts[size_t(id)] + 1.0) / (total + static_cast<double>(V)));
    uni_correct += id == best_id ? 1 : 0;
  }
  std::map<std::string, double> m;
  m["mlm_accuracy"] = correct / targets;
  m["mlm_loss"] = nll / targets;
  m["perplexity"] = std::exp(nll / targets);
  m["unigram_accuracy"] = uni_correct / targets;
  m["unigram_perplexity"] = std::exp(uni_nll / targets);
  m["eval_sequences"] = static_cast<double>(sequences);
  m["eval_targets"] = targets;
  if (pairs > 0) m[o_.pair_task == PairTask::sop ? "sop_accuracy" : "nsp_accuracy"] = pair_correct / pairs;
  return m;
}

void PretrainApp::run_evaluate() {
  std::string dir = app::saved_model_dir(o_.pretrained, o_.checkpoint_dir);
  setup_tokenizer(dir);
  app::input_tables(root_);
  auto files = expand_tables(o_.tables);
  make_model(dir, o_.pair_task != PairTask::none);
  model_->module().eval();
  auto m = evaluate_files(files);
  std::string out = !o_.eval_results_file.empty() ? o_.eval_results_file
                    : !o_.checkpoint_dir.empty()  ? o_.checkpoint_dir + "/eval_results.json"
                                                  : dir + "/eval_results.json";
  nlohmann::json j = nlohmann::json::object();
  std::string line;
  for (auto& [k, v] : m) {
    j[k] = v;
    line += (line.empty() ? "" : ", ") + k + " " + fmt(v);
  }
  if (ctx_.world().is_main()) {
    io::write_file_atomic(out, j.dump(2) + "\n");
    log_.info("evaluation on ", static_cast<int64_t>(m["eval_sequences"]), " sequences: ", line);
    std::cout << "eval mlm_accuracy " << fmt(m["mlm_accuracy"]) << " (unigram baseline "
              << fmt(m["unigram_accuracy"]) << "), perplexity " << fmt(m["perplexity"], 2) << " (unigram "
              << fmt(m["unigram_perplexity"], 2) << ")\nmetrics written to " << out << std::endl;
  }
}

void PretrainApp::save_model(const std::string& dir) {
  model_->save(dir);
  tok_->save(dir);
  io::write_file_atomic(dir + "/train_config.toml", root_.to_toml() + "\n");
}

// ------------------------------------------------------------------------------------------------- fill-mask
void PretrainApp::prepare_predict() {
  std::string dir = app::saved_model_dir(o_.pretrained, o_.checkpoint_dir);
  setup_tokenizer(dir);
  make_model(dir, false);
  model_->module().eval();
}

std::vector<OutputColumn> PretrainApp::output_columns() const {
  return {{"predictions", "the top-1 token for each [MASK], in order, joined by single spaces"},
          {"top_k", "per [MASK], a JSON array of [token, probability] pairs (predict.top_k of them)", true}};
}

void PretrainApp::bind_columns(const std::vector<data::Column>& columns) {
  predict_col_ = data::column_index(columns, o_.first_sequence, "data.first_sequence (predict)");
}

std::optional<data::Example> PretrainApp::encode(const Row& row, std::string& reason) const {
  text::Encoding enc = tok_->encode(row.values[predict_col_]);
  if (enc.invalid_utf8) {
    reason = "text is not valid UTF-8";
    return std::nullopt;
  }
  const int64_t mask = tok_->vocab().mask_id();
  if (std::find(enc.input_ids.begin(), enc.input_ids.end(), mask) == enc.input_ids.end()) {
    reason = "no [MASK] token in the text (or it was truncated away)";
    return std::nullopt;
  }
  data::Example ex;
  app::set_bert_text(ex, enc);
  return ex;
}

data::Batch PretrainApp::collate(const std::vector<const data::Example*>& examples) const {
  return data::collate_examples(data::FeatureSchema::bert_text(tok_->vocab().pad_id()), examples);
}

TensorMap PretrainApp::predict_batch(const data::Batch& b) {
  torch::NoGradGuard no_grad;
  TensorMap in = b.tensors;
  const auto& ids = in.at("input_ids");
  auto pos = (ids.reshape({-1}) == tok_->vocab().mask_id()).nonzero().reshape({-1});
  in["mlm_positions"] = pos;
  TensorMap out = model_->forward(in);
  TensorMap r;
  r["mlm_logits"] = out.at("mlm_logits");
  r["mlm_positions"] = pos;
  r["sequence_length"] = torch::tensor(ids.size(1));
  return r;
}

void PretrainApp::postprocess(const TensorMap& out, const data::Batch&, const std::vector<PredictItem>& items,
                              const std::vector<std::string>& columns,
                              std::vector<std::vector<std::string>>& cells) const {
  auto probs = torch::softmax(out.at("mlm_logits").to(torch::kFloat), -1);
  const int64_t k = std::min<int64_t>(o_.top_k, probs.size(-1));
  auto top = probs.topk(k, -1);
  auto p = std::get<0>(top).contiguous(), ids = std::get<1>(top).contiguous();
  auto pos = out.at("mlm_positions").contiguous();
  const int64_t T = out.at("sequence_length").item<int64_t>();
  std::vector<std::vector<int64_t>> masks_of(items.size());
  for (int64_t m = 0; m < pos.numel(); ++m) masks_of[size_t(pos.data_ptr<int64_t>()[m] / T)].push_back(m);
  const auto& vocab = tok_->vocab();
  for (size_t r = 0; r < items.size(); ++r) {
    std::string pred;
    nlohmann::json top_k = nlohmann::json::array();
    for (int64_t m : masks_of[r]) {
      const int64_t* id = ids.data_ptr<int64_t>() + m * k;
      const float* pr = p.data_ptr<float>() + m * k;
      pred += (pred.empty() ? "" : " ") + vocab.token(id[0]);
      nlohmann::json pairs = nlohmann::json::array();
      for (int64_t j = 0; j < k; ++j) pairs.push_back({vocab.token(id[j]), pr[j]});
      top_k.push_back(pairs);
    }
    std::vector<std::string> row;
    for (const auto& c : columns) row.push_back(c == "predictions" ? pred : top_k.dump());
    cells.push_back(std::move(row));
  }
}

}  // namespace et::apps::pretrain
