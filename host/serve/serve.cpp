// serve.cpp: the endpoints of `--mode serve` over the HTTP server and the dynamic batcher.
#include "serve.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "api.h"
#include "batcher.h"
#include "cpu/cpu_info.h"
#include "ethost/app/predict_driver.h"
#include "ethost/error.h"
#include "ethost/log.h"
#include "ethost/text/tokenizer.h"
#include "ethost/version.h"
#include "http_server.h"
#include "serve_options.h"

namespace et::host::serve {
namespace {

using json = nlohmann::json;

HttpResponse json_response(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse error_response(int status, const std::string& message, const std::string& field = "") {
  auto r = json_response(status, error_json(status, message, field));
  if (status == 503) r.headers.emplace_back("Retry-After", "1");
  return r;
}

class Service {
 public:
  Service(Predictor& p, const ServeOptions& o, const AppInfo& info, Metrics& m, Batcher& b)
      : p_(p), o_(o), info_(info), metrics_(m), batcher_(b) {
    inputs_ = p_.input_columns();
    offered_ = p_.output_columns();
    for (const auto& c : o_.output_schema)
      if (std::any_of(offered_.begin(), offered_.end(), [&](const OutputColumn& x) { return x.name == c; }))
        defaults_.push_back(c);
    if (defaults_.empty() && !offered_.empty()) defaults_.push_back(offered_.front().name);
    std::vector<data::Column> cols;
    for (const auto& c : inputs_) cols.push_back({c, "str", 1});
    p_.bind_columns(cols);
    limits_.max_rows = o_.max_rows;
    limits_.max_cell_bytes = o_.max_cell_bytes;
    embeddings_ = std::any_of(offered_.begin(), offered_.end(),
                              [&](const OutputColumn& x) { return x.name == o_.embedding_column; });
    if (!o_.model_dir.empty()) {
      try {
        tokenizer_.emplace(text::Tokenizer::from_model_dir(o_.model_dir));
      } catch (const std::exception&) {  // /tokenize then answers ids without token strings
      }
    }
  }

  void handle(HttpRequest&& req, std::shared_ptr<std::atomic<bool>> gone, Responder respond) {
    try {
      const std::string& t = req.target;
      if (t == "/predict" || t == "/tokenize" || t == "/v1/embeddings") {
        if (req.method != "POST") return respond(method_not_allowed("POST"));
        batcher_.arrival_begin();
        struct End {
          Batcher& b;
          ~End() { b.arrival_end(); }
        } end{batcher_};
        if (t == "/predict") return predict(req, std::move(gone), respond);
        if (t == "/tokenize") return respond(tokenize(req));
        return embeddings(req, std::move(gone), respond);
      }
      if (t == "/health" || t == "/ready" || t == "/info" || t == "/metrics") {
        if (req.method != "GET" && req.method != "HEAD") return respond(method_not_allowed("GET"));
        if (t == "/health") return respond(json_response(200, R"({"status":"ok"})"));
        if (t == "/ready")
          return respond(ready_ ? json_response(200, R"({"status":"ready"})")
                                : error_response(503, "the server is shutting down"));
        if (t == "/info") return respond(json_response(200, info()));
        HttpResponse r = json_response(200, metrics_.render());
        r.content_type = "text/plain; version=0.0.4; charset=utf-8";
        return respond(std::move(r));
      }
      respond(error_response(
          404,
          "no endpoint " + t +
              " (POST /predict, /tokenize, /v1/embeddings; GET /health, /ready, /info, /metrics)",
          "path"));
    } catch (const ApiError& e) {
      respond(error_response(e.status, e.what(), e.field));
    } catch (const std::exception& e) {
      log::get("serve").error(req.target, ": ", e.what());
      respond(error_response(500, std::string("internal error: ") + e.what()));
    }
  }

  void set_ready(bool r) { ready_ = r; }

 private:
  static HttpResponse method_not_allowed(const char* allow) {
    auto r = error_response(405, std::string("this endpoint takes ") + allow, "method");
    r.headers.emplace_back("Allow", allow);
    return r;
  }

  std::vector<data::Example> encode(const std::vector<Row>& rows, const std::string& field) const {
    std::vector<data::Example> out;
    out.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      std::string why;
      auto ex = p_.encode(rows[i], why);
      if (!ex) {
        std::string f = field + "[" + std::to_string(i) + "]";
        throw ApiError(422, f, f + " cannot be encoded: " + (why.empty() ? "bad row" : why));
      }
      ex->index = static_cast<int64_t>(i);
      out.push_back(std::move(*ex));
    }
    return out;
  }

  bool enqueue(std::shared_ptr<Job> job, const Responder& respond) {
    if (batcher_.submit(job)) return true;
    respond(error_response(503, "the inference queue is full (serve.max_queued_tokens = " +
                                    std::to_string(o_.max_queued_tokens) + "); retry later"));
    return false;
  }

  void predict(const HttpRequest& req, std::shared_ptr<std::atomic<bool>> gone, const Responder& respond) {
    RowsRequest r = parse_rows_request(req.body, inputs_, &offered_, defaults_, limits_);
    auto job = std::make_shared<Job>();
    job->examples = encode(r.rows, "rows");
    job->rows = std::move(r.rows);
    job->columns = r.columns;
    job->cancelled = std::move(gone);
    const auto* offered = &offered_;
    auto columns = r.columns;
    auto shared = std::make_shared<Responder>(respond);
    job->done = [shared, columns, offered](JobResult&& res) {
      if (res.status != 200) return (*shared)(error_response(res.status, res.error));
      (*shared)(json_response(200, rows_response(columns, *offered, res.cells)));
    };
    enqueue(std::move(job), respond);
  }

  void embeddings(const HttpRequest& req, std::shared_ptr<std::atomic<bool>> gone, const Responder& respond) {
    if (!embeddings_)
      throw ApiError(404, "path",
                     info_.app + " offers no '" + o_.embedding_column +
                         "' column (serve.embedding_column); /v1/embeddings needs an encoder app such as "
                         "vectorization");
    if (inputs_.size() != 1)
      throw ApiError(400, "input",
                     info_.app + " reads " + std::to_string(inputs_.size()) +
                         " columns per row; /v1/embeddings sends one text");
    EmbeddingsRequest e = parse_embeddings_request(req.body, limits_);
    auto job = std::make_shared<Job>();
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      Row row;
      row.values = {std::move(e.inputs[i])};
      row.file = "request";
      row.line = static_cast<int64_t>(i) + 1;
      job->rows.push_back(std::move(row));
    }
    job->examples = encode(job->rows, "input");
    job->columns = {o_.embedding_column};
    job->cancelled = std::move(gone);
    std::string model = e.model.empty() ? o_.model_dir : e.model;
    auto shared = std::make_shared<Responder>(respond);
    job->done = [shared, model](JobResult&& res) {
      if (res.status != 200) return (*shared)(error_response(res.status, res.error));
      std::vector<std::string> cells;
      for (auto& c : res.cells) cells.push_back(c.empty() ? "[]" : c[0]);
      (*shared)(json_response(200, embeddings_response(cells, model, res.tokens)));
    };
    enqueue(std::move(job), respond);
  }

