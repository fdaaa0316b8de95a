// serve.h: `ethost --app <app> --mode serve` — any app with the Predictor capability over HTTP
// (docs/serving.md): /predict, /tokenize, /v1/embeddings, /health, /ready, /info, /metrics.
#pragma once

#include <string>

#include "ethost/config.h"
#include "ethost/predictor.h"

namespace et::host::serve {

struct AppInfo {
  std::string app;          // "app/text_classify"
  std::string app_version;  // the component's version
  std::string config_toml;  // the resolved config (GET /info)
};

// Prepares the predictor, listens (logs and prints "listening on http://HOST:PORT"), and serves until
// SIGINT/SIGTERM, which drains in-flight requests (up to serve.drain_timeout_s) before it returns.
void run_serve(Predictor& predictor, const ConfigView& root, const AppInfo& info);

}  // namespace et::host::serve
