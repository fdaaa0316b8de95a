// fashionbert_app.cpp: the FashionBERT app's modes — pair tables and features, ITM negatives and MLM/MPM
// masking per batch (a function of seed, epoch and position, so resume is exact), the adaptive loss
// weights, retrieval evaluation in both directions, and prediction.
#include "fashionbert_app.h"

#include <ethost/app/model_files.h>
#include <ethost/app/predict_driver.h>
#include <ethost/error.h>
#include <ethost/io/state_dict.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>
#include <unordered_map>

#include "retrieval.h"

namespace fs = std::filesystem;

namespace et::apps::fashionbert {
namespace {

std::string fmt(double v, int digits = 4) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

const at::Tensor* find(const TensorMap& m, const char* key) {
  auto it = m.find(key);
  return it == m.end() || !it->second.defined() ? nullptr : &it->second;
}

std::string default_cache_dir() {
  if (const char* d = std::getenv("ETHOST_CACHE_DIR"); d && *d) return std::string(d) + "/features";
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/ethost/features";
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/ethost/features";
  return ".ethost-features";
}

}  // namespace

FashionBertOptions FashionBertOptions::from_config(const ConfigView& c) {
  FashionBertOptions o;
  o.tables = c.get_string_list("data.tables");
  o.train_split = c.get_string("data.train_split");
  o.eval_split = c.get_string("data.eval_split");
  o.text_length = c.get_int("data.text_length");
  o.vocab_file = c.get_string("data.vocab_file");
  o.do_lower_case = c.get_bool("data.do_lower_case");
  o.strict = c.get_bool("data.strict");
  o.feature_cache = c.get_string("data.feature_cache");
  o.enc.name = c.get_string("image.encoder");
  o.enc.weights = c.get_string("image.encoder_weights");
  o.enc.image.size = c.get_int("image.size");
  o.enc.image.grid = c.get_int("image.grid");
  if (o.enc.image.size % o.enc.image.grid != 0)
    throw ConfigError("image.size (" + std::to_string(o.enc.image.size) +
                          ") is not a multiple of image.grid (" + std::to_string(o.enc.image.grid) + ")",
                      c.where("image.grid"), "e.g. size 224 with grid 8 (28-pixel patches)");
  o.negative_rate = c.get_double("itm.negative_rate");
  o.same_subcategory_rate = c.get_double("itm.same_subcategory_rate");
  o.mlm.probability = c.get_double("mlm.probability");
  o.mlm.mask_ratio = c.get_double("mlm.mask_ratio");
  o.mlm.random_ratio = c.get_double("mlm.random_ratio");
  o.mlm.whole_word = c.get_bool("mlm.whole_word_mask");
  if (o.mlm.mask_ratio + o.mlm.random_ratio > 1.0 + 1e-9)
    throw ConfigError("mlm.mask_ratio + mlm.random_ratio must be at most 1", c.where("mlm.random_ratio"));
  o.mpm_probability = c.get_double("mpm.probability");
  o.weighting = c.get_string("loss.weighting");
  o.fixed_weights = {c.get_double("loss.mlm_weight"), c.get_double("loss.itm_weight"),
                     c.get_double("loss.mpm_weight")};
  o.num_negatives = c.get_int("eval.num_negatives");
  o.max_queries = c.get_int("eval.max_queries");
  o.max_queries_in_training = c.get_int("eval.max_queries_in_training");
  o.eval_batch_size = c.get_int("eval.batch_size");
  o.eval_seed = c.get_int("eval.seed");
  o.negative_policy = c.get_string("eval.negatives");
  o.ablation = c.get_string("eval.ablation");
  o.eval_results_file = c.get_string("eval.results_file");
  o.retrieval = c.get_string("predict.retrieval");
  o.top_k = c.get_int("predict.top_k");
  o.pretrained = c.get_string("pretrain_model_name_or_path");
  o.checkpoint_dir = c.get_string("train.checkpoint_dir");
  o.model_name = c.get_string("model.name");
  o.seed = c.get_int("train.seed");
  return o;
}

FashionBertApp::FashionBertApp(const ConfigView& root, Context& ctx)
    : root_(root),
      ctx_(ctx),
      o_(FashionBertOptions::from_config(root)),
      log_(log::get("plugin.app.fashionbert")) {}
FashionBertApp::~FashionBertApp() = default;

void FashionBertApp::run(Mode mode) {
  switch (mode) {
    case Mode::train:
      return train();
    case Mode::evaluate:
      return run_evaluate();
    case Mode::predict:
      return run_predict();
    case Mode::serve:
      throw UsageError("app/fashionbert does not support --mode serve yet", "--mode",
                       "use --mode predict for ITM scores and top-k retrieval");
  }
}

// ------------------------------------------------------------------------------------------------- set-up
std::string FashionBertApp::cache_dir() const {
  return o_.feature_cache.empty() ? default_cache_dir() : o_.feature_cache;
}

void FashionBertApp::setup_tokenizer(const std::string& model_dir) {
  tok_.emplace(app::app_tokenizer(model_dir, o_.vocab_file, o_.do_lower_case, o_.text_length,
                                  root_.where("data.vocab_file")));
  if (tok_->vocab().mask_id() < 0)
    throw DataError("the vocabulary has no [MASK] token", tok_->vocab().source(), "use a BERT vocab.txt");
  mask_vocab_ = data::mask_vocab(tok_->vocab());
}

void FashionBertApp::make_model(const std::string& model_dir) {
  Config mc = Config::from_view(root_.sub("model"));
  const std::string src = "app/fashionbert";
  mc.set_string("model_dir", model_dir, src);
  mc.set_int("patch_feature_dim", o_.enc.feature_dim(), "image.encoder / image.size / image.grid");
  mc.set_int("num_patches", o_.enc.image.num_patches(), "image.grid");
  mc.set_int("sequence_length", o_.text_length, "data.text_length");
  if (model_dir.empty()) {
    mc.set_int("vocab_size", static_cast<int64_t>(tok_->vocab().size()), src);
    mc.set_int("pad_token_id", tok_->vocab().pad_id(), src);
  }
  model_ = ctx_.create<Model>(o_.model_name, mc.view());
}

// A trained model's feature settings (fashionbert.json) win over the config's: its patch projection was
// trained on them.
void FashionBertApp::read_saved_image_settings(const std::string& dir) {
  std::ifstream in(dir + "/fashionbert.json");
  if (!in) return;
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw DataError("fashionbert.json is not valid JSON", dir + "/fashionbert.json");
  EncoderOptions e = o_.enc;
  e.name = j.value("encoder", e.name);
  e.image.size = j.value("image_size", e.image.size);
  e.image.grid = j.value("grid", e.image.grid);
  if (e.name != o_.enc.name || e.image.size != o_.enc.image.size || e.image.grid != o_.enc.image.grid)
    log_.info("using the model's image settings from fashionbert.json: encoder ", e.name, ", size ",
              e.image.size, ", grid ", e.image.grid);
  if (o_.enc.weights.empty()) e.weights = j.value("encoder_weights", std::string());
  o_.enc = e;
  o_.text_length = j.value("text_length", o_.text_length);
}

PairSet FashionBertApp::load_pairs(const std::string& path, const std::string& split) {
  PairSet s;
  s.table = read_pair_table(path, o_.strict);
  if (s.table.bad_rows > 0) {
    log_.warn(path, ": ", s.table.bad_rows, " bad row(s) skipped");
    for (auto& b : s.table.bad_examples) log_.warn("  ", b);
  }
  int64_t split_col = -1;
  if (!split.empty()) {
    auto it = std::find(s.table.header.begin(), s.table.header.end(), "split");
    if (it == s.table.header.end())
      throw DataError("rows are selected by split '" + split + "' but the table has no 'split' column", path,
                      "unset data.train_split / data.eval_split, or add the column");
    split_col = it - s.table.header.begin();
  }
  const int threads = at::get_num_threads();
  auto t0 = std::chrono::steady_clock::now();
  s.features = load_or_extract(s.table, o_.enc, cache_dir(), o_.strict, threads);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int64_t n = static_cast<int64_t>(s.table.size());
  if (s.features.extract_seconds > 0)
    log_.info("features: extracted ", n, " images with ", o_.enc.name, " in ",
              fmt(s.features.extract_seconds, 2), " s (", fmt(double(n) / s.features.extract_seconds, 1),
              " images/s), cached in ", cache_dir());
  else
    log_.info("features: ", n, " images read from the cache in ", fmt(secs, 2), " s");
  if (s.features.bad_images > 0) {
    log_.warn(path, ": ", s.features.bad_images, " bad image(s) skipped");
    for (auto& b : s.features.bad_reasons) log_.warn("  ", b);
  }
  int64_t bad_text = 0;
  for (int64_t r = 0; r < n; ++r) {
    if (!s.features.ok[size_t(r)]) continue;
    if (split_col >= 0 && s.table.extra[size_t(r)][size_t(split_col)] != split) continue;
    const std::string& title = s.table.title[size_t(r)];
    text::Encoding enc = tok_->encode(title);
    if (enc.invalid_utf8 || enc.input_ids.size() <= 2) {
      ++bad_text;
      continue;
    }
    s.rows.push_back(r);
    s.words.push_back(data::whole_word_ids(enc, title, "", nullptr));
    s.ids.push_back(std::move(enc.input_ids));
    s.sub.push_back(s.table.sub[size_t(r)]);
    s.master.push_back(s.table.master[size_t(r)]);
  }
  if (bad_text > 0) log_.warn(path, ": ", bad_text, " row(s) whose title gives no tokens skipped");
  if (s.rows.empty())
    throw DataError(
        "no usable image-text pairs" + (split.empty() ? std::string() : " in split '" + split + "'"), path,
        "check the table, its images and data.train_split / data.eval_split");
  for (int64_t i = 0; i < s.size(); ++i) s.by_sub[s.sub[size_t(i)]].push_back(i);
  log_.info(path, split.empty() ? std::string() : " [" + split + "]", ": ", s.size(), " pairs");
  return s;
}

// ------------------------------------------------------------------------------------------------- train
data::Batch FashionBertApp::training_batch(const PairSet& s, const std::vector<int64_t>& pos,
                                           int64_t epoch) const {
  const int64_t B = static_cast<int64_t>(pos.size()), P = o_.enc.image.num_patches();
  std::vector<std::vector<int64_t>> ids(static_cast<size_t>(B)), labels(static_cast<size_t>(B));
  std::vector<int64_t> itm(static_cast<size_t>(B)), image_rows(static_cast<size_t>(B));
  at::Tensor mpm = torch::zeros({B, P}, torch::kLong), mpm_targets = torch::zeros({B, P}, torch::kLong);
  int64_t longest = 0;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t i = pos[size_t(b)];
    std::mt19937_64 rng = data::masking_rng(static_cast<uint64_t>(o_.seed), static_cast<uint64_t>(epoch),
                                            static_cast<uint64_t>(i));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    image_rows[size_t(b)] = s.rows[size_t(i)];
    int64_t text = i;
    if (s.size() > 1 && u(rng) < o_.negative_rate) {
      const auto& group = s.by_sub.at(s.sub[size_t(i)]);
      if (o_.same_subcategory_rate > 0 && group.size() > 1 && u(rng) < o_.same_subcategory_rate) {
        std::uniform_int_distribution<size_t> pick(0, group.size() - 2);
        size_t k = pick(rng);
        text = group[k] == i ? group.back() : group[k];  // any other item of the group
      } else {
        std::uniform_int_distribution<int64_t> pick(0, s.size() - 2);
        text = pick(rng);
        if (text >= i) ++text;
      }
    }
    itm[size_t(b)] = text == i ? 0 : 1;
    // Every pair is masked the same way (so [MASK] tokens and blanked patches say nothing about the match);
    // the MLM and MPM targets count for matching pairs only.
    auto m = data::mask_tokens(s.ids[size_t(text)], s.words[size_t(text)], o_.mlm, mask_vocab_, rng);
    ids[size_t(b)] = std::move(m.input_ids);
    labels[size_t(b)] = std::move(m.labels);
    if (text != i) std::fill(labels[size_t(b)].begin(), labels[size_t(b)].end(), -100);
    int64_t masked = 0;
    auto* mp = mpm[b].data_ptr<int64_t>();
    for (int64_t p = 0; p < P; ++p) masked += mp[p] = u(rng) < o_.mpm_probability ? 1 : 0;
    if (masked == 0 && o_.mpm_probability > 0) {
      std::uniform_int_distribution<int64_t> pick(0, P - 1);
      mp[pick(rng)] = 1;
    }
    if (text == i) mpm_targets[b].copy_(mpm[b]);
    longest = std::max<int64_t>(longest, static_cast<int64_t>(ids[size_t(b)].size()));
  }
  const int64_t pad = tok_->vocab().pad_id();
  at::Tensor input_ids = torch::full({B, longest}, pad, torch::kLong);
  at::Tensor mlm_labels = torch::full({B, longest}, -100, torch::kLong);
  at::Tensor attn = torch::zeros({B, longest}, torch::kLong);
  int64_t tokens = 0;
  for (int64_t b = 0; b < B; ++b) {
    const auto& v = ids[size_t(b)];
    const auto L = static_cast<int64_t>(v.size());
    std::memcpy(input_ids[b].data_ptr<int64_t>(), v.data(), size_t(L) * sizeof(int64_t));
    std::memcpy(mlm_labels[b].data_ptr<int64_t>(), labels[size_t(b)].data(), size_t(L) * sizeof(int64_t));
    attn[b].slice(0, 0, L).fill_(1);
    tokens += L + P;
  }
  data::Batch batch;
  batch.tensors["input_ids"] = input_ids;
  batch.tensors["attention_mask"] = attn;
  batch.tensors["token_type_ids"] = torch::zeros({B, longest}, torch::kLong);
  batch.tensors["mlm_labels"] = mlm_labels;
  batch.tensors["itm_labels"] = torch::tensor(itm, torch::kLong);
  batch.tensors["mpm_mask"] = mpm;
  batch.tensors["mpm_targets"] = mpm_targets;
  batch.tensors["patch_features"] = s.features.patches(image_rows);
  batch.tokens = tokens;
  return batch;
}