  HttpResponse tokenize(const HttpRequest& req) {
    RowsRequest r = parse_rows_request(req.body, inputs_, nullptr, {}, limits_);
    auto examples = encode(r.rows, "rows");
    json rows = json::array();
    for (const auto& ex : examples) {
      json o = json::object();
      for (const auto& [name, f] : ex.features) {
        json v = json::array();
        for (int64_t i = 0; i < f.numel(); ++i) v.push_back(static_cast<int64_t>(f.value(i)));
        o[name] = std::move(v);
      }
      if (const auto* ids = ex.find("input_ids"); ids && tokenizer_) {
        json toks = json::array();
        for (int64_t i = 0; i < ids->numel(); ++i)
          toks.push_back(tokenizer_->vocab().token(static_cast<int64_t>(ids->value(i))));
        o["tokens"] = std::move(toks);
      }
      rows.push_back(std::move(o));
    }
    return json_response(
        200, json{{"rows", std::move(rows)}}.dump(-1, ' ', false, json::error_handler_t::replace));
  }

  std::string info() const {
    json outs = json::array();
    for (const auto& c : offered_) outs.push_back({{"name", c.name}, {"doc", c.doc}, {"json", c.json}});
    json serve = {{"batching", o_.batching},
                  {"max_batch_size", o_.max_batch_size},
                  {"max_batch_tokens", o_.max_batch_tokens},
                  {"max_wait_ms", o_.max_wait_ms},
                  {"max_pad_ratio", o_.max_pad_ratio},
                  {"workers", o_.workers},
                  {"precision", o_.precision},
                  {"io_threads", o_.io_threads},
                  {"max_rows", o_.max_rows},
                  {"max_body_bytes", o_.max_body_bytes},
                  {"max_concurrent_requests", o_.max_concurrent_requests},
                  {"max_connections", o_.max_connections},
                  {"max_queued_tokens", o_.max_queued_tokens}};
    return json{{"app", info_.app},
                {"app_version", info_.app_version},
                {"ethost_version", ET_VERSION_STRING},
                {"model_dir", o_.model_dir},
                {"input_columns", inputs_},
                {"output_columns", outs},
                {"default_output_schema", defaults_},
                {"embeddings", embeddings_},
                {"serve", serve},
                {"config", info_.config_toml}}
        .dump();
  }

