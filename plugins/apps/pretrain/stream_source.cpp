// stream_source.cpp: global batches of the packed stream, this rank's slice, masking, and the data cursor.
#include "stream_source.h"

#include <ethost/data/batcher.h>
#include <ethost/error.h>

#include <chrono>
#include <nlohmann/json.hpp>

namespace et::apps::pretrain {

data::FeatureSchema pretrain_schema(int64_t pad_id, bool pair) {
  auto s = data::FeatureSchema::bert_text(pad_id);
  s.sequence("mlm_labels", -100);
  if (pair) s.scalar("next_sentence_label");
  s.length_feature = "input_ids";
  return s;
}

data::Example masked_example(const Instance& in, const MaskSpec& spec, int64_t epoch, int64_t index) {
  auto rng = data::masking_rng(spec.seed, spec.dynamic ? static_cast<uint64_t>(epoch) : 0,
                               static_cast<uint64_t>(index));
  data::MaskedTokens m = data::mask_tokens(in.input_ids, in.word_ids, spec.mlm, spec.vocab, rng);
  data::Example ex;
  ex.set("input_ids", data::Feature::sequence(std::vector<int32_t>(m.input_ids.begin(), m.input_ids.end())));
  ex.set("token_type_ids", data::Feature::sequence(in.token_type_ids));
  ex.set("mlm_labels", data::Feature::sequence(std::move(m.labels)));
  if (in.pair_label >= 0) ex.set("next_sentence_label", data::Feature::scalar(in.pair_label));
  return ex;
}

StreamSource::StreamSource(std::unique_ptr<Corpus> corpus, std::unique_ptr<Packer> packer, MaskSpec spec,
                           bool pair, int64_t pad_id)
    : corpus_(std::move(corpus)),
      packer_(std::move(packer)),
      spec_(std::move(spec)),
      pair_(pair),
      schema_(pretrain_schema(pad_id, pair)),
      log_(log::get("plugin.app.pretrain")) {}

StreamSource::~StreamSource() = default;

void StreamSource::configure(const data::SourceOptions& o) {
  o_ = o;
  if (o_.micro_batch_size < 1) throw ConfigError("train.micro_batch_size must be at least 1");
}

void StreamSource::restore_cursor(const std::string& c) { restored_ = c; }

std::string StreamSource::cursor() const {
  return nlohmann::json{{"epoch", epoch_}, {"batch", batch_}, {"packer", packer_->state()}}.dump();
}

void StreamSource::start_epoch(int64_t epoch, int64_t first_batch) {
  end_logged_ = false;
  docs_base_ = corpus_->documents();
  excluded_base_ = corpus_->excluded();
  whole_pass_ = true;
  if (!restored_.empty()) {
    nlohmann::json j = nlohmann::json::parse(restored_, nullptr, false);
    restored_.clear();
    if (j.is_object() && j.value("epoch", int64_t(-1)) == epoch &&
        j.value("batch", int64_t(-1)) == first_batch && j.contains("packer") && j["packer"].is_string()) {
      packer_->restore(j["packer"].get<std::string>());
      epoch_ = epoch;
      batch_ = first_batch;
      whole_pass_ = first_batch == 0;
      return;
    }
  }
  epoch_ = epoch;
  packer_->restart(epoch);
  batch_ = 0;
  std::vector<Instance> skipped;
  while (batch_ < first_batch && fill(skipped)) ++batch_;  // no saved cursor: replay the stream
}

// The sequences of the next global batch (fewer at the end of the stream).
bool StreamSource::fill(std::vector<Instance>& global) {
  global.clear();
  const int64_t g = o_.micro_batch_size * o_.world_size;
  Instance in;
  while (static_cast<int64_t>(global.size()) < g && packer_->next(in)) global.push_back(std::move(in));
  if (static_cast<int64_t>(global.size()) < g && o_.rank == 0 && !end_logged_) {
    end_logged_ = true;
    std::string bad = corpus_->bad_rows().summary();
    const int64_t docs = corpus_->documents() - docs_base_, excluded = corpus_->excluded() - excluded_base_;
    if (whole_pass_ && excluded_pass_ < 0) excluded_pass_ = excluded;
    log_.info("end of the training stream (epoch ", epoch_ + 1,
              whole_pass_ ? "" : ", counted since the resume", "): ", docs, " documents, ", packer_->index(),
              " sequences, ", packer_->tokens_read(), " tokens",
              excluded ? ", " + std::to_string(excluded) + " rows dropped that repeat data.exclude_tables"
                       : std::string(),
              bad.empty() ? std::string() : "; " + bad);
  }
  return !global.empty();
}

bool StreamSource::next(data::Batch& batch) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Instance> global;
  const int64_t first = packer_->index();
  const bool got = fill(global);
  if (!got && batch_ == 0)  // an epoch without a single sequence would never end the run
    throw DataError("the training stream has no sequences (every row was empty, bad or excluded)",
                    corpus_->options().files.empty() ? "" : corpus_->options().files[0],
                    "check data.tables, data.text_fields, data.exclude_tables and the bad-row report");
  if (got) {
    const int64_t b = static_cast<int64_t>(o_.rank) * o_.micro_batch_size;
    std::vector<data::Example> mine;
    for (int64_t k = b; k < std::min<int64_t>(b + o_.micro_batch_size, int64_t(global.size())); ++k)
      mine.push_back(masked_example(global[size_t(k)], spec_, epoch_, first + k));
    std::vector<const data::Example*> ptrs;
    for (auto& e : mine) ptrs.push_back(&e);
    batch = ptrs.empty() ? data::Batch() : data::collate_examples(schema_, ptrs);
    batch.global_size = static_cast<int64_t>(global.size());
    ++batch_;
  }
  wait_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return got;
}

}  // namespace et::apps::pretrain
