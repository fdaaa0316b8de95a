// data_test.cpp: the SDK data layer — schemas, bad-row accounting, seeded epoch plans (shuffle, bucketing,
// shards), collation with dynamic padding, the prefetcher, parallel dataset building — and LR schedules.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <numeric>
#include <set>

#include "ethost/data/batcher.h"
#include "ethost/data/dataset.h"
#include "ethost/data/schema.h"
#include "ethost/error.h"
#include "ethost/train/lr_schedule.h"

using namespace et::data;

namespace {

Dataset make_dataset(int n) {
  Dataset ds;
  for (int i = 0; i < n; ++i) {
    Example e;
    e.input_ids.assign(size_t(2 + i % 7), 5);
    e.token_type_ids.assign(e.input_ids.size(), 0);
    e.labels = {i % 3};
    e.index = i;
    ds.examples.push_back(e);
  }
  return ds;
}

// A reader over in-memory rows, for build_dataset.
class VectorReader final : public et::Reader {
 public:
  explicit VectorReader(std::vector<std::string> v) : values_(std::move(v)) {}
  void open(const std::vector<std::string>&, int, int) override {}
  std::vector<Column> columns() const override { return {{"text", "str", 1}}; }
  bool next(et::Row& r) override {
    if (pos_ >= values_.size()) return false;
    r.values = {values_[pos_]};
    r.file = "mem";
    r.line = static_cast<int64_t>(++pos_);
    return true;
  }
  BadRows& bad_rows() override { return bad_; }
  int64_t rows_read() const override { return static_cast<int64_t>(pos_); }

 private:
  std::vector<std::string> values_;
  size_t pos_ = 0;
  BadRows bad_;
};

}  // namespace

