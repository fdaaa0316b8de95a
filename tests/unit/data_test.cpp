// data_test.cpp: the SDK data layer — schemas, bad-row accounting, seeded epoch plans (shuffle, bucketing,
// shards), collation with dynamic padding, the prefetcher, parallel dataset building — and LR schedules.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <mutex>
#include <numeric>
#include <set>

#include "ethost/data/batch_source.h"
#include "ethost/data/batcher.h"
#include "ethost/data/dataset.h"
#include "ethost/data/schema.h"
#include "ethost/error.h"
#include "ethost/train/lr_schedule.h"

using namespace et::data;

namespace {

// Text-like examples: input_ids of length 2 + i % 7 (all 5), token types 0, a class label i % 3.
Dataset make_dataset(int n, int64_t pad_id = 0) {
  Dataset ds;
  ds.schema = FeatureSchema::bert_text(pad_id);
  ds.schema.scalar("labels");
  for (int i = 0; i < n; ++i) {
    Example e;
    const size_t len = size_t(2 + i % 7);
    e.set("input_ids", Feature::sequence(std::vector<int32_t>(len, 5)));
    e.set("token_type_ids", Feature::sequence(std::vector<int8_t>(len, 0)));
    e.set("labels", Feature::scalar(int64_t(i % 3)));
    e.index = i;
    ds.examples.push_back(e);
  }
  return ds;
}

int64_t length(const Example& e) { return e.at("input_ids").size(0); }

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
      for (auto i : b) lens.insert(size_t(length(ds.examples[size_t(i)])));
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
    auto ds = make_dataset(5, 7);
    auto b = collate(ds, {0, 3});
    CHECK(b.size == 2);
    CHECK(b.tokens == 2 + 5);
    auto ids = b.tensors.at("input_ids");
    CHECK(ids.sizes() == std::vector<int64_t>{2, 5});
    CHECK((ids.scalar_type() == torch::kLong));
    CHECK(ids[0][2].item<int64_t>() == 7);
    CHECK(ids[1][4].item<int64_t>() == 5);
    CHECK(b.tensors.at("attention_mask").sum().item<int64_t>() == 7);
    CHECK(b.tensors.at("token_type_ids").sizes() == std::vector<int64_t>{2, 5});
    CHECK(torch::equal(b.tensors.at("labels"), torch::tensor({0, 0}, torch::kLong)));
    CHECK(b.tensors.size() == 4);
  }

  TEST_CASE("open features: float vectors, image-like tensors, padding along any dim, fixed length, lists") {
    FeatureSchema s;
    s.tensor("vec");      // float [3] per example: stacked
    s.tensor("patches");  // float [2, 4] per example
    FeatureSpec grid;     // [k, n]: n varies, padded along dim 1 with -1
    grid.name = "grid";
    grid.dtype = DType::float32;
    grid.pad_value = -1;
    grid.dim = 1;
    grid.mask = "grid_mask";
    s.add(grid);
    FeatureSpec fixed;  // int list padded to 6 with -100
    fixed.name = "spans";
    fixed.pad = Pad::fixed;
    fixed.length = 6;
    fixed.pad_value = -100;
    s.add(fixed);
    s.sequence("entity_ids", 0, "entity_mask", DType::int32);
    std::vector<Example> ex(2);
    ex[0]
        .set("vec", Feature::sequence(std::vector<float>{1, 2, 3}))
        .set("patches", Feature::tensor(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {2, 4}))
        .set("grid", Feature::tensor(std::vector<float>{1, 2, 3, 4}, {2, 2}))
        .set("spans", Feature::sequence(std::vector<int64_t>{4, 5}))
        .set("entity_ids", Feature::sequence(std::vector<int64_t>{9}));
    ex[1]
        .set("vec", Feature::sequence(std::vector<float>{4, 5, 6}))
        .set("patches", Feature::tensor(std::vector<float>(8, 0.5f), {2, 4}))
        .set("grid", Feature::tensor(std::vector<float>{7, 8, 9, 10, 11, 12}, {2, 3}))
        .set("spans", Feature::sequence(std::vector<int64_t>{1, 2, 3}))
        .set("entity_ids", Feature::sequence(std::vector<int64_t>{1, 2, 3}));
    auto b = collate_examples(s, {&ex[0], &ex[1]});
    CHECK(torch::equal(b.tensors.at("vec"), torch::tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}).view({2, 3})));
    CHECK(b.tensors.at("patches").sizes() == std::vector<int64_t>{2, 2, 4});
    CHECK(b.tensors.at("patches")[0][1][3].item<float>() == 8.0f);
    auto g = b.tensors.at("grid");
    CHECK(torch::equal(
        g, torch::tensor({1.f, 2.f, -1.f, 3.f, 4.f, -1.f, 7.f, 8.f, 9.f, 10.f, 11.f, 12.f}).view({2, 2, 3})));
    CHECK(torch::equal(b.tensors.at("grid_mask"),
                       torch::tensor({1, 1, 0, 1, 1, 1}, torch::kLong).view({2, 3})));
    CHECK(torch::equal(
        b.tensors.at("spans"),
        torch::tensor({4, 5, -100, -100, -100, -100, 1, 2, 3, -100, -100, -100}, torch::kLong).view({2, 6})));
    CHECK((b.tensors.at("entity_ids").scalar_type() == torch::kInt));
    CHECK(torch::equal(b.tensors.at("entity_mask"),
                       torch::tensor({1, 0, 0, 1, 1, 1}, torch::kLong).view({2, 3})));
    CHECK(b.tokens == 2 + 3);  // the length feature: the first Pad::longest feature ("grid" along dim 1)
    s.length_feature = "entity_ids";
    CHECK(collate_examples(s, {&ex[0], &ex[1]}).tokens == 1 + 3);
  }

  TEST_CASE("collation errors name the feature: undeclared, inconsistent shapes, too long, missing") {
    FeatureSchema s;
    s.tensor("vec");
    FeatureSpec fixed;
    fixed.name = "ids";
    fixed.pad = Pad::fixed;
    fixed.length = 2;
    s.add(fixed);
    Example a, b;
    a.set("vec", Feature::sequence(std::vector<float>{1, 2}))
        .set("ids", Feature::sequence(std::vector<int64_t>{1}));
    b.set("vec", Feature::sequence(std::vector<float>{1, 2, 3}))
        .set("ids", Feature::sequence(std::vector<int64_t>{1}));
    CHECK_THROWS_WITH_AS(collate_examples(s, {&a, &b}), doctest::Contains("feature 'vec'"),
                         et::InternalError);
    b.set("vec", Feature::sequence(std::vector<float>{1, 2}))
        .set("ids", Feature::sequence(std::vector<int64_t>{1, 2, 3}));
    CHECK_THROWS_WITH_AS(collate_examples(s, {&a, &b}), doctest::Contains("the fixed length is 2"),
                         et::InternalError);
    b.set("ids", Feature::sequence(std::vector<int64_t>{3})).set("typo", Feature::scalar(1.0f));
    CHECK_THROWS_WITH_AS(collate_examples(s, {&a, &b}),
                         doctest::Contains("'typo' is not in the dataset's feature schema"),
                         et::InternalError);
    Example c;
    c.set("vec", Feature::sequence(std::vector<float>{5, 6}));
    CHECK_THROWS_WITH_AS(collate_examples(s, {&a, &c}), doctest::Contains("1 of 2 examples lack it"),
                         et::InternalError);
    s.features[1].optional = true;  // then the missing example is all padding
    auto batch = collate_examples(s, {&a, &c});
    CHECK(torch::equal(batch.tensors.at("ids"), torch::tensor({1, 0, 0, 0}, torch::kLong).view({2, 2})));
    CHECK(collate_examples(s, {&c}).tensors.count("ids") == 0);  // a feature no example has is left out
    CHECK_THROWS_AS(Feature::tensor(std::vector<float>{1, 2, 3}, {2, 2}), et::InternalError);
    CHECK_THROWS_AS(s.add(fixed), et::InternalError);  // declared twice
    CHECK_THROWS_AS(a.at("absent"), et::InternalError);
    CHECK(a.at("vec").as<float>() == std::vector<float>{1, 2});
    CHECK_THROWS_AS(a.at("vec").as<int64_t>(), et::InternalError);
  }

  TEST_CASE("a custom collate replaces the schema's rule and sees the epoch and batch position") {
    auto ds = make_dataset(40);
    std::vector<std::pair<int64_t, int64_t>> seen;
    std::mutex mu;
    ds.custom_collate = [&](const Dataset& d, const std::vector<int64_t>& idx, const CollateContext& c) {
      Batch b = collate(d, idx);
      b.tensors["epoch"] = torch::full({1}, c.epoch, torch::kLong);
      std::lock_guard<std::mutex> lock(mu);
      seen.emplace_back(c.epoch, c.batch);
      CHECK(c.training);
      CHECK(c.seed == 7);
      return b;
    };
    DatasetSource src(ds);
    SourceOptions so;
    so.micro_batch_size = 8;
    so.seed = 7;
    src.configure(so);
    CHECK(src.batches_per_epoch() == 5);
    src.start_epoch(3, 2);
    Batch b;
    int n = 0;
    while (src.next(b)) {
      CHECK(b.tensors.at("epoch").item<int64_t>() == 3);
      CHECK(b.global_size == 8);
      ++n;
    }
    CHECK(n == 3);
    std::sort(seen.begin(), seen.end());
    CHECK(seen == std::vector<std::pair<int64_t, int64_t>>{{3, 2}, {3, 3}, {3, 4}});
  }

  TEST_CASE("DatasetSource: every rank takes its slice of the same global batches") {
    auto ds = make_dataset(23);
    std::vector<std::vector<int64_t>> seen(2);
    std::vector<int64_t> global_sizes;
    for (int r = 0; r < 2; ++r) {
      DatasetSource src(ds);
      SourceOptions so;
      so.micro_batch_size = 3;
      so.rank = r;
      so.world_size = 2;
      src.configure(so);
      CHECK(src.batches_per_epoch() == 4);  // ceil(23 / 6)
      src.start_epoch(1, 0);
      Batch b;
      while (src.next(b)) {
        seen[size_t(r)].insert(seen[size_t(r)].end(), b.indices.begin(), b.indices.end());
        if (r == 0) global_sizes.push_back(b.global_size);
      }
    }
    CHECK(global_sizes == std::vector<int64_t>{6, 6, 6, 5});
    std::vector<int64_t> all = seen[0];
    all.insert(all.end(), seen[1].begin(), seen[1].end());
    std::sort(all.begin(), all.end());
    std::vector<int64_t> expect(23);
    std::iota(expect.begin(), expect.end(), 0);
    CHECK(all == expect);
  }

  TEST_CASE("the prefetcher yields the plan's batches in order, from any starting batch") {
    auto ds = make_dataset(57);
    PlanOptions o;
    o.batch_size = 4;
    auto plan = plan_epoch(ds, o, 3);
    Prefetcher p(ds, plan, 5, 3);
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
          e.set("labels", Feature::scalar(int64_t(std::stoll(row.values[0]))));
          return e;
        },
        FeatureSchema().scalar("labels"), 333);
    CHECK(ds.size() == 9990);
    CHECK(r.bad_rows().count() == 10);
    CHECK(r.bad_rows().examples()[0] == "mem:8: not a number");
    bool ordered = true;
    for (size_t i = 1; i < ds.examples.size(); ++i)
      ordered = ordered && ds.examples[i].at("labels").value(0) > ds.examples[i - 1].at("labels").value(0);
    CHECK(ordered);
    CHECK(ds.examples[100].index == 100);
  }

  TEST_CASE("windowed datasets: a row makes several examples sharing its index; packing round-trips") {
    VectorReader r({"3", "0", "bad", "2"});
    auto ds = build_windowed_dataset(
        r,
        [](const et::Row& row, std::string& why) {
          std::vector<Example> out;
          if (row.values[0] == "bad") {
            why = "not a number";
            return out;
          }
          int n = std::stoi(row.values[0]);
          if (n == 0) return out;  // no windows, no reason: still a bad row
          for (int k = 0; k < n; ++k) {
            Example e;
            e.set("input_ids", Feature::sequence(std::vector<int32_t>(size_t(k + 1), k)));
            e.set_meta("offsets", Feature::sequence(std::vector<int32_t>{k, k + 1}));
            out.push_back(std::move(e));
          }
          return out;
        },
        FeatureSchema().sequence("input_ids"));
    REQUIRE(ds.size() == 5);  // 3 + 2 windows
    CHECK(r.bad_rows().count() == 2);
    CHECK(r.bad_rows().examples()[0] == "mem:2: could not be encoded");
    std::vector<int64_t> idx;
    for (auto& e : ds.examples) idx.push_back(e.index);
    CHECK(idx == std::vector<int64_t>{0, 0, 0, 1, 1});
    auto packed = pack_windows({ds.examples[0], ds.examples[1], ds.examples[2]});
    CHECK(packed.features.empty());  // nothing to batch: the windows are meta
    CHECK(window_count(packed) == 3);
    auto back = unpack_windows(packed);
    REQUIRE(back.size() == 3);
    for (size_t k = 0; k < 3; ++k) {
      CHECK(back[k].at("input_ids").as<int32_t>() == ds.examples[k].at("input_ids").as<int32_t>());
      CHECK(back[k].find_meta("offsets")->as<int32_t>() ==
            ds.examples[k].find_meta("offsets")->as<int32_t>());
      CHECK(back[k].index == 0);
    }
    CHECK(window_count(ds.examples[3]) == 1);
    CHECK(unpack_windows(ds.examples[3]).size() == 1);
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