  Predictor& p_;
  const ServeOptions& o_;
  const AppInfo& info_;
  Metrics& metrics_;
  Batcher& batcher_;
  std::vector<std::string> inputs_, defaults_;
  std::vector<OutputColumn> offered_;
  RowLimits limits_;
  bool embeddings_ = false;
  std::atomic<bool> ready_{false};
  std::optional<text::Tokenizer> tokenizer_;
};

}  // namespace

void run_serve(Predictor& predictor, const ConfigView& root, const AppInfo& info) {
  auto lg = log::get("serve");
  ServeOptions o = ServeOptions::from_config(root);
  if (o.precision == "bf16" && root.get_string("predict.quantize", "none") == "int8")
    throw ConfigError("serve.precision = \"bf16\" and predict.quantize = \"int8\" exclude each other",
                      root.where("serve.precision"), "pick one");
  predictor.prepare_predict();
  app::require_quantize_honoured(root);
  Metrics metrics;
  BatchOptions bo;
  bo.batching = o.batching;
  bo.max_batch_size = o.max_batch_size;
  bo.max_batch_tokens = o.max_batch_tokens;
  bo.max_wait_ms = o.max_wait_ms;
  bo.max_pad_ratio = o.max_pad_ratio;
  if (o.precision == "bf16") {
    auto cpu = cpu::detect_cpu();
    if (!cpu.avx512_bf16 && !cpu.amx_bf16)
      throw ConfigError("serve.precision = \"bf16\" needs a CPU with AVX512_BF16 or AMX-BF16; this one (" +
                            cpu.model_name + ") has " + cpu.feature_list(),
                        root.where("serve.precision"), "use \"fp32\"");
    bo.bf16 = true;
  }
  bo.workers = o.workers;
  bo.max_queued_tokens = o.max_queued_tokens;
  Batcher batcher(predictor, bo, metrics);
  Service service(predictor, o, info, metrics, batcher);
  HttpLimits hl;
  hl.max_body_bytes = o.max_body_bytes;
  hl.max_concurrent_requests = o.max_concurrent_requests;
  hl.max_connections = o.max_connections;
  hl.header_timeout_s = o.header_timeout_s;
  hl.read_timeout_s = o.read_timeout_s;
  HttpServer server(
      hl,
      [&service](HttpRequest&& r, std::shared_ptr<std::atomic<bool>> gone, Responder respond) {
        service.handle(std::move(r), std::move(gone), std::move(respond));
      },
      metrics);
  int port = server.listen(o.host, o.port);
  batcher.start();
  service.set_ready(true);

  auto deadline = std::make_shared<std::chrono::steady_clock::time_point>();
  std::function<void()> poll_drain = [&, deadline] {
    bool idle = metrics.in_flight.load() == 0 && batcher.queued_jobs() == 0 && server.pending_writes() == 0;
    if (idle || std::chrono::steady_clock::now() >= *deadline) {
      if (!idle)
        lg.warn("drain: ", metrics.in_flight.load(), " request(s) still in flight after ", o.drain_timeout_s,
                " s; stopping");
      server.stop();
      return;
    }
    server.after(0.02, poll_drain);
  };
  server.on_signal([&, deadline](int sig) {
    lg.info("signal ", sig, ": draining ", metrics.in_flight.load(), " in-flight request(s) (at most ",
            o.drain_timeout_s, " s)");
    service.set_ready(false);
    server.begin_drain();
    *deadline =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(o.drain_timeout_s));
    poll_drain();
  });
  lg.info("serving ", info.app, " from ", o.model_dir.empty() ? "(config)" : o.model_dir, ": ",
          o.batching ? "dynamic batching" : "one request, one forward", " (max_batch_size ", o.max_batch_size,
          ", max_batch_tokens ", o.max_batch_tokens, ", max_wait_ms ", o.max_wait_ms, "), ", o.workers,
          " worker(s), ", o.io_threads, " io thread(s)");
  std::cout << "listening on http://" << o.host << ":" << port << std::endl;
  server.run(o.io_threads);
  // Requests still queued when the drain timed out are not run: their clients are gone with the server.
  if (int64_t n = batcher.abandon_queued("the server stopped before this request's forward pass"))
    lg.warn("drain: ", n, " queued request(s) dropped without inference");
  batcher.stop();
  std::cout << "served " << metrics.requests_with_status(200) << " requests (200 OK); stopped" << std::endl;
}

}  // namespace et::host::serve
