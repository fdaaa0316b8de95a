// serve_test.cpp: the serving pieces in process — request validation (every error names its field and has a
// 4xx status), the Prometheus exposition, and the dynamic batcher on a fake predictor (merging, limits,
// length grouping, each job's own rows back, disconnected jobs dropped before inference, failures as 500).
// LibTorch before doctest: its logging header defines glog's CHECK, which doctest's must replace.
#include <torch/torch.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>

#include "prometheus_text.h"
#include "serve/api.h"
#include "serve/batcher.h"
#include "serve/metrics.h"

using namespace et::host::serve;

namespace {

// Rows are strings of digits; a row's "length" is its digit count. The fake model returns each row's
// length and the size of the pass it was in.
class FakePredictor : public et::Predictor {
 public:
  void prepare_predict() override {}
  std::vector<std::string> input_columns() const override { return {"text"}; }
  std::vector<et::OutputColumn> output_columns() const override {
    return {{"echo", "the row", false}, {"pass_rows", "rows in its pass", false}, {"len", "", false}};
  }
  void bind_columns(const std::vector<et::data::Column>&) override {}
  std::optional<et::data::Example> encode(const et::Row& row, std::string&) const override {
    et::data::Example ex;
    ex.set("input_ids", et::data::Feature::sequence(std::vector<int64_t>(row.values[0].size(), 1)));
    return ex;
  }
  et::data::Batch collate(const std::vector<const et::data::Example*>& examples) const override {
    et::data::Batch b;
    b.size = static_cast<int64_t>(examples.size());
    int64_t longest = 0;
    for (auto* e : examples) longest = std::max(longest, example_length(*e));
    b.tensors["longest"] = torch::tensor({longest});
    return b;
  }
  et::TensorMap predict_batch(const et::data::Batch& batch) override {
    if (fail) throw std::runtime_error("model exploded");
    std::lock_guard<std::mutex> lock(mu);
    passes.push_back({batch.size, batch.tensors.at("longest").item<int64_t>()});
    return {{"n", torch::tensor({batch.size})}};
  }
  void postprocess(const et::TensorMap& outputs, const et::data::Batch&,
                   const std::vector<et::PredictItem>& items, const std::vector<std::string>& columns,
                   std::vector<std::vector<std::string>>& cells) const override {
    for (const auto& it : items) {
      std::vector<std::string> row;
      for (const auto& c : columns) {
        if (c == "echo") row.push_back(it.row->values[0]);
        if (c == "pass_rows") row.push_back(std::to_string(outputs.at("n").item<int64_t>()));
        if (c == "len") row.push_back(std::to_string(example_length(*it.example)));
      }
      cells.push_back(row);
    }
  }
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> passes;  // (rows, longest) per forward pass
  bool fail = false;
};

struct Collected {
  std::mutex mu;
  std::map<int, JobResult> results;  // job id -> result
};

std::shared_ptr<Job> make_job(FakePredictor& p, int id, std::vector<std::string> texts, Collected& out,
                              std::vector<std::string> columns = {"echo", "pass_rows"}) {
  auto job = std::make_shared<Job>();
  for (auto& t : texts) {
    et::Row r{{t}, "request", 0};
    std::string why;
    job->examples.push_back(*p.encode(r, why));
    job->rows.push_back(r);
  }
  job->columns = std::move(columns);
  job->cancelled = std::make_shared<std::atomic<bool>>(false);
  job->done = [&out, id](JobResult&& r) {
    std::lock_guard<std::mutex> lock(out.mu);
    out.results[id] = std::move(r);
  };
  return job;
}

const std::vector<std::string> kIn{"text"};
const std::vector<et::OutputColumn> kOffered{{"predictions", "", false}, {"logits", "", true}};
const std::vector<std::string> kDefault{"predictions"};

int api_status(const std::string& body, std::string* field = nullptr, RowLimits limits = {}) {
  try {
    parse_rows_request(body, kIn, &kOffered, kDefault, limits);
    return 200;
  } catch (const ApiError& e) {
    if (field) *field = e.field;
    return e.status;
  }
}

}  // namespace