void FashionBertApp::train() {
  app::input_tables(root_);
  setup_tokenizer(o_.pretrained);
  auto train_set = std::make_shared<PairSet>(load_pairs(o_.tables[0], o_.train_split));
  if (o_.tables.size() > 1 || !o_.eval_split.empty())
    dev_ = std::make_unique<PairSet>(
        load_pairs(o_.tables.size() > 1 ? o_.tables[1] : o_.tables[0], o_.eval_split));
  else
    log_.warn(
        "no evaluation table (data.tables has one entry and no data.eval_split): no evaluation "
        "during training");
  make_model(o_.pretrained);
  log_.info("pretraining on ", train_set->size(), " pairs: ITM negatives ", o_.negative_rate, " (",
            o_.same_subcategory_rate, " of them from the same subCategory), MLM ", o_.mlm.probability,
            ", MPM ", o_.mpm_probability, ", ", o_.weighting, " loss weights; ", o_.text_length,
            " text tokens + ", o_.enc.image.num_patches(), " patches");
  data::Dataset ds;
  ds.schema = data::FeatureSchema::bert_text(tok_->vocab().pad_id());
  ds.examples.resize(size_t(train_set->size()));
  for (int64_t i = 0; i < train_set->size(); ++i) {
    ds.examples[size_t(i)].index = i;
    ds.examples[size_t(i)].set(
        "input_ids", data::Feature::sequence(std::vector<int32_t>(train_set->ids[size_t(i)].begin(),
                                                                  train_set->ids[size_t(i)].end())));
  }
  ds.custom_collate = [this, train_set](const data::Dataset&, const std::vector<int64_t>& idx,
                                        const data::CollateContext& c) {
    return training_batch(*train_set, idx, c.training ? c.epoch : 0);
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

train::LossTerms FashionBertApp::loss(const TensorMap& out, const data::Batch& b, const TensorMap&) {
  const at::Tensor& mlm = out.at("mlm_loss");
  const at::Tensor& itm = out.at("itm_loss");
  const at::Tensor& mpm = out.at("mpm_loss");
  std::array<double, 3> w = o_.fixed_weights;
  if (o_.weighting == "adaptive")
    w = adaptive_weights({mlm.item<double>(), itm.item<double>(), mpm.item<double>()});
  train::LossTerms t;
  t.total = w[0] * mlm + w[1] * itm + w[2] * mpm;
  torch::NoGradGuard ng;
  t.terms.emplace_back("mlm_loss", mlm.detach());
  t.terms.emplace_back("itm_loss", itm.detach());
  t.terms.emplace_back("mpm_loss", mpm.detach());
  t.terms.emplace_back("w_mlm", torch::tensor(w[0]));
  t.terms.emplace_back("w_itm", torch::tensor(w[1]));
  t.terms.emplace_back("w_mpm", torch::tensor(w[2]));
  t.terms.emplace_back(
      "itm_accuracy",
      (out.at("itm_logits").argmax(-1) == b.tensors.at("itm_labels")).to(torch::kFloat).mean());
  if (const auto* logits = find(out, "mlm_logits"); logits && logits->size(0) > 0) {
    const auto& y = b.tensors.at("mlm_labels");
    auto gold = y.masked_select(y != -100);
    t.terms.emplace_back("mlm_accuracy", (logits->argmax(-1) == gold).to(torch::kFloat).mean());
  }
  return t;
}

std::map<std::string, double> FashionBertApp::evaluate() {
  if (!dev_) return {};
  return retrieval_metrics(*dev_, o_.max_queries_in_training);
}

void FashionBertApp::save_model(const std::string& dir) {
  model_->save(dir);
  tok_->save(dir);
  nlohmann::json j;
  j["encoder"] = o_.enc.name;
  j["encoder_weights"] = o_.enc.weights;
  j["image_size"] = o_.enc.image.size;
  j["grid"] = o_.enc.image.grid;
  j["text_length"] = o_.text_length;
  io::write_file_atomic(dir + "/fashionbert.json", j.dump(2) + "\n");
  io::write_file_atomic(dir + "/train_config.toml", root_.to_toml() + "\n");
}

// ------------------------------------------------------------------------------------------------- scoring
std::vector<float> FashionBertApp::score_pairs(const PairSet& s,
                                               const std::vector<std::pair<int64_t, int64_t>>& pairs,
                                               std::vector<float>* logits) {
  torch::NoGradGuard ng;
  const bool was_training = model_->module().is_training();
  model_->module().eval();
  std::vector<float> scores;
  scores.reserve(pairs.size());
  const int64_t pad = tok_->vocab().pad_id(), P = o_.enc.image.num_patches();
  for (size_t start = 0; start < pairs.size(); start += size_t(o_.eval_batch_size)) {
    const size_t end = std::min(pairs.size(), start + size_t(o_.eval_batch_size));
    const auto B = static_cast<int64_t>(end - start);
    int64_t longest = 0;
    std::vector<int64_t> images;
    for (size_t k = start; k < end; ++k) {
      longest = std::max<int64_t>(longest, static_cast<int64_t>(s.ids[size_t(pairs[k].second)].size()));
      images.push_back(s.rows[size_t(pairs[k].first)]);
    }
    at::Tensor ids = torch::full({B, longest}, pad, torch::kLong),
               attn = torch::zeros({B, longest}, torch::kLong);
    for (size_t k = start; k < end; ++k) {
      const auto& v = s.ids[size_t(pairs[k].second)];
      const auto b = static_cast<int64_t>(k - start);
      std::memcpy(ids[b].data_ptr<int64_t>(), v.data(), v.size() * sizeof(int64_t));
      attn[b].slice(0, 0, static_cast<int64_t>(v.size())).fill_(1);
    }
    TensorMap in;
    in["input_ids"] = ids;
    in["token_type_ids"] = torch::zeros({B, longest}, torch::kLong);
    in["patch_features"] = s.features.patches(images);
    if (o_.ablation == "text_only") {
      in["patch_attention_mask"] = torch::zeros({B, P}, torch::kLong);  // the image is hidden
    } else if (o_.ablation == "image_only") {
      attn.slice(1, 1, longest).zero_();  // only [CLS] of the text remains
    }
    in["attention_mask"] = attn;
    auto l = model_->forward(in).at("itm_logits").to(torch::kFloat).contiguous();
    auto p = torch::softmax(l, -1).select(1, 0).contiguous();
    if (logits) logits->insert(logits->end(), l.data_ptr<float>(), l.data_ptr<float>() + 2 * B);
    scores.insert(scores.end(), p.data_ptr<float>(), p.data_ptr<float>() + B);
  }
  if (was_training) model_->module().train();
  return scores;
}

std::map<std::string, double> FashionBertApp::retrieval_metrics(const PairSet& s, int64_t max_queries) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<int64_t> queries(static_cast<size_t>(s.size()));
  std::iota(queries.begin(), queries.end(), 0);
  if (max_queries > 0 && max_queries < s.size()) {
    std::mt19937_64 rng(static_cast<uint64_t>(o_.eval_seed));
    std::shuffle(queries.begin(), queries.end(), rng);
    queries.resize(size_t(max_queries));
    std::sort(queries.begin(), queries.end());
  }
  NegativeDraw d = draw_negatives(s.sub, s.master, queries, o_.num_negatives, o_.negative_policy,
                                  static_cast<uint64_t>(o_.eval_seed));
  // Per query: the matching pair, then (image q, text n) for i2t and (image n, text q) for t2i.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t qi = 0; qi < queries.size(); ++qi) {
    const int64_t q = queries[qi];
    pairs.emplace_back(q, q);
    for (int64_t n : d.negatives[qi]) pairs.emplace_back(q, n);
    for (int64_t n : d.negatives[qi]) pairs.emplace_back(n, q);
  }
  std::vector<float> sc = score_pairs(s, pairs);
  std::vector<int64_t> i2t, t2i;
  std::vector<float> pos, neg;
  size_t at = 0;
  double pos_right = 0, neg_right = 0;
  for (size_t qi = 0; qi < queries.size(); ++qi) {
    const size_t k = d.negatives[qi].size();
    const float p = sc[at];
    std::vector<float> a{p}, b{p};
    a.insert(a.end(), sc.begin() + long(at + 1), sc.begin() + long(at + 1 + k));
    b.insert(b.end(), sc.begin() + long(at + 1 + k), sc.begin() + long(at + 1 + 2 * k));
    const uint64_t seed = static_cast<uint64_t>(o_.eval_seed) * 7919u + uint64_t(queries[qi]);
    i2t.push_back(positive_rank(a, seed));
    t2i.push_back(positive_rank(b, seed + 1));
    pos.push_back(p);
    pos_right += p > 0.5f ? 1 : 0;
    for (size_t j = at + 1; j < at + 1 + 2 * k; ++j) {
      neg.push_back(sc[j]);
      neg_right += sc[j] <= 0.5f ? 1 : 0;
    }
    at += 1 + 2 * k;
  }
  const std::vector<int64_t> ks{1, 5, 10, 100};
  std::map<std::string, double> m = rank_at(i2t, ks, "i2t_");
  for (auto& [key, v] : rank_at(t2i, ks, "t2i_")) m[key] = v;
  m["mean_rank@10"] = 0.5 * (m["i2t_rank@10"] + m["t2i_rank@10"]);
  m["itm_auc"] = roc_auc(pos, neg);
  m["itm_acc"] =
      0.5 * (pos_right / double(pos.size()) + (neg.empty() ? 1.0 : neg_right / double(neg.size())));
  const double cands = queries.empty() ? 1.0 : double(d.negatives[0].size() + 1);
  m["queries"] = double(queries.size());
  m["candidates"] = cands;
  m["random_rank@1"] = 1.0 / cands;
  m["random_rank@10"] = std::min(1.0, 10.0 / cands);
  m["negatives_subcategory_share"] = double(d.from_sub) / double(queries.size());
  m["negatives_mastercategory_share"] = double(d.from_master) / double(queries.size());
  m["negatives_random_share"] = double(d.from_random) / double(queries.size());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m["pairs_per_second"] = double(pairs.size()) / std::max(secs, 1e-9);
  log_.info("retrieval: ", queries.size(), " queries x ", int64_t(cands), " candidates, ", pairs.size(),
            " pairs scored in ", fmt(secs, 2), " s (", fmt(m["pairs_per_second"], 1), " pairs/s)");
  return m;
}

