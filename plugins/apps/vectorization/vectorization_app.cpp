// vectorization_app.cpp: features under EasyNLP's names, and the corpus index (--mode train) and top-k search
// (--mode predict) of text -> text semantic search.
#include "vectorization_app.h"

#include <ethost/app/predict_driver.h>
#include <ethost/app/text_features.h>
#include <ethost/data/batcher.h>
#include <ethost/error.h>
#include <ethost/io/state_dict.h>
#include <ethost/nn/pooling.h>
#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace et::apps::vectorization {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

// The two-tower settings of a text_match model directory (nullopt: not such a model).
std::optional<nlohmann::json> tower_settings(const std::string& dir) {
  std::ifstream in(dir + "/text_match.json");
  if (!in) return std::nullopt;
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.value("two_tower", false)) return std::nullopt;
  return j;
}

std::string json_row(const float* p, int64_t n) { return app::json_floats(p, n); }

const at::Tensor& need(const TensorMap& out, const char* name, const char* why) {
  auto it = out.find(name);
  if (it == out.end() || !it->second.defined())
    throw DataError(std::string("the model gives no ") + name + " (" + why + ")");
  return it->second;
}

}  // namespace

VectorizationApp::VectorizationApp(const ConfigView& c, Context& ctx)
    : SupervisedApp(c, ctx, "vectorization") {
  first_ = c.get_string("data.first_sequence");
  id_column_ = c.get_string("data.id_column");
  pooling_ = c.get_string("pooling");
  normalize_ = c.get_bool("normalize");
  top_k_ = c.get_int("top_k");
  spec_.type = c.get_string("index.type");
  spec_.nlist = c.get_int("index.nlist");
  spec_.nprobe = c.get_int("index.nprobe");
  spec_.hnsw_m = c.get_int("index.hnsw_m");
  spec_.ef_construction = c.get_int("index.ef_construction");
  spec_.ef_search = c.get_int("index.ef_search");
  if (options().pretrained.empty())
    throw ConfigError(
        "app/vectorization needs a model: set pretrain_model_name_or_path (an HF BERT checkpoint "
        "directory, or a two-tower text_match model)",
        c.where("pretrain_model_name_or_path"));
  if (auto t = tower_settings(options().pretrained)) {
    tower_model_ = true;
    tower_pooling_ = t->value("pooling", "mean");
    tower_embedding_size_ = t->value("embedding_size", int64_t(0));
  }
}

void VectorizationApp::run(Mode mode) {
  switch (mode) {
    case Mode::train:
      return build_index();
    case Mode::evaluate:
      throw UsageError(
          "app/vectorization has no evaluate mode", "--mode",
          "train embeds data.tables into a search index; predict writes features or search results");
    default:
      return SupervisedApp::run(mode);
  }
}

std::string VectorizationApp::describe_task() const {
  return tower_model_ ? "vectorization (the text_match model's two-tower embedding)"
                      : "vectorization (" + pooling_ + " pooling)";
}

std::string VectorizationApp::index_dir() const {
  const std::string d = root().get_string("index.dir");
  return d.empty() ? options().pretrained + "/index" : d;
}

void VectorizationApp::bind_columns(const std::vector<data::Column>& cols, bool, const std::string& where) {
  col_text_ = data::column_index(cols, first_, "data.first_sequence (" + where + ")");
  has_id_ = !id_column_.empty();
  if (has_id_) col_id_ = data::column_index(cols, id_column_, "data.id_column (" + where + ")");
}

data::FeatureSchema VectorizationApp::features() const {
  return data::FeatureSchema::bert_text(tokenizer().vocab().pad_id());
}

void VectorizationApp::configure_model(Config& mc) const {
  if (tower_model_) {
    mc.set_string_list("heads", {"sentence_embedding"}, "app/vectorization");
    mc.set_string("pooling", tower_pooling_, "app/vectorization (text_match.json)");
    mc.set_int("embedding_size", tower_embedding_size_, "app/vectorization (text_match.json)");
  } else {
    mc.set_string_list("heads", {}, "app/vectorization");  // the encoder and its pooler (HF BertModel)
  }
}

std::optional<data::Example> VectorizationApp::encode(const Row& row, std::string& reason, bool) const {
  text::Encoding enc = tokenizer().encode(row.values[col_text_]);
  if (enc.invalid_utf8) {
    reason = "text is not valid UTF-8";
    return std::nullopt;
  }
  data::Example ex;
  app::set_bert_text(ex, enc);
  return ex;
}

app::EvalReport VectorizationApp::evaluate_on(const data::Dataset&) {
  throw UsageError("app/vectorization has no evaluation set");
}

