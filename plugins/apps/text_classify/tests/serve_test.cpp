// serve_test.cpp: `ethost --app text_classify --mode serve` over loopback HTTP — served rows equal --mode
// predict's (byte-identical with max_batch_size = 1, within 1e-6 when batched), a catalogue of bad requests
// each answered 4xx with the server staying up, concurrent clients each getting their own rows, clients
// that disconnect, slow headers and bodies timed out, SIGTERM draining an in-flight request, and /metrics
// as valid Prometheus text. Every loop is bounded in count and time and targets 127.0.0.1 only.
#include "tensor_json.h"

#include <doctest/doctest.h>
#include <signal.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "http_client.h"
#include "process.h"
#include "prometheus_text.h"
#include "serve_process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::http_request;
using et::test::HttpConn;
using et::test::write_file;
using json = nlohmann::json;

namespace tc_serve {

const std::string kRepo = ETHOST_SOURCE_DIR;

std::vector<std::string> base_args() {
  return {"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "text_classify"};
}

// A tiny model trained once for the whole suite (30 steps on EPRSTMT train).
const std::string& model_dir() {
  static et::test::TempDir dir("tc_serve_model");
  static std::string path = [] {
    write_file(
        dir / "c.toml",
        "[data]\ntables = [\"" + kRepo +
            "/data/eprstmt/train.tsv\"]\ninput_schema = \"text:str:1,label:str:1\"\n"
            "label_enumerate_values = [\"Negative\", \"Positive\"]\nsequence_length = 48\nvocab_file = \"" +
            kRepo +
            "/data/vocab/bert-base-chinese-vocab.txt\"\n"
            "[model]\nhidden_size = 32\nnum_hidden_layers = 2\nnum_attention_heads = 2\n"
            "intermediate_size = 64\nmax_position_embeddings = 64\n"
            "[optimizer]\nlearning_rate = 3e-3\n[train]\ncheckpoint_dir = \"" +
            dir / "model" +
            "\"\nmax_steps = 30\nmicro_batch_size = 16\nprogress_bar = \"never\"\n"
            "[runtime]\nthreads = 2\n");
    auto a = base_args();
    a.insert(a.end(), {"--config", dir / "c.toml"});
    auto r = et::test::run_ethost(a);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return dir / "model";
  }();
  return path;
}

std::vector<std::string> serve_args(std::vector<std::string> sets = {}) {
  auto a = base_args();
  a.insert(a.end(), {"--checkpoint_dir", model_dir(), "--set", "runtime.threads=2", "--set",
                     "data.sequence_length=48", "--log-level", "info"});
  for (auto& s : sets) a.insert(a.end(), {"--set", s});
  return a;
}

// The text column of the first n EPRSTMT dev rows.
std::vector<std::string> dev_texts(size_t n) {
  std::ifstream in(kRepo + "/data/eprstmt/dev.tsv");
  std::vector<std::string> out;
  for (std::string line; out.size() < n && std::getline(in, line);)
    out.push_back(line.substr(0, line.find('\t')));
  return out;
}

std::string rows_body(const std::vector<std::string>& texts, const std::string& schema = "") {
  json rows = json::array();
  for (auto& t : texts) rows.push_back({{"text", t}});
  json body = {{"rows", rows}};
  if (!schema.empty()) body["output_schema"] = json::parse(schema);
  return body.dump();
}

std::vector<double> numbers(const std::string& csv) {
  std::vector<double> v;
  for (size_t p = 0; p <= csv.size();) {
    size_t e = csv.find(',', p);
    if (e == std::string::npos) e = csv.size();
    v.push_back(std::stod(csv.substr(p, e - p)));
    p = e + 1;
  }
  return v;
}

}  // namespace tc_serve

TEST_SUITE("integration.serve") {
  using namespace tc_serve;

  TEST_CASE(
      "served rows equal --mode predict's: byte-identical with max_batch_size = 1, within 1e-6 batched") {
    et::test::TempDir dir("tc_serve_parity");
    auto texts = dev_texts(40);
    std::string table;
    for (auto& t : texts) table += t + "\n";
    write_file(dir / "in.tsv", table);
    auto a = base_args();
    a.insert(a.end(), {"--mode", "predict", "--checkpoint_dir", model_dir(), "--tables", dir / "in.tsv",
                       "--input_schema", "text:str:1", "--outputs", dir / "out.tsv", "--output_schema",
                       "predictions,probabilities,logits", "--set", "predict.batch_size=1", "--set",
                       "runtime.threads=2", "--set", "data.sequence_length=48"});
    auto r = et::test::run_ethost(a);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    std::vector<std::vector<std::string>> expected;
    {
      std::ifstream in(dir / "out.tsv");
      for (std::string line; std::getline(in, line);) {
        std::vector<std::string> cells;
        for (size_t p = 0;;) {
          size_t e = line.find('\t', p);
          cells.push_back(line.substr(p, e == std::string::npos ? std::string::npos : e - p));
          if (e == std::string::npos) break;
          p = e + 1;
        }
        expected.push_back(cells);
      }
    }
    REQUIRE(expected.size() == texts.size());
    const std::string schema = R"(["predictions", "probabilities", "logits"])";
    {
      et::test::ServeProcess s(serve_args({"serve.max_batch_size=1"}), dir / "one.log");
      REQUIRE_MESSAGE(s.started(), s.log());
      HttpConn c(s.port());  // one keep-alive connection, one row per request
      for (size_t i = 0; i < texts.size(); ++i) {
        REQUIRE(c.send(et::test::http_bytes("POST", "/predict", rows_body({texts[i]}, schema))));
        auto reply = c.read_reply();
        REQUIRE(reply.status == 200);
        auto row = json::parse(reply.body)["rows"][0];
        CHECK(row["predictions"].get<std::string>() == expected[i][0]);
        CHECK(row["probabilities"].get<std::string>() == expected[i][1]);  // byte-identical
        CHECK(row["logits"] == json::parse(expected[i][2]));               // the same doubles
      }
      CHECK(s.terminate() == 0);
    }
    {
      // Batched: 4 clients at once, 10 requests of 1..4 rows each; every response row matches its own input.
      // Two network threads (the acceptor on its strand, sessions on theirs).
      et::test::ServeProcess s(serve_args({"serve.max_wait_ms=5", "serve.io_threads=2"}),
                               dir / "batched.log");
      REQUIRE_MESSAGE(s.started(), s.log());
      std::atomic<int> bad{0}, checked{0};
      std::vector<std::thread> clients;
      for (int k = 0; k < 4; ++k) {
        clients.emplace_back([&, k] {
          HttpConn c(s.port());
          for (int q = 0; q < 10; ++q) {
            size_t first = static_cast<size_t>((k * 10 + q) % 40), n = 1 + static_cast<size_t>(q % 4);
            std::vector<std::string> batch;
            std::vector<size_t> idx;
            for (size_t j = 0; j < n; ++j) {
              idx.push_back((first + j) % texts.size());
              batch.push_back(texts[idx.back()]);
            }
            if (!c.send(et::test::http_bytes("POST", "/predict", rows_body(batch, schema))))
              return (void)++bad;
            auto reply = c.read_reply();
            if (reply.status != 200) return (void)++bad;
            auto rows = json::parse(reply.body)["rows"];
            if (rows.size() != n) return (void)++bad;
            for (size_t j = 0; j < n; ++j) {
              const auto& want = expected[idx[j]];
              auto got = numbers(rows[j]["probabilities"].get<std::string>()), ref = numbers(want[1]);
              bool same = rows[j]["predictions"] == want[0] && got.size() == ref.size();
              for (size_t t = 0; same && t < got.size(); ++t) same = std::abs(got[t] - ref[t]) <= 1e-6;
              if (!same) ++bad;
              ++checked;
            }
          }
        });
      }
      for (auto& t : clients) t.join();
      CHECK(bad.load() == 0);
      CHECK(checked.load() == 92);  // 4 clients x (1+2+3+4+1+2+3+4+1+2) rows
      // Requests were merged: fewer forward passes than requests.
      auto m = et::test::parse_prometheus(http_request(s.port(), "GET", "/metrics").body);
      CHECK(m.at("ethost_rows_total") == 92);
      CHECK(m.at("ethost_requests_total{endpoint=\"/predict\",code=\"200\"}") == 40);
      MESSAGE("forward passes for 40 concurrent requests: ", m.at("ethost_forward_passes_total"));
      CHECK(s.terminate() == 0);
    }
  }

  TEST_CASE("a catalogue of bad requests: each answered 4xx naming its field, the server staying up") {
    et::test::TempDir dir("tc_serve_bad");
    et::test::ServeProcess s(
        serve_args({"serve.max_rows=4", "serve.max_cell_bytes=200", "serve.max_body_bytes=4096"}),
        dir / "log");
    REQUIRE_MESSAGE(s.started(), s.log());
    struct Bad {
      std::string name, method, path, body, headers;
      int status;
      std::string field;
    };
    const std::string big(5000, 'x');
    const std::vector<Bad> bad = {
        {"malformed JSON", "POST", "/predict", "{\"rows\": [", "", 400, ""},
        {"empty body", "POST", "/predict", "", "", 400, ""},
        {"not an object", "POST", "/predict", "[1]", "", 400, ""},
        {"no rows", "POST", "/predict", "{}", "", 400, "rows"},
        {"rows not an array", "POST", "/predict", R"({"rows": "x"})", "", 400, "rows"},
        {"rows empty", "POST", "/predict", R"({"rows": []})", "", 400, "rows"},
        {"row not an object", "POST", "/predict", R"({"rows": ["x"]})", "", 400, "rows[0]"},
        {"missing column", "POST", "/predict", R"({"rows": [{"txt": "x"}]})", "", 400, "rows[0].txt"},
        {"wrong type", "POST", "/predict", R"({"rows": [{"text": 3}]})", "", 400, "rows[0].text"},
        {"unknown field", "POST", "/predict", R"({"rows": [{"text": "x"}], "top_k": 3})", "", 400, "top_k"},
        {"unknown output column", "POST", "/predict",
         R"({"rows": [{"text": "x"}], "output_schema": ["nope"]})", "", 400, "output_schema[0]"},
        {"too many rows", "POST", "/predict", rows_body({"a", "b", "c", "d", "e"}), "", 413, "rows"},
        {"cell too long", "POST", "/predict", rows_body({std::string(300, 'a')}), "", 413, "rows[0].text"},
        {"body too large", "POST", "/predict", rows_body({big}), "", 413, ""},
        {"invalid UTF-8", "POST", "/predict", "{\"rows\": [{\"text\": \"\xc3\x28\"}]}", "", 400, ""},
        {"unknown endpoint", "POST", "/predictt", rows_body({"x"}), "", 404, "path"},
        {"wrong method", "GET", "/predict", "", "", 405, "method"},
        {"POST to /health", "POST", "/health", "{}", "", 405, "method"},
        {"no embeddings column", "POST", "/v1/embeddings", R"({"input": "x"})", "", 404, "path"},
        {"tokenize without rows", "POST", "/tokenize", "{}", "", 400, "rows"},
        {"headers too large", "GET", "/health", "", "X-Pad: " + std::string(20000, 'p') + "\r\n", 431, ""},
    };
    CHECK(bad.size() >= 15);
    for (const auto& b : bad) {
      CAPTURE(b.name);
      auto reply = http_request(s.port(), b.method, b.path, b.body, b.headers);
      CHECK(reply.status == b.status);
      if (!b.field.empty()) {
        auto err = json::parse(reply.body);
        CHECK(err["error"]["field"] == b.field);
        CHECK(err["error"]["code"] == b.status);
        CHECK(!err["error"]["message"].get<std::string>().empty());
      }
      CHECK(http_request(s.port(), "GET", "/health").status == 200);  // still up
    }
    // A garbage request line: 400 and the connection closed.
    HttpConn c(s.port());
    REQUIRE(c.send("BLAH\r\n\r\n"));
    auto garbage = c.read_reply(10);
    CHECK(garbage.status == 400);
    auto m = et::test::parse_prometheus(http_request(s.port(), "GET", "/metrics").body);
    CHECK(m.at("ethost_requests_total{endpoint=\"other\",code=\"404\"}") == 1);
    CHECK(m.at("ethost_requests_total{endpoint=\"/predict\",code=\"413\"}") >= 2);
    CHECK(http_request(s.port(), "POST", "/predict", rows_body({"好评"})).status == 200);
    CHECK(s.terminate() == 0);
  }

  TEST_CASE("int8: served rows equal --mode predict's with predict.quantize = int8; bf16 + int8 refused") {
    et::test::TempDir dir("tc_serve_int8");
    auto texts = dev_texts(12);
    std::string table;
    for (auto& t : texts) table += t + "\n";
    write_file(dir / "in.tsv", table);
    auto a = base_args();
    a.insert(a.end(), {"--mode", "predict", "--checkpoint_dir", model_dir(), "--tables", dir / "in.tsv",
                       "--input_schema", "text:str:1", "--outputs", dir / "out.tsv", "--set",
                       "predict.batch_size=1", "--set", "runtime.threads=2", "--set",
                       "data.sequence_length=48", "--set", "predict.quantize=\"int8\""});
    auto r = et::test::run_ethost(a);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    std::ifstream in(dir / "out.tsv");
    std::vector<std::string> expected;
    for (std::string line; std::getline(in, line);) expected.push_back(line);
    REQUIRE(expected.size() == texts.size());
    {
      // One row per forward pass on both sides: the same activations are quantized, so the same bytes.
      et::test::ServeProcess s(serve_args({"serve.max_batch_size=1", "predict.quantize=\"int8\""}),
                               dir / "serve.log");
      REQUIRE_MESSAGE(s.started(), s.log());
      CHECK(contains(s.log(), "encoder Linear layers quantized"));
      HttpConn c(s.port());
      for (size_t i = 0; i < texts.size(); ++i) {
        REQUIRE(c.send(et::test::http_bytes("POST", "/predict", rows_body({texts[i]}))));
        auto reply = c.read_reply();
        REQUIRE(reply.status == 200);
        auto row = json::parse(reply.body)["rows"][0];
        CHECK(row["predictions"].get<std::string>() + "\t" + row["probabilities"].get<std::string>() ==
              expected[i]);
      }
      CHECK(s.terminate() == 0);
    }
    et::test::ServeProcess both(serve_args({"serve.precision=\"bf16\"", "predict.quantize=\"int8\""}),
                                dir / "both.log");
    CHECK_FALSE(both.started());
    CHECK(both.wait_exit(30) == 2);
    CHECK(contains(both.log(), "exclude each other"));
  }

  TEST_CASE("health, ready, info, tokenize and metrics") {
    et::test::TempDir dir("tc_serve_info");
    et::test::ServeProcess s(serve_args(), dir / "log");
    REQUIRE_MESSAGE(s.started(), s.log());
    CHECK(http_request(s.port(), "GET", "/health").body == R"({"status":"ok"})");
    CHECK(http_request(s.port(), "GET", "/ready").status == 200);
    auto info = json::parse(http_request(s.port(), "GET", "/info").body);
    CHECK(info["app"] == "app/text_classify");
    CHECK(info["model_dir"] == model_dir());
    CHECK(info["input_columns"] == json::array({"text"}));
    CHECK(info["default_output_schema"] == json::array({"predictions", "probabilities"}));
    CHECK(contains(info["config"].get<std::string>(), "[serve]"));
    auto tok = json::parse(http_request(s.port(), "POST", "/tokenize", rows_body({"物流很快"})).body);
    CHECK(tok["rows"][0]["tokens"] == json::array({"[CLS]", "物", "流", "很", "快", "[SEP]"}));
    CHECK(tok["rows"][0]["input_ids"].size() == 6);
    for (int i = 0; i < 5; ++i)
      REQUIRE(http_request(s.port(), "POST", "/predict", rows_body({"好", "不好"})).status == 200);
    auto reply = http_request(s.port(), "GET", "/metrics");
    CHECK(reply.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8");
    std::map<std::string, double> m;
    REQUIRE_NOTHROW(m = et::test::parse_prometheus(reply.body));
    CHECK(m.at("ethost_requests_total{endpoint=\"/predict\",code=\"200\"}") == 5);
    CHECK(m.at("ethost_request_duration_seconds_count{endpoint=\"/predict\"}") == 5);
    CHECK(m.at("ethost_rows_total") == 10);
    CHECK(m.at("ethost_batch_rows_count") == m.at("ethost_forward_passes_total"));
    CHECK(m.at("ethost_tokens_total") > 0);
    CHECK(m.at("ethost_tokens_per_second") > 0);
    CHECK(m.count("ethost_queue_depth_bucket{le=\"+Inf\"}") == 1);
    CHECK(s.terminate() == 0);
    CHECK(contains(s.log(), "requests (200 OK); stopped"));
  }

  TEST_CASE("HEAD: GET's headers and no body; the connection stays in step") {
    et::test::TempDir dir("tc_serve_head");
    et::test::ServeProcess s(serve_args(), dir / "log");
    REQUIRE_MESSAGE(s.started(), s.log());
    HttpConn c(s.port());
    REQUIRE(c.send(et::test::http_bytes("HEAD", "/health")));
    auto head = c.read_reply(10, /*to_head=*/true);
    CHECK(head.status == 200);
    CHECK(head.headers["content-length"] == "15");
    CHECK(c.read_reply(0.3).status == 0);  // reads whatever else arrives: nothing may
    CHECK(c.buffered() == 0);              // (a body here would be taken as the start of the next answer)
    REQUIRE(c.send(et::test::http_bytes("GET", "/health")));
    auto get = c.read_reply(10);
    CHECK(get.status == 200);
    CHECK(get.body == R"({"status":"ok"})");
    CHECK(s.terminate() == 0);
  }

  TEST_CASE("at serve.max_connections a new client waits until another closes") {
    et::test::TempDir dir("tc_serve_cap");
    et::test::ServeProcess s(serve_args({"serve.max_connections=3"}), dir / "log");
    REQUIRE_MESSAGE(s.started(), s.log());
    std::vector<std::unique_ptr<HttpConn>> idle;
    for (int i = 0; i < 3; ++i) {
      idle.push_back(std::make_unique<HttpConn>(s.port()));
      // Answered: this connection has been accepted (the next one cannot overtake it).
      REQUIRE(idle.back()->send(et::test::http_bytes("GET", "/health")));
      REQUIRE(idle.back()->read_reply(10).status == 200);
    }
    HttpConn waiting(s.port());  // the kernel completes the handshake; the server does not accept it yet
    REQUIRE(waiting.send(et::test::http_bytes("GET", "/health")));
    CHECK(waiting.read_reply(0.5).status == 0);  // not answered while three are open
    idle.front()->close();
    CHECK(waiting.read_reply(10).status == 200);  // accepted once one closed
    CHECK(s.terminate() == 0);
  }

  TEST_CASE("out of file descriptors: accept errors are retried, not spun on, and the server recovers") {
    et::test::TempDir dir("tc_serve_emfile");
    // 48 descriptors: the server's own files and a few sockets, then accept() fails with EMFILE.
    et::test::ServeProcess s(serve_args(), dir / "log", 120, {"prlimit", "--nofile=48:48", "--"});
    REQUIRE_MESSAGE(s.started(), s.log());
    CHECK(contains(s.log(), "file descriptors but `ulimit -n` allows 48"));
    std::vector<std::unique_ptr<HttpConn>> many;
    for (int i = 0; i < 60; ++i) many.push_back(std::make_unique<HttpConn>(s.port()));
    REQUIRE(s.wait_log("accept failed", 10));
    auto cpu_ticks = [&] {  // utime + stime of the server, in clock ticks
      std::istringstream f(et::test::read_file("/proc/" + std::to_string(s.pid()) + "/stat"));
      std::string field;
      long long total = 0;
      for (int i = 1; i <= 15 && f >> field; ++i)
        if (i >= 14) total += std::stoll(field);
      return total;
    };
    long long before = cpu_ticks();
    std::this_thread::sleep_for(std::chrono::seconds(1));  // a measuring window, not a synchronisation
    long long used = cpu_ticks() - before;
    MESSAGE("server CPU while out of descriptors: " << used << " ticks in 1 s");
    CHECK(used < 30);  // a spinning accept loop uses the whole second (~100 ticks)
    many.clear();
    CHECK(http_request(s.port(), "GET", "/health", "", "", 20).status == 200);
    CHECK(s.terminate() == 0);
  }

  TEST_CASE("clients that disconnect, slow headers and slow bodies do not hurt the others") {
    et::test::TempDir dir("tc_serve_slow");
    et::test::ServeProcess s(serve_args({"serve.header_timeout_s=0.5", "serve.read_timeout_s=0.5"}),
                             dir / "log");
    REQUIRE_MESSAGE(s.started(), s.log());
    const auto texts = dev_texts(64);
    // 20 clients send a full 64-row request and hang up at once.
    for (int i = 0; i < 20; ++i) {
      HttpConn c(s.port());
      REQUIRE(c.send(et::test::http_bytes("POST", "/predict", rows_body(texts))));
    }
    // Slow headers (slowloris): a request line and one header, then nothing — closed after the timeout.
    HttpConn slow(s.port());
    REQUIRE(slow.send("POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
    // Dribbled headers: one byte every 50 ms never completes before the header timeout.
    HttpConn drip(s.port());
    std::string head =
        "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + std::string(60, 'z') + "\r\n\r\n";
    bool drip_cut = false;
    auto t0 = std::chrono::steady_clock::now();
    for (char ch : head) {  // bounded: at most 80 bytes, 4 s
      if (!drip.send(std::string(1, ch)) || drip.closed_within(0.05)) {
        drip_cut = true;
        break;
      }
    }
    double drip_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(drip_cut);
    CHECK(drip_s < 3.0);
    // A slow body: headers promise 100 bytes, 10 arrive.
    HttpConn half(s.port());
    REQUIRE(
        half.send("POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  "Content-Length: 100\r\n\r\n{\"rows\": ["));
    CHECK(slow.closed_within(5));
    auto timed_out = half.read_reply(5);
    CHECK(timed_out.status == 408);
    // Meanwhile (and after) the server answers everyone else.
    auto ok = http_request(s.port(), "POST", "/predict", rows_body({texts[0]}));
    CHECK(ok.status == 200);
    auto m = et::test::parse_prometheus(http_request(s.port(), "GET", "/metrics").body);
    CHECK(m.at("ethost_open_connections") <= 2);  // the hung-up and timed-out ones are gone (+ this one)
    MESSAGE("requests dropped before inference (client gone): ", m.at("ethost_dropped_disconnected_total"));
    CHECK(s.terminate() == 0);
  }

  TEST_CASE("SIGTERM drains: a request in flight is answered, new ones are refused, the server exits 0") {
    et::test::TempDir dir("tc_serve_drain");
    et::test::ServeProcess s(serve_args(), dir / "log");
    REQUIRE_MESSAGE(s.started(), s.log());
    std::string body = rows_body({"物流很快", "太差了"});
    std::string bytes = et::test::http_bytes("POST", "/predict", body);
    size_t half = bytes.size() - body.size() / 2;
    HttpConn c(s.port());
    REQUIRE(c.send(bytes.substr(0, half)));  // headers and half the body: in flight
    // The server has read the headers once /metrics counts the request in flight (beside the /metrics request
    // itself, which counts too).
    bool in_flight = false;
    for (int i = 0; i < 200 && !in_flight; ++i)
      in_flight = et::test::parse_prometheus(http_request(s.port(), "GET", "/metrics").body)
                      .at("ethost_in_flight_requests") >= 2;
    REQUIRE(in_flight);
    ::kill(s.pid(), SIGTERM);
    REQUIRE(s.wait_log("draining", 10));
    CHECK(http_request(s.port(), "GET", "/ready", "", "", 2).status != 200);  // refused or not ready
    REQUIRE(c.send(bytes.substr(half)));
    auto reply = c.read_reply(20);
    CHECK(reply.status == 200);
    CHECK(json::parse(reply.body)["rows"].size() == 2);
    CHECK(s.wait_exit(30) == 0);
    CHECK(contains(s.log(), "stopped"));
  }
}
