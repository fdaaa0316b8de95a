// http_server.cpp: the Boost.Beast HTTP/1.1 server behind `ethost --mode serve`.
#include "http_server.h"

#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "ethost/error.h"
#include "ethost/log.h"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace et::host::serve {

std::string error_json(int status, const std::string& message, const std::string& field) {
  nlohmann::json e = {{"code", status}, {"message", message}};
  if (!field.empty()) e["field"] = field;
  // Messages may quote what a client sent: invalid UTF-8 is replaced, never an exception.
  return nlohmann::json{{"error", e}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const char* status_reason(int status) {
  auto r = http::obsolete_reason(static_cast<http::status>(status));
  return r.data();
}

namespace {

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

struct HttpServer::Impl {
  Impl(HttpLimits l, Handler h, Metrics& m) : limits(l), handler(std::move(h)), metrics(m) {}
  HttpLimits limits;
  Handler handler;
  Metrics& metrics;
  // Before ioc: sessions destroyed with ioc's pending handlers still read these.
  std::atomic<bool> accept_paused{false};  // at max_connections: the next session to close resumes accepting
  std::atomic<bool> shutting_down{false};
  net::io_context ioc;
  // The acceptor's handlers, resumes and close run on one strand: with serve.io_threads > 1 they would
  // otherwise touch the acceptor from several threads at once.
  net::strand<net::io_context::executor_type> accept_strand = net::make_strand(ioc);
  tcp::acceptor acceptor{accept_strand};
  std::atomic<bool> draining{false};
  std::atomic<int64_t> pending_writes{0};  // answers being written
  int64_t accept_errors = 0;
  std::optional<net::signal_set> signals;
  ~Impl() { shutting_down = true; }
  void accept();
  void resume_accepting();
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, HttpServer::Impl& server) : stream_(std::move(socket)), srv_(server) {
    ++srv_.metrics.open_connections;
  }
  ~Session() {
    if (counted_) --srv_.metrics.in_flight;
    --srv_.metrics.open_connections;
    srv_.resume_accepting();
  }
  void start() {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&Session::read_header, shared_from_this()));
  }

 private:
  void read_header() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(srv_.limits.max_header_bytes));
    parser_->body_limit(static_cast<std::uint64_t>(srv_.limits.max_body_bytes));
    stream_.expires_never();
    arm(srv_.limits.header_timeout_s);
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Session::on_header, shared_from_this()));
  }

  void on_header(beast::error_code ec, std::size_t) {
    if (ec) return fail_read(ec);
    auto& req = parser_->get();
    endpoint_ = std::string(req.target().substr(0, req.target().find('?')));
    head_ = req.method() == http::verb::head;
    started_ = std::chrono::steady_clock::now();
    // A request counts as in flight from its headers on: a drain lets it finish.
    if (srv_.draining.load()) return reply(503, "the server is shutting down", "", true, true);
    counted_ = true;
    if (++srv_.metrics.in_flight > srv_.limits.max_concurrent_requests)
      return reply(503,
                   "too many concurrent requests (serve.max_concurrent_requests = " +
                       std::to_string(srv_.limits.max_concurrent_requests) + "); retry later",
                   "", true, true);
    if (auto len = parser_->content_length(); len && *len > static_cast<uint64_t>(srv_.limits.max_body_bytes))
      return reply(
          413,
          "the request body has " + std::to_string(*len) +
              " bytes, more than serve.max_body_bytes = " + std::to_string(srv_.limits.max_body_bytes),
          "body", true);
    if (beast::iequals(req[http::field::expect], "100-continue")) {
      auto res = std::make_shared<http::response<http::empty_body>>(http::status::continue_, req.version());
      auto self = shared_from_this();
      return http::async_write(stream_, *res, [self, res](beast::error_code wec, std::size_t) {
        if (wec) return self->close();
        self->read_body();
      });
    }
    read_body();
  }

  void read_body() {
    arm(srv_.limits.read_timeout_s);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::on_body, shared_from_this()));
  }

  // Reads are bounded by our own timer (not the stream's expiry, which closes the socket): a timed-out
  // request can still be answered 408.
  void arm(double secs) {
    timed_out_ = false;
    timer_.expires_after(seconds(secs));
    timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->timed_out_ = true;
      beast::error_code ignored;
      self->stream_.socket().cancel(ignored);
    });
  }

  void fail_read(beast::error_code ec) {
    timer_.cancel();
    if (timed_out_) ec = beast::error::timeout;
    if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
        ec == net::error::operation_aborted)
      return close();
    if (ec == beast::error::timeout) {
      if (!parser_ || !parser_->got_some()) return close();  // an idle keep-alive connection
      return reply(
          408, "the request was not received within the timeout (serve.header_timeout_s / read_timeout_s)",
          "", true);
    }
    if (ec == http::error::body_limit)
      return reply(413,
                   "the request body is larger than serve.max_body_bytes = " +
                       std::to_string(srv_.limits.max_body_bytes),
                   "body", true);
    if (ec == http::error::header_limit)
      return reply(
          431,
          "the request headers are larger than " + std::to_string(srv_.limits.max_header_bytes) + " bytes",
          "", true);
    reply(400, "malformed HTTP request: " + ec.message(), "", true);
  }

  void on_body(beast::error_code ec, std::size_t) {
    if (ec) return fail_read(ec);
    timer_.cancel();
    auto req = parser_->release();
    keep_alive_ = req.keep_alive();
    HttpRequest r;
    r.method = std::string(req.method_string());
    std::string target(req.target());
    auto q = target.find('?');
    r.target = target.substr(0, q);
    if (q != std::string::npos) r.query = target.substr(q + 1);
    r.content_type = std::string(req[http::field::content_type]);
    r.body = std::move(req.body());
    gone_ = std::make_shared<std::atomic<bool>>(false);
    watch();
    auto self = shared_from_this();
    auto answered = std::make_shared<std::atomic<bool>>(false);
    Responder respond = [self, answered](HttpResponse&& res) {
      if (answered->exchange(true)) return;  // exactly one answer per request
      net::post(self->stream_.get_executor(),
                [self, res = std::move(res)]() mutable { self->send(std::move(res)); });
    };
    try {
      srv_.handler(std::move(r), gone_, respond);
    } catch (const std::exception& e) {  // a handler bug must not take the server down
      log::get("serve").error(endpoint_, ": ", e.what());
      HttpResponse res;
      res.status = 500;
      res.body = error_json(500, std::string("internal error: ") + e.what());
      respond(std::move(res));
    }
  }

  // While the answer is pending, a readable socket that reads 0 bytes means the client has gone.
  void watch() {
    auto self = shared_from_this();
    auto gen = ++watch_gen_;
    watching_ = true;
    stream_.socket().async_wait(tcp::socket::wait_read, [self, gen](beast::error_code ec) {
      if (gen != self->watch_gen_) return;
      self->watching_ = false;
      if (ec) return;
      char c;
      ssize_t n = ::recv(self->stream_.socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) self->gone_->store(true);
    });
  }

  void reply(int status, const std::string& message, const std::string& field, bool close_after,
             bool retry_after = false) {
    HttpResponse res;
    res.status = status;
    res.body = error_json(status, message, field);
    res.close = close_after;
    if (retry_after) res.headers.emplace_back("Retry-After", "1");
    if (started_ == std::chrono::steady_clock::time_point{}) started_ = std::chrono::steady_clock::now();
    send(std::move(res));
  }

  void send(HttpResponse&& res) {
    if (watching_) {
      ++watch_gen_;
      watching_ = false;
      beast::error_code ignored;
      stream_.socket().cancel(ignored);
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    srv_.metrics.request_done(endpoint_.empty() ? "-" : endpoint_, res.status, secs);
    started_ = {};
    if (counted_) {  // no longer counts against serve.max_concurrent_requests (a slow reader holds no slot)
      --srv_.metrics.in_flight;
      counted_ = false;
    }
    if (gone_ && gone_->load()) return close();
    auto msg = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(res.status), 11);
    msg->set(http::field::server, "ethost");
    msg->set(http::field::content_type, res.content_type);
    for (auto& [k, v] : res.headers) msg->set(k, v);
    msg->body() = std::move(res.body);
    msg->keep_alive(keep_alive_ && !res.close && !srv_.draining.load());
    msg->prepare_payload();
    if (head_) {  // HEAD: GET's headers, Content-Length included, and no body (RFC 9110 9.3.2)
      const auto n = msg->body().size();
      msg->body().clear();
      msg->content_length(n);
      head_ = false;
    }
    auto self = shared_from_this();
    stream_.expires_after(seconds(srv_.limits.read_timeout_s));  // a client that does not read is cut off
    ++srv_.pending_writes;  // a drain waits for the whole answer, not just for its start
    http::async_write(stream_, *msg, [self, msg](beast::error_code ec, std::size_t) {
      --self->srv_.pending_writes;
      if (ec || !msg->keep_alive()) return self->close();
      self->read_header();
    });
  }

  void close() {
    timer_.cancel();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  net::steady_timer timer_{stream_.get_executor()};
  bool timed_out_ = false;
  HttpServer::Impl& srv_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<std::atomic<bool>> gone_;
  std::string endpoint_;
  std::chrono::steady_clock::time_point started_{};
  bool keep_alive_ = true, counted_ = false, watching_ = false, head_ = false;
  uint64_t watch_gen_ = 0;
};

}  // namespace

