// serve_options.h: the serve.* keys of `ethost --mode serve`, read once from the resolved config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ethost/config.h"

namespace et::host::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;
  bool batching = true;
  int64_t max_batch_size = 32;
  int64_t max_batch_tokens = 16384;
  double max_wait_ms = 2.0;
  double max_pad_ratio = 1.5;
  int workers = 1;
  std::string precision = "fp32";  // fp32 | bf16
  int io_threads = 1;
  int64_t max_rows = 256;
  int64_t max_body_bytes = 1 << 20;
  int64_t max_cell_bytes = 65536;
  int64_t max_concurrent_requests = 512;
  int64_t max_connections = 1024;
  int64_t max_queued_tokens = 262144;
  double header_timeout_s = 10.0;
  double read_timeout_s = 30.0;
  double drain_timeout_s = 30.0;
  std::string embedding_column = "sentence_embedding";
  std::vector<std::string> output_schema;  // predict.output_schema: the default columns of /predict
  std::string model_dir;  // pretrain_model_name_or_path, else train.checkpoint_dir (for /info)

  static ServeOptions from_config(const ConfigView& root);
};

}  // namespace et::host::serve