at::Tensor VectorizationApp::search_embedding(const TensorMap& out, const data::Batch& batch) const {
  at::Tensor e;
  if (tower_model_)
    e = need(out, "sentence_embedding", "two-tower head");
  else if (pooling_ == "pooler")
    e = need(out, "pooler_output", "pooling = \"pooler\" needs a pooler");
  else
    e = nn::pool_tokens(need(out, "last_hidden_state", "encoder"), batch.tensors.at("attention_mask"),
                        pooling_);
  e = e.to(torch::kFloat);
  if (normalize_)
    e = torch::nn::functional::normalize(
        e, torch::nn::functional::NormalizeFuncOptions().p(2).dim(1).eps(1e-12));
  return e.contiguous();
}

void VectorizationApp::build_index() {
  if (!context().world().is_main()) {
    logger().info("the index is built on rank 0 only");
    return;
  }
  auto* predictor = static_cast<Predictor*>(query_interface(Predictor::kInterfaceId));
  predictor->prepare_predict();  // tokenizer and model of pretrain_model_name_or_path, in eval mode
  const auto t0 = clock_type::now();
  app::input_tables(root());
  auto reader = open_reader(options().tables);
  bind_columns(reader->columns(), false, "corpus");
  const auto schema = features();
  std::vector<std::string> ids, texts;
  std::vector<float> vectors;
  int64_t dim = 0;
  std::vector<data::Example> pending;
  auto flush = [&] {
    if (pending.empty()) return;
    std::vector<const data::Example*> ptrs;
    for (auto& e : pending) ptrs.push_back(&e);
    data::Batch b = data::collate_examples(schema, ptrs);
    torch::NoGradGuard no_grad;
    at::Tensor e = search_embedding(model().forward(model_inputs(b)), b);
    dim = e.size(1);
    vectors.insert(vectors.end(), e.data_ptr<float>(), e.data_ptr<float>() + e.numel());
    pending.clear();
  };
  Row row;
  std::string why;
  while (reader->next(row)) {
    auto ex = encode(row, why, false);
    if (!ex) {
      reader->bad_rows().report(options().tables[0], reader->rows_read(), why);
      continue;
    }
    ids.push_back(has_id_ ? row.values[col_id_] : std::to_string(reader->rows_read() - 1));
    texts.push_back(row.values[col_text_]);
    pending.push_back(std::move(*ex));
    if (int64_t(pending.size()) == options().eval_batch_size) flush();
  }
  flush();
  if (std::string bad = reader->bad_rows().summary(); !bad.empty()) logger().warn("corpus: ", bad);
  if (texts.empty())
    throw DataError("the corpus is empty", options().tables[0], "give data.tables the texts to index");
  const double embed_s = seconds_since(t0);
  const auto t1 = clock_type::now();
  VectorIndex index = VectorIndex::build(spec_, dim, vectors.data(), int64_t(texts.size()));
  const double build_s = seconds_since(t1);

  const std::string dir = index_dir();
  fs::create_directories(dir);
  index.save(dir + "/index.faiss");
  std::string corpus;
  for (size_t i = 0; i < texts.size(); ++i)
    corpus += nlohmann::json{{"id", ids[i]}, {"text", texts[i]}}.dump(
                  -1, ' ', false, nlohmann::json::error_handler_t::replace) +
              "\n";
  io::write_file_atomic(dir + "/corpus.jsonl", corpus);
  nlohmann::json meta = {{"index", index.describe()},     {"type", spec_.type},
                         {"count", texts.size()},         {"dim", dim},
                         {"model", options().pretrained}, {"embedding", describe_task()},
                         {"normalize", normalize_},       {"embed_seconds", embed_s},
                         {"build_seconds", build_s}};
  io::write_file_atomic(dir + "/index.json", meta.dump(2) + "\n");
  logger().info("embedded ", texts.size(), " texts in ", embed_s, " s (", double(texts.size()) / embed_s,
                " texts/s); built ", index.describe(), " in ", build_s, " s");
  std::cout << "indexed " << texts.size() << " texts (" << index.describe() << ") -> " << dir << std::endl;
}

void VectorizationApp::load_index() const {
  std::call_once(index_once_, [&] {
    const std::string dir = index_dir();
    if (!fs::exists(dir + "/index.faiss"))
      throw DataError("no search index here (index.faiss missing)", dir,
                      "build one with --mode train over the corpus, or set index.dir");
    index_ = VectorIndex::load(dir + "/index.faiss", spec_);
    std::ifstream in(dir + "/corpus.jsonl");
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!j.is_object())
        throw DataError("corpus.jsonl has a line that is not a JSON object", dir + "/corpus.jsonl");
      corpus_ids_.push_back(j.value("id", ""));
      corpus_texts_.push_back(j.value("text", ""));
    }
    if (int64_t(corpus_ids_.size()) != index_.size())
      throw DataError("corpus.jsonl has " + std::to_string(corpus_ids_.size()) + " rows for an index of " +
                          std::to_string(index_.size()),
                      dir, "rebuild the index with --mode train");
    logger().info("search index: ", index_.describe(), " from ", dir);
  });
}

