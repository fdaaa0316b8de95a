// serve_options.cpp: ServeOptions from the serve.* (and predict.output_schema) keys.
#include "serve_options.h"

namespace et::host::serve {

ServeOptions ServeOptions::from_config(const ConfigView& c) {
  ServeOptions o;
  o.host = c.get_string("serve.host", o.host);
  o.port = static_cast<int>(c.get_int("serve.port", o.port));
  o.batching = c.get_bool("serve.batching", o.batching);
  o.max_batch_size = c.get_int("serve.max_batch_size", o.max_batch_size);
  o.max_batch_tokens = c.get_int("serve.max_batch_tokens", o.max_batch_tokens);
  o.max_wait_ms = c.get_double("serve.max_wait_ms", o.max_wait_ms);
  o.max_pad_ratio = c.get_double("serve.max_pad_ratio", o.max_pad_ratio);
  o.precision = c.get_string("serve.precision", o.precision);
  o.workers = static_cast<int>(c.get_int("serve.workers", o.workers));
  o.io_threads = static_cast<int>(c.get_int("serve.io_threads", o.io_threads));
  o.max_rows = c.get_int("serve.max_rows", o.max_rows);
  o.max_body_bytes = c.get_int("serve.max_body_bytes", o.max_body_bytes);
  o.max_cell_bytes = c.get_int("serve.max_cell_bytes", o.max_cell_bytes);
  o.max_concurrent_requests = c.get_int("serve.max_concurrent_requests", o.max_concurrent_requests);
  o.max_connections = c.get_int("serve.max_connections", o.max_connections);
  o.max_queued_tokens = c.get_int("serve.max_queued_tokens", o.max_queued_tokens);
  o.header_timeout_s = c.get_double("serve.header_timeout_s", o.header_timeout_s);
  o.read_timeout_s = c.get_double("serve.read_timeout_s", o.read_timeout_s);
  o.drain_timeout_s = c.get_double("serve.drain_timeout_s", o.drain_timeout_s);
  o.embedding_column = c.get_string("serve.embedding_column", o.embedding_column);
  if (c.has("predict.output_schema")) o.output_schema = c.get_string_list("predict.output_schema");
  o.model_dir = c.get_string("pretrain_model_name_or_path", "");
  if (o.model_dir.empty()) o.model_dir = c.get_string("train.checkpoint_dir", "");
  return o;
}

}  // namespace et::host::serve
