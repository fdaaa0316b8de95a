// http_server.h: an HTTP/1.1 server on Boost.Beast (keep-alive, header/body timeouts, body and header size
// limits, 100-continue, client-disconnect detection while a response is pending, graceful drain). It knows
// nothing of ethost's endpoints: a Handler answers each request, at once or later from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "metrics.h"

namespace et::host::serve {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // "/predict" (the path; a query string is cut off into `query`)
  std::string query;
  std::string body;
  std::string content_type;
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  bool close = false;  // close the connection after this response
};

// Answers a request by calling `respond` exactly once (from any thread). `client_gone` turns true when the
// client disconnects before the answer.
using Responder = std::function<void(HttpResponse&&)>;
using Handler = std::function<void(HttpRequest&& request, std::shared_ptr<std::atomic<bool>> client_gone,
                                   Responder respond)>;

struct HttpLimits {
  int64_t max_body_bytes = 1 << 20;
  int64_t max_header_bytes = 16384;
  int64_t max_concurrent_requests = 512;
  int64_t max_connections = 1024;  // accepting pauses at this many open connections
  double header_timeout_s = 10.0;
  double read_timeout_s = 30.0;
};

class HttpServer {
 public:
  HttpServer(HttpLimits limits, Handler handler, Metrics& metrics);
  ~HttpServer();
  // Binds and listens (throws et::UsageError naming serve.host / serve.port when it cannot); the bound port.
  int listen(const std::string& host, int port);
  // Serves on `threads` threads until stop(); returns when they are done.
  void run(int threads);
  // Stops accepting; requests read from now on get 503 (Connection: close). In-flight ones still finish.
  void begin_drain();
  bool draining() const;
  // Answers whose write has started and not finished (a drain waits for them).
  int64_t pending_writes() const;
  // Ends run() (open connections are closed).
  void stop();
  // Runs fn on the server's threads after `seconds` (timers for the drain).
  void after(double seconds, std::function<void()> fn);
  // Runs fn when SIGINT or SIGTERM arrives (once; a second signal ends the process at once).
  void on_signal(std::function<void(int)> fn);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// A JSON error body: {"error": {"code": status, "message": ..., "field": ...}}.
std::string error_json(int status, const std::string& message, const std::string& field = "");
const char* status_reason(int status);

}  // namespace et::host::serve
