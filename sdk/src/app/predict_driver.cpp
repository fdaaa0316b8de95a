// predict_driver.cpp: tables -> Predictor -> TSV, JSON lines, a JSON object or .npy (predict_sinks.h),
// chunked (parallel encoding), in input order, atomic output.
#include "ethost/app/predict_driver.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "ethost/data/dataset.h"
#include "ethost/error.h"
#include "ethost/log.h"
#include "ethost/nn/quantize.h"
#include "ethost/services.h"
#include "nn/packed_encoder.h"
#include "predict_sinks.h"

namespace fs = std::filesystem;

namespace et::app {
namespace {

std::string join_floats(const float* p, int64_t n, const char* format, const char* open, const char* close) {
  std::string s = open;
  char buf[32];
  for (int64_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, format, static_cast<double>(p[i]));
    s += (i ? "," : "") + std::string(buf);
  }
  return s + close;
}

}  // namespace

std::string csv_floats(const float* values, int64_t n) { return join_floats(values, n, "%.7g", "", ""); }
std::string json_floats(const float* values, int64_t n) { return join_floats(values, n, "%.9g", "[", "]"); }

const std::vector<ConfigKeySpec>& predictor_config_specs() {
  static const std::vector<ConfigKeySpec> specs = {
      service_key("predict.outputs", "path", "\"\"",
                  "prediction output (default <checkpoint_dir>/predictions.tsv): TSV, or by extension .jsonl "
                  "(one JSON object per row), .json (one object {first column: second column}, e.g. SQuAD's "
                  "{id: answer}) or .npy (one numeric column as a float32 array [rows, ...])"),
      service_key("predict.output_schema", "string_list", "[\"predictions\"]",
                  "output columns in order (the app lists its own)"),
      service_key("predict.append_cols", "string_list", "[]",
                  "input columns copied after the output columns"),
      service_key("predict.batch_size", "int", "64", "examples per forward pass when predicting", 1.0),
      service_key("predict.header", "bool", "false", "write a header line with the column names"),
      service_key("predict.chunk_rows", "int", "8192",
                  "rows read, encoded and predicted at a time (inputs are streamed)", 1.0),
      service_key(
          "predict.quantize", "string", "\"none\"",
          "int8: dynamic int8 quantization of the encoder's Linear layers (onednn engine) for predict "
          "and serve; outputs differ from fp32 in the 2nd-3rd digit (docs/serving.md)",
          {}, {}, {"none", "int8"}),
      service_key("predict.packed_inference", "bool", "false",
                  "run the encoder on real tokens only (padding dropped outside attention) for predict and "
                  "serve: faster on padded batches; hidden states at padded positions are zeros, not HF's "
                  "values (docs/performance.md)"),
      // --mode serve (the host's HTTP server drives the same Predictor; docs/serving.md)
      service_key("serve.host", "string", "\"127.0.0.1\"",
                  "address the server binds (0.0.0.0: every interface)"),
      service_key("serve.port", "int", "8000", "TCP port (0: a free port; the log says which)", 0.0, 65535.0),
      service_key("serve.batching", "bool", "true",
                  "merge concurrent requests into shared forward passes (false: one request, one forward)"),
      service_key("serve.max_batch_size", "int", "32", "rows per forward pass at most", 1.0),
      service_key("serve.max_batch_tokens", "int", "16384",
                  "padded tokens (rows x longest row) per forward pass at most", 1.0),
      service_key("serve.max_wait_ms", "float", "2.0",
                  "how long a batch that is not full waits for requests still being received", 0.0, 1000.0),
      service_key(
          "serve.max_pad_ratio", "float", "1.5",
          "rows are grouped by length: a forward pass pads at most this x its real tokens (0: no limit)",
          0.0),
      service_key(
          "serve.precision", "string", "\"fp32\"",
          "fp32, or bf16 (CPU autocast; needs AVX512_BF16 or AMX, checked at start; outputs differ from "
          "fp32 predict in the 3rd digit)",
          {}, {}, {"fp32", "bf16"}),
      service_key("serve.workers", "int", "1",
                  "inference workers sharing the model (collate and postprocess overlap the forward)", 1.0,
                  64.0),
      service_key("serve.io_threads", "int", "1", "network threads (parse, validate, tokenize)", 1.0, 64.0),
      service_key("serve.max_rows", "int", "256", "rows per request at most (413 beyond)", 1.0),
      service_key("serve.max_body_bytes", "int", "1048576", "request body size at most (413 beyond)", 1.0),
      service_key("serve.max_cell_bytes", "int", "65536", "bytes of one input cell at most (413 beyond)",
                  1.0),
      service_key("serve.max_concurrent_requests", "int", "512",
                  "requests being handled at once at most (503 with Retry-After beyond)", 1.0),
      service_key(
          "serve.max_connections", "int", "1024",
          "client connections open at once at most (more wait in the listen backlog until one closes)", 1.0),
      service_key("serve.max_queued_tokens", "int", "262144",
                  "tokens waiting for inference at most (503 with Retry-After beyond)", 1.0),
      service_key(
          "serve.header_timeout_s", "float", "10.0",
          "seconds a client may take to send a request's headers, and an idle keep-alive connection lives",
          0.01),
      service_key("serve.read_timeout_s", "float", "30.0", "seconds a client may take to send a request body",
                  0.01),
      service_key("serve.drain_timeout_s", "float", "30.0",
                  "on SIGTERM/SIGINT: seconds in-flight requests get to finish before the server exits", 0.0),
      service_key("serve.embedding_column", "string", "\"sentence_embedding\"",
                  "output column /v1/embeddings answers with (apps that offer one, e.g. vectorization)"),
  };
  return specs;
}