void HttpServer::Impl::accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;
    if (ec) {
      // Out of file descriptors (EMFILE) and the like: accepting again at once would spin on the same error,
      // so retry after a pause, and log the 1st, 2nd, 4th, 8th ... failure only.
      ++accept_errors;
      if ((accept_errors & (accept_errors - 1)) == 0)
        log::get("serve").warn("accept failed (", accept_errors, " time(s) so far): ", ec.message(),
                               "; retrying every 100 ms (raise `ulimit -n`, or lower serve.max_connections)");
      auto t = std::make_shared<net::steady_timer>(accept_strand, std::chrono::milliseconds(100));
      t->async_wait([this, t](beast::error_code) { accept(); });
      return;
    }
    std::make_shared<Session>(std::move(socket), *this)->start();
    if (metrics.open_connections.load() < limits.max_connections) return accept();
    // At the cap: further clients wait in the listen backlog until a session closes (~Session resumes). A
    // session may have closed since the check: then resume here (one of the two wins the flag).
    accept_paused = true;
    if (metrics.open_connections.load() < limits.max_connections && accept_paused.exchange(false)) accept();
  });
}

void HttpServer::Impl::resume_accepting() {
  if (!shutting_down.load() && accept_paused.load() &&
      metrics.open_connections.load() < limits.max_connections && accept_paused.exchange(false))
    net::post(accept_strand, [this] { accept(); });
}