// ------------------------------------------------------------------------------------------------- evaluate
// The saved model (with its image settings and tokenizer) in eval mode, and the pairs of the first table.
PairSet FashionBertApp::open_saved_model(std::string& dir) {
  dir = app::saved_model_dir(o_.pretrained, o_.checkpoint_dir);
  read_saved_image_settings(dir);
  setup_tokenizer(dir);
  auto tables = app::input_tables(root_);
  make_model(dir);
  model_->module().eval();
  return load_pairs(tables[0], o_.eval_split);
}

void FashionBertApp::run_evaluate() {
  std::string dir;
  PairSet s = open_saved_model(dir);
  auto m = retrieval_metrics(s, o_.max_queries);
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
    log_.info("evaluation", o_.ablation == "none" ? std::string() : " (ablation " + o_.ablation + ")", ": ",
              line);
    std::cout << "retrieval on " << int64_t(m["queries"]) << " queries x " << int64_t(m["candidates"])
              << " candidates" << (o_.ablation == "none" ? "" : " (ablation " + o_.ablation + ")") << "\n";
    for (const char* dirn : {"i2t", "t2i"}) {
      std::cout << "  " << dirn << ":";
      for (int k : {1, 5, 10, 100})
        std::cout << " Rank@" << k << " "
                  << fmt(100 * m[std::string(dirn) + "_rank@" + std::to_string(k)], 2);
      std::cout << "\n";
    }
    std::cout << "  random: Rank@1 " << fmt(100 * m["random_rank@1"], 2) << " Rank@10 "
              << fmt(100 * m["random_rank@10"], 2) << "; ITM ACC " << fmt(m["itm_acc"]) << " AUC "
              << fmt(m["itm_auc"]) << "\nmetrics written to " << out << std::endl;
  }
}

