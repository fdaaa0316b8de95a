// stream_source.h: the trainer's batches from the packed stream — every rank reads the same stream and keeps
// its slice of each global batch (so a run resumes exactly, at any world size with the same global batch),
// masked from a generator of (seed, epoch, sequence index): dynamic per epoch, or static.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ethost/data/batch_source.h>
#include <ethost/data/mlm_masking.h>
#include <ethost/log.h>

#include "packer.h"

namespace et::apps::pretrain {

struct MaskSpec {
  data::MlmMaskingOptions mlm;
  data::MaskVocab vocab;
  bool dynamic = true;  // false: the same masks every epoch
  uint64_t seed = 42;
};

// The batch features: input_ids (+ attention_mask), token_type_ids, mlm_labels (-100 padded) and, for
// pair tasks, next_sentence_label.
data::FeatureSchema pretrain_schema(int64_t pad_id, bool pair);
// One masked training example of a sequence.
data::Example masked_example(const Instance& in, const MaskSpec& spec, int64_t epoch, int64_t index);

class StreamSource final : public data::BatchSource {
 public:
  StreamSource(std::unique_ptr<Corpus> corpus, std::unique_ptr<Packer> packer, MaskSpec spec, bool pair,
               int64_t pad_id);
  ~StreamSource() override;
  void configure(const data::SourceOptions& options) override;
  int64_t batches_per_epoch() override { return -1; }
  int64_t num_examples() const override { return -1; }
  void start_epoch(int64_t epoch, int64_t first_batch) override;
  bool next(data::Batch& batch) override;
  double wait_seconds() const override { return wait_; }
  std::string cursor() const override;
  void restore_cursor(const std::string& cursor) override;

  Corpus& corpus() { return *corpus_; }
  // Rows dropped for repeating data.exclude_tables in one full pass (-1 before a pass was read to its end).
  int64_t excluded_per_pass() const { return excluded_pass_; }

 private:
  bool fill(std::vector<Instance>& global);

  std::unique_ptr<Corpus> corpus_;
  std::unique_ptr<Packer> packer_;
  MaskSpec spec_;
  bool pair_;
  data::FeatureSchema schema_;
  data::SourceOptions o_;
  int64_t epoch_ = 0, batch_ = 0;
  std::string restored_;
  double wait_ = 0;
  bool end_logged_ = false;
  // The corpus counters when this pass started (the counters run over every pass), and whether the pass
  // began at its start (false: resumed in its middle, so the counts cover only the rest of it).
  int64_t docs_base_ = 0, excluded_base_ = 0, excluded_pass_ = -1;
  bool whole_pass_ = true;
  log::Logger log_;
};

}  // namespace et::apps::pretrain