HttpServer::HttpServer(HttpLimits limits, Handler handler, Metrics& metrics)
    : impl_(std::make_unique<Impl>(limits, std::move(handler), metrics)) {}
HttpServer::~HttpServer() = default;

namespace {

// Room for max_connections sockets plus the process's own files: raise the soft RLIMIT_NOFILE toward the hard
// one when it is short, and say so when even the hard limit is (accept then fails with EMFILE before the
// cap).
void ensure_descriptors(int64_t max_connections) {
  constexpr rlim_t kOwnFiles = 64;  // libraries' and the model's files, the log, epoll, timers, the listener
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  const rlim_t want = static_cast<rlim_t>(max_connections) + kOwnFiles;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
    rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : std::min(want, rl.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) rl = raised;
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want)
    log::get("serve").warn("serve.max_connections = ", max_connections, " needs about ", want,
                           " file descriptors but `ulimit -n` allows ", rl.rlim_cur,
                           ": connections beyond that wait until others close (raise ulimit -n or lower "
                           "serve.max_connections)");
}

}  // namespace

int HttpServer::listen(const std::string& host, int port) {
  ensure_descriptors(impl_->limits.max_connections);
  beast::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (ec)
    throw UsageError("serve.host '" + host + "' is not an IP address", "serve.host",
                     "use an address such as 127.0.0.1 or 0.0.0.0");
  tcp::endpoint ep(address, static_cast<unsigned short>(port));
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    throw UsageError("cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message(),
                     "serve.port", "pick a free port with --set serve.port=N (0 picks one)");
  return a.local_endpoint().port();
}

void HttpServer::run(int threads) {
  auto guard = net::make_work_guard(impl_->ioc);
  net::post(impl_->accept_strand, [this] { impl_->accept(); });
  std::vector<std::thread> extra;
  for (int i = 1; i < threads; ++i) extra.emplace_back([this] { impl_->ioc.run(); });
  impl_->ioc.run();
  for (auto& t : extra) t.join();
}

void HttpServer::begin_drain() {
  impl_->draining = true;
  net::post(impl_->accept_strand, [this] {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
  });
}

bool HttpServer::draining() const { return impl_->draining.load(); }

int64_t HttpServer::pending_writes() const { return impl_->pending_writes.load(); }

void HttpServer::stop() { impl_->ioc.stop(); }

void HttpServer::after(double secs, std::function<void()> fn) {
  auto t = std::make_shared<net::steady_timer>(impl_->ioc, seconds(secs));
  t->async_wait([t, fn = std::move(fn)](beast::error_code ec) {
    if (!ec) fn();
  });
}

void HttpServer::on_signal(std::function<void(int)> fn) {
  impl_->signals.emplace(impl_->ioc, SIGINT, SIGTERM);
  impl_->signals->async_wait([this, fn = std::move(fn)](beast::error_code ec, int sig) {
    if (ec) return;
    fn(sig);
    impl_->signals->async_wait([](beast::error_code ec2, int sig2) {
      if (ec2) return;
      std::signal(sig2, SIG_DFL);  // a second signal: stop now
      std::raise(sig2);
    });
  });
}

}  // namespace et::host::serve
