// batch_source.cpp: BatchSource defaults and DatasetSource (seeded plans, rank slices, prefetch).
#include "ethost/data/batch_source.h"

#include "ethost/data/batcher.h"
#include "ethost/error.h"

namespace et::data {

BatchSource::~BatchSource() = default;
std::string BatchSource::cursor() const { return {}; }
void BatchSource::restore_cursor(const std::string& cursor) {
  if (!cursor.empty())
    throw DataError("this data source cannot restore a data cursor", "", "resume with the same data setup");
}

struct DatasetSource::State {
  const Dataset& ds;
  SourceOptions o;
  PlanOptions global, local;  // global: batches of micro_batch_size * world_size; local: this rank's slices
  int64_t batches = -1;
  std::unique_ptr<Prefetcher> pf;
  std::vector<int64_t> global_sizes;
  size_t pos = 0;
  double waited = 0;  // by the prefetchers of earlier epochs
  explicit State(const Dataset& d) : ds(d) {}
};

DatasetSource::DatasetSource(const Dataset& dataset) : s_(std::make_unique<State>(dataset)) {}
DatasetSource::~DatasetSource() = default;

void DatasetSource::configure(const SourceOptions& o) {
  s_->o = o;
  PlanOptions& g = s_->global;
  g.batch_size = o.micro_batch_size * o.world_size;
  g.shuffle = o.shuffle;
  g.seed = o.seed;
  g.bucket_by_length = o.bucket_by_length;
  s_->local = g;
  s_->local.shard_index = o.rank;
  s_->local.num_shards = o.world_size;
  s_->batches = -1;
}

int64_t DatasetSource::batches_per_epoch() {
  if (s_->batches < 0) s_->batches = static_cast<int64_t>(plan_epoch(s_->ds, s_->global, 0).size());
  return s_->batches;
}

int64_t DatasetSource::num_examples() const { return s_->ds.size(); }

void DatasetSource::start_epoch(int64_t epoch, int64_t first_batch) {
  if (s_->pf) s_->waited += s_->pf->wait_seconds();
  s_->pf.reset();
  s_->global_sizes.clear();
  for (auto& b : plan_epoch(s_->ds, s_->global, epoch))
    s_->global_sizes.push_back(static_cast<int64_t>(b.size()));
  CollateContext ctx{epoch, 0, s_->o.seed, true};
  s_->pf = std::make_unique<Prefetcher>(s_->ds, plan_epoch(s_->ds, s_->local, epoch),
                                        static_cast<size_t>(first_batch), s_->o.prefetch, ctx);
  s_->pos = static_cast<size_t>(first_batch);
}

bool DatasetSource::next(Batch& batch) {
  if (!s_->pf) throw InternalError("DatasetSource::next before start_epoch");
  if (!s_->pf->next(batch)) return false;
  batch.global_size = s_->global_sizes.at(s_->pos++);
  return true;
}

double DatasetSource::wait_seconds() const { return s_->waited + (s_->pf ? s_->pf->wait_seconds() : 0.0); }

}  // namespace et::data