void require_quantize_honoured(const ConfigView& root) {
  if (root.get_string("predict.quantize", "none") == "int8" && nn::int8_quantized_layers() == 0)
    throw ConfigError("predict.quantize = \"int8\": this app's predictor has no quantizable encoder",
                      root.where("predict.quantize"), "use predict.quantize = \"none\"");
  if (root.get_bool("predict.packed_inference", false) && nn::detail::packed_inference_encoders() == 0)
    throw ConfigError("predict.packed_inference = true: this app's predictor has no ethost encoder to pack",
                      root.where("predict.packed_inference"), "use predict.packed_inference = false");
}

std::vector<std::string> input_tables(const ConfigView& c) {
  auto tables = c.get_string_list("data.tables");
  if (tables.empty())
    throw ConfigError("data.tables is empty", c.where("data.tables"), "give at least one input file");
  return tables;
}

PredictOptions PredictOptions::from_config(const ConfigView& c) {
  PredictOptions o;
  o.tables = input_tables(c);
  o.reader = c.get_string("data.reader", "tsv");
  o.outputs = c.get_string("predict.outputs", "");
  if (o.outputs.empty()) {
    std::string dir = c.get_string("train.checkpoint_dir", "");
    o.outputs = dir.empty() ? "predictions.tsv" : dir + "/predictions.tsv";
  }
  o.output_schema = c.get_string_list("predict.output_schema");
  o.append_cols = c.get_string_list("predict.append_cols");
  o.batch_size = c.get_int("predict.batch_size", o.batch_size);
  o.header = c.get_bool("predict.header", o.header);
  o.chunk_rows = c.get_int("predict.chunk_rows", o.chunk_rows);
  return o;
}

PredictSummary run_predict(Context& ctx, Predictor& p, const ConfigView& root) {
  PredictOptions o = PredictOptions::from_config(root);
  auto log = log::get("host");
  std::vector<std::string> known;
  const auto offered = p.output_columns();
  for (const auto& c : offered) known.push_back(c.name);
  std::vector<OutputColumn> written;
  for (const auto& col : o.output_schema) {
    auto it = std::find(known.begin(), known.end(), col);
    if (it == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw ConfigError("predict.output_schema column '" + col + "' is unknown",
                        root.where("predict.output_schema"), "use " + list);
    }
    written.push_back(offered[size_t(it - known.begin())]);
  }
  PredictSummary s;
  s.output = o.outputs;
  if (!ctx.world().is_main()) {
    log.info("predict runs on rank 0 only");
    return s;
  }
  const auto t_load = std::chrono::steady_clock::now();
  p.prepare_predict();
  require_quantize_honoured(root);
  const auto t_start = std::chrono::steady_clock::now();
  auto reader = ctx.create<Reader>(o.reader, root.sub("data"));
  reader->open(o.tables);
  auto cols = reader->columns();
  p.bind_columns(cols);
  std::vector<size_t> append_idx;
  for (auto& c : o.append_cols) append_idx.push_back(data::column_index(cols, c, "predict.append_cols"));

  auto parent = fs::path(o.outputs).parent_path();
  if (!parent.empty()) fs::create_directories(parent);
  const std::string tmp = o.outputs + ".tmp";
  auto sink =
      make_predict_sink(o.outputs, tmp, written, o.append_cols, o.header, root.where("predict.outputs"));
  auto encode = [&](const Row& r, std::string& why) { return p.encode(r, why); };
  data::stream_dataset(
      *reader, encode, o.chunk_rows, [&](std::vector<data::Example>&& chunk, std::vector<Row>&& rows) {
        for (size_t start = 0; start < chunk.size(); start += static_cast<size_t>(o.batch_size)) {
          size_t end = std::min(chunk.size(), start + static_cast<size_t>(o.batch_size));
          std::vector<const data::Example*> examples;
          std::vector<PredictItem> items;
          for (size_t i = start; i < end; ++i) {
            examples.push_back(&chunk[i]);
            items.push_back({&rows[i], &chunk[i]});
          }
          data::Batch batch = p.collate(examples);
          TensorMap outputs = p.predict_batch(batch);
          std::vector<std::vector<std::string>> cells;
          p.postprocess(outputs, batch, items, o.output_schema, cells);
          if (cells.size() != items.size())
            throw InternalError("the predictor returned cells for another number of rows");
          std::vector<std::string> appended;
          for (size_t r = 0; r < items.size(); ++r) {
            appended.clear();
            for (size_t k : append_idx) appended.push_back(items[r].row->values[k]);
            sink->row(cells[r], appended);
            ++s.rows_written;
          }
        }
      });
  sink->finish();
  fs::rename(tmp, o.outputs);
  const auto t_end = std::chrono::steady_clock::now();
  const double secs = std::chrono::duration<double>(t_end - t_start).count();
  log.info("predict: ", s.rows_written, " rows in ", secs, " s (", secs > 0 ? s.rows_written / secs : 0.0,
           " rows/s; model prepared in ", std::chrono::duration<double>(t_start - t_load).count(), " s)");
  if (nn::detail::packed_inference_encoders() > 0)
    log.info("packed inference: ", nn::detail::packed_forward_passes(),
             " encoder forward(s) ran packed (the others had too little padding)");
  s.bad_rows = reader->bad_rows().count();
  std::string bad = reader->bad_rows().summary();
  if (!bad.empty()) log.warn("predict: ", bad);
  std::cout << "predicted " << s.rows_written << " rows";
  if (s.bad_rows) std::cout << " (" << s.bad_rows << " bad input rows skipped, see the warnings above)";
  std::cout << " -> " << s.output << std::endl;
  return s;
}

}  // namespace et::app