TEST_SUITE("unit.serve") {
  TEST_CASE("rows requests: valid ones parse in order, with the default or requested columns") {
    auto r =
        parse_rows_request(R"({"rows": [{"text": "好"}, {"text": "坏"}]})", kIn, &kOffered, kDefault, {});
    REQUIRE(r.rows.size() == 2);
    CHECK(r.rows[0].values == std::vector<std::string>{"好"});
    CHECK(r.rows[1].values == std::vector<std::string>{"坏"});
    CHECK(r.columns == kDefault);
    r = parse_rows_request(R"({"rows": [{"text": "x"}], "output_schema": ["logits", "predictions"]})", kIn,
                           &kOffered, kDefault, {});
    CHECK(r.columns == std::vector<std::string>{"logits", "predictions"});
    // Responses: JSON columns embedded as JSON, text columns as strings, in the requested order.
    auto body = rows_response({"logits", "predictions"}, kOffered, {{"[0.5,-1]", "Positive"}});
    CHECK(body == R"({"rows":[{"logits":[0.5,-1],"predictions":"Positive"}]})");
  }

  TEST_CASE("rows requests: each malformed one is a 4xx naming its field") {
    struct Bad {
      const char* body;
      int status;
      const char* field;
    };
    const Bad bad[] = {
        {"", 400, ""},
        {"{\"rows\": [", 400, ""},
        {"[1, 2]", 400, ""},
        {"{}", 400, "rows"},
        {R"({"rows": {}})", 400, "rows"},
        {R"({"rows": []})", 400, "rows"},
        {R"({"rows": [1]})", 400, "rows[0]"},
        {R"({"rows": [{}]})", 400, "rows[0].text"},
        {R"({"rows": [{"text": 5}]})", 400, "rows[0].text"},
        {R"({"rows": [{"text": "a"}, {"text": null}]})", 400, "rows[1].text"},
        {R"({"rows": [{"text": "a", "label": "b"}]})", 400, "rows[0].label"},
        {R"({"rows": [{"text": "a"}], "extra": 1})", 400, "extra"},
        {R"({"rows": [{"text": "a"}], "output_schema": []})", 400, "output_schema"},
        {R"({"rows": [{"text": "a"}], "output_schema": ["nope"]})", 400, "output_schema[0]"},
        {R"({"rows": [{"text": "a"}], "output_schema": [3]})", 400, "output_schema[0]"},
        {"{\"rows\": [{\"text\": \"\xff\xfe\"}]}", 400, ""},
    };
    for (const auto& b : bad) {
      std::string field = "?";
      int status = api_status(b.body, &field);
      INFO(b.body);
      CHECK(status == b.status);
      if (*b.field) CHECK(field == b.field);
    }
    // Limits: too many rows, a cell too long.
    RowLimits small{2, 4};
    std::string field;
    CHECK(api_status(R"({"rows": [{"text": "a"}, {"text": "b"}, {"text": "c"}]})", &field, small) == 413);
    CHECK(field == "rows");
    CHECK(api_status(R"({"rows": [{"text": "abcde"}]})", &field, small) == 413);
    CHECK(field == "rows[0].text");
  }

  TEST_CASE("embeddings requests: OpenAI shapes in, errors naming the field") {
    auto e = parse_embeddings_request(R"({"input": "好", "model": "m"})", {});
    CHECK(e.inputs == std::vector<std::string>{"好"});
    CHECK(e.model == "m");
    e = parse_embeddings_request(R"({"input": ["a", "b"]})", {});
    CHECK(e.inputs.size() == 2);
    auto status = [](const char* body, std::string& field) {
      try {
        parse_embeddings_request(body, {});
        return 200;
      } catch (const ApiError& x) {
        field = x.field;
        return x.status;
      }
    };
    std::string f;
    CHECK(status(R"({"input": [1, 2]})", f) == 400);
    CHECK(f == "input[0]");
    CHECK(status(R"({"input": "a", "encoding_format": "base64"})", f) == 400);
    CHECK(f == "encoding_format");
    CHECK(status(R"({"model": "m"})", f) == 400);
    CHECK(f == "input");
    auto out = nlohmann::json::parse(embeddings_response({"[1,2]", "[3,4]"}, "m", 7));
    CHECK(out["object"] == "list");
    CHECK(out["data"][1]["index"] == 1);
    CHECK(out["data"][1]["embedding"][0] == 3);
    CHECK(out["usage"]["prompt_tokens"] == 7);
  }

  TEST_CASE("metrics: the exposition is valid Prometheus text with the counts recorded") {
    Metrics m;
    m.request_done("/predict", 200, 0.003);
    m.request_done("/predict", 200, 0.2);
    m.request_done("/predict", 400, 0.0001);
    m.request_done("/no/such/path", 404, 0.0001);
    m.forward_done(3, 30, 36, 0.01, 2);
    auto s = et::test::parse_prometheus(m.render());
    CHECK(s.at("ethost_requests_total{endpoint=\"/predict\",code=\"200\"}") == 2);
    CHECK(s.at("ethost_requests_total{endpoint=\"/predict\",code=\"400\"}") == 1);
    CHECK(s.at("ethost_requests_total{endpoint=\"other\",code=\"404\"}") == 1);  // made-up paths: one label
    CHECK(s.at("ethost_request_duration_seconds_bucket{endpoint=\"/predict\",le=\"0.005\"}") == 2);
    CHECK(s.at("ethost_request_duration_seconds_count{endpoint=\"/predict\"}") == 3);
    CHECK(s.at("ethost_batch_rows_bucket{le=\"4\"}") == 1);
    CHECK(s.at("ethost_batch_rows_bucket{le=\"2\"}") == 0);
    CHECK(s.at("ethost_tokens_total") == 30);
    CHECK(s.at("ethost_padded_tokens_total") == 36);
    CHECK(s.at("ethost_tokens_per_second") == doctest::Approx(3000));
    CHECK(m.requests_with_status(200) == 2);
    // The checker itself rejects what Prometheus would.
    CHECK_THROWS(et::test::parse_prometheus("no_type 1\n"));
    CHECK_THROWS(et::test::parse_prometheus("# TYPE x counter\nx{a=b} 1\n"));
    CHECK_THROWS(et::test::parse_prometheus("# TYPE x counter\nx one\n"));
    CHECK_THROWS(et::test::parse_prometheus(
        "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n"));
  }

  TEST_CASE("batcher: queued jobs merge into one pass; each gets its own rows back, in order") {
    FakePredictor p;
    Metrics m;
    Collected out;
    BatchOptions o;
    o.max_pad_ratio = 0;  // lengths 1..4 in one pass (the padding limit is tested below)
    Batcher b(p, o, m);
    // Queued before the workers start: what one worker finds is deterministic.
    REQUIRE(b.submit(make_job(p, 0, {"11", "2"}, out)));
    REQUIRE(b.submit(make_job(p, 1, {"333"}, out)));
    REQUIRE(b.submit(make_job(p, 2, {"4444", "55", "6"}, out, {"pass_rows", "echo", "len"})));
    b.start();
    b.stop();
    REQUIRE(out.results.size() == 3);
    CHECK(p.passes.size() == 1);
    CHECK(p.passes[0].first == 6);
    CHECK(out.results[0].status == 200);
    CHECK(out.results[0].cells == std::vector<std::vector<std::string>>{{"11", "6"}, {"2", "6"}});
    CHECK(out.results[1].cells == std::vector<std::vector<std::string>>{{"333", "6"}});
    CHECK(out.results[2].cells ==
          std::vector<std::vector<std::string>>{{"6", "4444", "4"}, {"6", "55", "2"}, {"6", "6", "1"}});
    CHECK(out.results[2].tokens == 7);
  }

  TEST_CASE(
      "batcher: max_batch_size, max_batch_tokens and max_pad_ratio split passes; batching off never merges") {
    FakePredictor p;
    Metrics m;
    Collected out;
    {
      BatchOptions o;
      o.max_batch_size = 3;
      Batcher b(p, o, m);
      for (int i = 0; i < 4; ++i) REQUIRE(b.submit(make_job(p, i, {"12", "34"}, out)));
      b.start();
      b.stop();
    }
    // Jobs are never split across takes: 2+2 > 3, so each take is one job of 2 rows.
    CHECK(p.passes == std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {2, 2}, {2, 2}, {2, 2}});
    p.passes.clear();
    out.results.clear();
    {
      // One job, rows 1,1,1 long and one 12 long: sorted by length, the long row would pad the pass
      // 48/15 > 1.5x, so it gets a pass of its own.
      Batcher b(p, BatchOptions{}, m);
      REQUIRE(b.submit(make_job(p, 0, {"123456789012", "1", "2", "3"}, out, {"echo", "pass_rows"})));
      b.start();
      b.stop();
    }
    CHECK(p.passes == std::vector<std::pair<int64_t, int64_t>>{{3, 1}, {1, 12}});
    CHECK(out.results[0].cells ==
          std::vector<std::vector<std::string>>{{"123456789012", "1"}, {"1", "3"}, {"2", "3"}, {"3", "3"}});
    p.passes.clear();
    out.results.clear();
    {
      BatchOptions o;
      o.max_batch_tokens = 4;  // rows of 2 tokens: two per pass
      o.max_pad_ratio = 0;
      Batcher b(p, o, m);
      REQUIRE(b.submit(make_job(p, 0, {"12", "34", "56"}, out)));
      b.start();
      b.stop();
    }
    CHECK(p.passes == std::vector<std::pair<int64_t, int64_t>>{{2, 2}, {1, 2}});
    p.passes.clear();
    out.results.clear();
    {
      BatchOptions o;
      o.batching = false;
      Batcher b(p, o, m);
      for (int i = 0; i < 3; ++i) REQUIRE(b.submit(make_job(p, i, {"1"}, out)));
      b.start();
      b.stop();
    }
    CHECK(p.passes == std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 1}, {1, 1}});
  }

  TEST_CASE("batcher: a job whose client left is dropped before inference; a failing model answers 500") {
    FakePredictor p;
    Metrics m;
    Collected out;
    {
      Batcher b(p, BatchOptions{}, m);
      auto gone = make_job(p, 0, {"1", "2"}, out);
      gone->cancelled->store(true);
      REQUIRE(b.submit(gone));
      REQUIRE(b.submit(make_job(p, 1, {"3"}, out)));
      b.start();
      b.stop();
    }
    CHECK(out.results[0].status == 499);
    CHECK(out.results[0].cells.empty());
    CHECK(out.results[1].status == 200);
    CHECK(p.passes == std::vector<std::pair<int64_t, int64_t>>{{1, 1}});  // the dropped rows never ran
    CHECK(et::test::parse_prometheus(m.render()).at("ethost_dropped_disconnected_total") == 1);
    out.results.clear();
    p.fail = true;
    {
      Batcher b(p, BatchOptions{}, m);
      REQUIRE(b.submit(make_job(p, 0, {"1"}, out)));
      b.start();
      b.stop();
    }
    CHECK(out.results[0].status == 500);
    CHECK(out.results[0].error.find("model exploded") != std::string::npos);
  }

  TEST_CASE("batcher: the queue refuses work over max_queued_tokens, and after stop") {
    FakePredictor p;
    Metrics m;
    Collected out;
    BatchOptions o;
    o.max_queued_tokens = 5;
    Batcher b(p, o, m);
    CHECK(b.submit(make_job(p, 0, {"1234"}, out)));
    CHECK_FALSE(b.submit(make_job(p, 1, {"12"}, out)));  // 4 + 2 > 5
    CHECK(b.submit(make_job(p, 2, {"1"}, out)));
    CHECK(b.queued_jobs() == 2);
    b.start();
    b.stop();
    CHECK(out.results.size() == 2);
    CHECK_FALSE(b.submit(make_job(p, 3, {"1"}, out)));
  }

  TEST_CASE("batcher: at shutdown, abandoned queued jobs are answered 503 and never run") {
    FakePredictor p;
    Metrics m;
    Collected out;
    Batcher b(p, BatchOptions{}, m);
    REQUIRE(b.submit(make_job(p, 0, {"12"}, out)));
    REQUIRE(b.submit(make_job(p, 1, {"3"}, out)));
    CHECK(b.abandon_queued("stopping") == 2);
    CHECK(b.queued_jobs() == 0);
    CHECK(et::test::parse_prometheus(m.render()).at("ethost_queued_tokens") == 0);
    b.start();
    b.stop();
    CHECK(p.passes.empty());
    REQUIRE(out.results.size() == 2);
    CHECK(out.results[0].status == 503);
    CHECK(out.results[0].error == "stopping");
    CHECK(out.results[1].status == 503);
    CHECK(b.abandon_queued("again") == 0);
  }
}