std::vector<std::string> VectorizationApp::input_columns() const { return {first_}; }

std::vector<OutputColumn> VectorizationApp::output_columns() const {
  return {
      {"pooler_output", "BERT's pooler (tanh(dense([CLS]))) as a JSON array", true},
      {"first_token_output", "the last layer's [CLS] hidden state as a JSON array", true},
      {"mean_pooling_output", "the mean of the last layer over the text's tokens as a JSON array", true},
      {"all_hidden_outputs", "the last layer's hidden state of every token, a JSON array of arrays", true},
      {"sentence_embedding", "the search embedding (pooling, L2-normalised when normalize) as a JSON array",
       true},
      {"search_ids", "search: the ids of the top_k corpus texts (JSON array), best first", true},
      {"search_texts", "search: their texts (JSON array)", true},
      {"search_scores", "search: their scores (cosines when normalize; JSON array)", true}};
}

void VectorizationApp::postprocess(const TensorMap& out, const data::Batch& batch,
                                   const std::vector<PredictItem>& items,
                                   const std::vector<std::string>& columns,
                                   std::vector<std::vector<std::string>>& cells) const {
  const int64_t B = int64_t(items.size());
  std::map<std::string, at::Tensor> vec;  // [B, D] per vector column
  at::Tensor last, lengths;
  std::vector<float> scores;
  std::vector<int64_t> hits;
  int64_t k = 0;
  for (const auto& col : columns) {
    if (col == "pooler_output")
      vec[col] =
          need(out, "pooler_output", "a two-tower model has no pooler unless its pooling is \"pooler\"")
              .to(torch::kFloat)
              .contiguous();
    else if (col == "first_token_output")
      vec[col] = need(out, "last_hidden_state", "encoder").select(1, 0).to(torch::kFloat).contiguous();
    else if (col == "mean_pooling_output")
      vec[col] = nn::pool_tokens(need(out, "last_hidden_state", "encoder"),
                                 batch.tensors.at("attention_mask"), "mean")
                     .to(torch::kFloat)
                     .contiguous();
    else if (col == "sentence_embedding")
      vec[col] = search_embedding(out, batch);
    else if (col == "all_hidden_outputs") {
      last = need(out, "last_hidden_state", "encoder").to(torch::kFloat).contiguous();
      lengths = batch.tensors.at("attention_mask").sum(1).to(torch::kLong).contiguous();
    } else if (k == 0) {  // a search column: search once for all of them
      load_index();
      at::Tensor q = search_embedding(out, batch);
      if (q.size(1) != index_.dim())
        throw DataError("the index holds " + std::to_string(index_.dim()) + "-d vectors, the model gives " +
                            std::to_string(q.size(1)),
                        index_dir(), "rebuild the index with this model and pooling");
      k = std::min<int64_t>(top_k_, index_.size());
      scores.resize(size_t(B * k));
      hits.resize(size_t(B * k));
      index_.search(q.data_ptr<float>(), B, k, scores.data(), hits.data());
    }
  }
  for (int64_t r = 0; r < B; ++r) {
    std::vector<std::string> row;
    for (const auto& col : columns) {
      if (auto it = vec.find(col); it != vec.end()) {
        const int64_t D = it->second.size(1);
        row.push_back(json_row(it->second.data_ptr<float>() + r * D, D));
      } else if (col == "all_hidden_outputs") {
        const int64_t T = lengths[r].item<int64_t>(), H = last.size(2);
        std::string s = "[";
        for (int64_t t = 0; t < T; ++t)
          s += (t ? "," : "") + json_row(last.data_ptr<float>() + (r * last.size(1) + t) * H, H);
        row.push_back(s + "]");
      } else {
        nlohmann::json a = nlohmann::json::array();
        for (int64_t j = 0; j < k; ++j) {
          const int64_t id = hits[size_t(r * k + j)];
          if (id < 0) continue;
          if (col == "search_ids")
            a.push_back(corpus_ids_[size_t(id)]);
          else if (col == "search_texts")
            a.push_back(corpus_texts_[size_t(id)]);
          else
            a.push_back(scores[size_t(r * k + j)]);
        }
        row.push_back(a.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      }
    }
    cells.push_back(std::move(row));
  }
}

}  // namespace et::apps::vectorization