TEST_SUITE("unit.data") {
  TEST_CASE("input schemas: parse, errors, cell checks, UTF-8") {
    auto cols = parse_input_schema("text:str:1, label:str:1,vec:float:3,n:int", "data.input_schema");
    REQUIRE(cols.size() == 4);
    CHECK(cols[2].type == "float");
    CHECK(cols[2].length == 3);
    CHECK(cols[3].length == 1);
    CHECK(column_index(cols, "label", "x") == 1);
    CHECK_THROWS_WITH_AS(column_index(cols, "nope", "data.label_name"),
                         doctest::Contains("column 'nope' is not in the input schema"), et::ConfigError);
    CHECK_THROWS_AS(parse_input_schema("a:text:1", "k"), et::ConfigError);
    CHECK_THROWS_AS(parse_input_schema("a:str:0", "k"), et::ConfigError);
    CHECK_THROWS_AS(parse_input_schema("a,a", "k"), et::ConfigError);
    CHECK(check_cell(cols[2], "1,2.5,-3e2").empty());
    CHECK(check_cell(cols[2], "1,2").find("needs 3") != std::string::npos);
    CHECK(check_cell(cols[3], "4x").find("not an integer") != std::string::npos);
    CHECK(check_cell(cols[0], "ok 中文").empty());
    CHECK_FALSE(check_cell(cols[0], std::string("\xff\xfe")).empty());
    CHECK_FALSE(valid_utf8("\xc0\xaf"));      // overlong
    CHECK_FALSE(valid_utf8("\xed\xa0\x80"));  // surrogate
    CHECK(valid_utf8("\xf0\x9f\x98\x80"));
  }

  TEST_CASE("bad rows: counted with file:line, summarised, fatal in strict mode") {
    BadRows b;
    for (int i = 1; i <= 7; ++i) b.report("a.tsv", i, "reason " + std::to_string(i));
    CHECK(b.count() == 7);
    CHECK(b.examples().size() == 5);
    CHECK(b.summary().rfind("7 bad rows skipped (first: a.tsv:1: reason 1; ", 0) == 0);
    BadRows strict(true);
    try {
      strict.report("b.tsv", 3, "wrong");
      FAIL("expected DataError");
    } catch (const et::DataError& e) {
      CHECK(std::string(e.what()).find("b.tsv:3: bad row: wrong") != std::string::npos);
      CHECK(e.exit_code() == 4);
    }
  }

  TEST_CASE("epoch plans: deterministic per (seed, epoch), a permutation, different across epochs") {
    auto ds = make_dataset(103);
    PlanOptions o;
    o.batch_size = 10;
    auto a = plan_epoch(ds, o, 0), b = plan_epoch(ds, o, 0), c = plan_epoch(ds, o, 1);
    CHECK(a == b);
    CHECK(a != c);
    REQUIRE(a.size() == 11);
    CHECK(a.back().size() == 3);
    std::vector<int64_t> all;
    for (auto& x : a) all.insert(all.end(), x.begin(), x.end());
    std::sort(all.begin(), all.end());
    std::vector<int64_t> expect(103);
    std::iota(expect.begin(), expect.end(), 0);
    CHECK(all == expect);
    o.drop_last = true;
    CHECK(plan_epoch(ds, o, 0).size() == 10);
    o.drop_last = false;
    o.shuffle = false;
    CHECK(plan_epoch(ds, o, 0)[0] == std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  }

  TEST_CASE("length bucketing groups similar lengths; shards split every global batch") {
    auto ds = make_dataset(700);
    PlanOptions o;
    o.batch_size = 10;
    o.bucket_by_length = true;
    int uniform = 0;
    for (auto& b : plan_epoch(ds, o, 0)) {
      std::set<size_t> lens;
      for (auto i : b) lens.insert(ds.examples[size_t(i)].input_ids.size());
      uniform += lens.size() == 1;
    }
    CHECK(uniform >= 60);  // of 70 batches
    PlanOptions g;
    g.batch_size = 8;
    auto global = plan_epoch(ds, g, 2);
    for (int s = 0; s < 2; ++s) {
      PlanOptions so = g;
      so.num_shards = 2;
      so.shard_index = s;
      auto part = plan_epoch(ds, so, 2);
      REQUIRE(part.size() == global.size());
      CHECK(part[0] == std::vector<int64_t>(global[0].begin() + 4 * s, global[0].begin() + 4 * s + 4));
    }
  }

  TEST_CASE("collate pads to the longest example and masks the padding") {
    auto ds = make_dataset(5);
    ds.examples[1].targets = {0.5f, 1.0f};
    auto b = collate(ds, {0, 3}, 7);
    CHECK(b.size == 2);
    CHECK(b.tokens == 2 + 5);
    auto ids = b.tensors.at("input_ids");
    CHECK(ids.sizes() == std::vector<int64_t>{2, 5});
    CHECK(ids[0][2].item<int64_t>() == 7);
    CHECK(b.tensors.at("attention_mask").sum().item<int64_t>() == 7);
    CHECK(torch::equal(b.tensors.at("labels"), torch::tensor({0, 0}, torch::kLong)));
    auto t = collate(ds, {1, 2}, 0).tensors.at("targets");
    CHECK(t.sizes() == std::vector<int64_t>{2, 2});
    CHECK(t[0][1].item<float>() == 1.0f);
    CHECK(t[1][0].item<float>() == 0.0f);
  }

  TEST_CASE("the prefetcher yields the plan's batches in order, from any starting batch") {
    auto ds = make_dataset(57);
    PlanOptions o;
    o.batch_size = 4;
    auto plan = plan_epoch(ds, o, 3);
    Prefetcher p(ds, plan, 5, 0, 3);
    Batch b;
    size_t i = 5;
    while (p.next(b)) {
      REQUIRE(i < plan.size());
      CHECK(b.indices == plan[i]);
      ++i;
    }
    CHECK(i == plan.size());
    CHECK(p.wait_seconds() >= 0.0);
  }

  TEST_CASE("build_dataset encodes in parallel, keeps input order, and reports bad rows") {
    std::vector<std::string> rows;
    for (int i = 0; i < 10000; ++i) rows.push_back(i % 1000 == 7 ? "bad" : std::to_string(i));
    VectorReader r(rows);
    auto ds = build_dataset(
        r,
        [](const et::Row& row, std::string& why) -> std::optional<Example> {
          if (row.values[0] == "bad") {
            why = "not a number";
            return std::nullopt;
          }
          Example e;
          e.labels = {std::stoll(row.values[0])};
          return e;
        },
        333);
    CHECK(ds.size() == 9990);
    CHECK(r.bad_rows().count() == 10);
    CHECK(r.bad_rows().examples()[0] == "mem:8: not a number");
    bool ordered = true;
    for (size_t i = 1; i < ds.examples.size(); ++i) ordered = ordered && ds.examples[i].labels[0] > ds.examples[i - 1].labels[0];
    CHECK(ordered);
    CHECK(ds.examples[100].index == 100);
  }

  TEST_CASE("LR schedules equal HF's formulas") {
    using et::train::make_lr_schedule;
    auto lin = make_lr_schedule("linear", 10, 100, 0, 1, 0.5);
    CHECK(lin.factor(0, 1) == 0.0);
    CHECK(lin.factor(5, 1) == doctest::Approx(0.5));
    CHECK(lin.factor(10, 1) == doctest::Approx(1.0));
    CHECK(lin.factor(55, 1) == doctest::Approx(0.5));
    CHECK(lin.factor(100, 1) == 0.0);
    auto cos = make_lr_schedule("cosine", 10, 100, 0, 1, 0.5);
    CHECK(cos.factor(55, 1) == doctest::Approx(0.5));
    CHECK(cos.factor(10, 1) == doctest::Approx(1.0));
    CHECK(cos.factor(100, 1) == doctest::Approx(0.0).epsilon(1e-12));
    auto poly = make_lr_schedule("polynomial", 10, 100, 0.1, 2.0, 0.5);
    CHECK(poly.factor(55, 1.0) == doctest::Approx(0.325));
    CHECK(poly.factor(200, 1.0) == doctest::Approx(0.1));
    auto cst = make_lr_schedule("constant", 10, 100, 0, 1, 0.5);
    CHECK(cst.factor(3, 1) == doctest::Approx(0.3));
    CHECK(cst.factor(70, 1) == 1.0);
    CHECK_THROWS_AS(make_lr_schedule("step", 0, 10, 0, 1, 0.5), et::ConfigError);
    CHECK_THROWS_AS(make_lr_schedule("linear", 20, 10, 0, 1, 0.5), et::ConfigError);
  }
}