// ------------------------------------------------------------------------------------------------- predict
void FashionBertApp::run_predict() {
  std::string dir;
  PairSet s = open_saved_model(dir);
  auto tables = app::input_tables(root_);
  std::string outputs = root_.get_string("predict.outputs");
  if (outputs.empty()) outputs = (o_.checkpoint_dir.empty() ? dir : o_.checkpoint_dir) + "/predictions.tsv";
  auto schema = root_.get_string_list("predict.output_schema");
  auto append = root_.get_string_list("predict.append_cols");
  const std::vector<std::string> known = o_.retrieval == "none"
                                             ? std::vector<std::string>{"itm_score", "itm_logits"}
                                             : std::vector<std::string>{"topk_ids", "topk_scores"};
  if (schema.empty() || (schema.size() == 1 && schema[0] == "itm_score" && o_.retrieval != "none"))
    schema = o_.retrieval == "none" ? std::vector<std::string>{"itm_score"}
                                    : std::vector<std::string>{"topk_ids", "topk_scores"};
  for (auto& c : schema)
    if (std::find(known.begin(), known.end(), c) == known.end()) {
      std::string k;
      for (auto& x : known) k += (k.empty() ? "" : ", ") + x;
      throw ConfigError("predict.output_schema names '" + c + "', not a column of this mode",
                        root_.where("predict.output_schema"),
                        "with predict.retrieval = \"" + o_.retrieval + "\" the columns are: " + k);
    }
  std::vector<int64_t> append_idx;
  for (auto& c : append) {
    auto it = std::find(s.table.header.begin(), s.table.header.end(), c);
    if (it == s.table.header.end())
      throw ConfigError("predict.append_cols names '" + c + "', not a column of " + tables[0],
                        root_.where("predict.append_cols"));
    append_idx.push_back(it - s.table.header.begin());
  }
  std::ostringstream os;
  if (root_.get_bool("predict.header")) {
    std::string h;
    for (auto& c : schema) h += (h.empty() ? "" : "\t") + c;
    for (auto& c : append) h += (h.empty() ? "" : "\t") + c;
    os << h << "\n";
  }
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (o_.retrieval == "none") {
    for (int64_t i = 0; i < s.size(); ++i) pairs.emplace_back(i, i);
  } else {  // every query against the whole gallery (the table's other side)
    for (int64_t q = 0; q < s.size(); ++q)
      for (int64_t g = 0; g < s.size(); ++g)
        pairs.emplace_back(o_.retrieval == "i2t" ? q : g, o_.retrieval == "i2t" ? g : q);
  }
  std::vector<float> logits;
  std::vector<float> sc = score_pairs(s, pairs, o_.retrieval == "none" ? &logits : nullptr);
  for (int64_t i = 0; i < s.size(); ++i) {
    std::vector<std::string> cells;
    if (o_.retrieval == "none") {
      const float p = sc[size_t(i)];
      for (auto& c : schema) {
        if (c == "itm_score") {
          cells.push_back(fmt(p, 6));
        } else {
          cells.push_back(app::json_floats(logits.data() + 2 * i, 2));
        }
      }
    } else {
      std::vector<int64_t> order(static_cast<size_t>(s.size()));
      std::iota(order.begin(), order.end(), 0);
      const float* row = sc.data() + i * s.size();
      const auto k = std::min<int64_t>(o_.top_k, s.size());
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&](int64_t a, int64_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
      std::string ids, scores;
      for (int64_t j = 0; j < k; ++j) {
        ids += (j ? "," : "") + s.table.id[size_t(s.rows[size_t(order[size_t(j)])])];
        scores += (j ? "," : "") + fmt(row[order[size_t(j)]], 6);
      }
      for (auto& c : schema) cells.push_back(c == "topk_ids" ? ids : scores);
    }
    for (int64_t a : append_idx) cells.push_back(s.table.extra[size_t(s.rows[size_t(i)])][size_t(a)]);
    std::string line;
    for (auto& c : cells) line += (line.empty() ? "" : "\t") + c;
    os << line << "\n";
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (ctx_.world().is_main()) {
    if (fs::path(outputs).has_parent_path()) fs::create_directories(fs::path(outputs).parent_path());
    io::write_file_atomic(outputs, os.str());
    log_.info("predict: ", s.size(), " rows, ", pairs.size(), " pairs scored in ", fmt(secs, 2), " s (",
              fmt(double(pairs.size()) / std::max(secs, 1e-9), 1), " pairs/s)");
    std::cout << "predictions written to " << outputs << " (" << s.size() << " rows)" << std::endl;
  }
}

}  // namespace et::apps::fashionbert
