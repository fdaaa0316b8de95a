// http_client.cpp: the raw loopback HTTP/1.1 client of the serving tests (POSIX sockets, poll timeouts).
#include "http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace et::test {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

HttpConn::HttpConn(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

HttpConn::~HttpConn() { close(); }

void HttpConn::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool HttpConn::send(const std::string& bytes) {
  size_t off = 0;
  while (fd_ >= 0 && off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return fd_ >= 0;
}

HttpReply HttpConn::read_reply(double timeout_s, bool to_head) {
  HttpReply r;
  const double deadline = now_s() + timeout_s;
  for (;;) {
    // A complete response in the buffer?
    auto head_end = buf_.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      std::string head = buf_.substr(0, head_end);
      size_t line_end = head.find("\r\n");
      std::string status_line = head.substr(0, line_end);
      size_t len = 0;
      std::map<std::string, std::string> headers;
      for (size_t p = line_end; p != std::string::npos && p < head.size();) {
        size_t s = p + 2, e = head.find("\r\n", s);
        std::string h = head.substr(s, e == std::string::npos ? std::string::npos : e - s);
        auto colon = h.find(':');
        if (colon != std::string::npos) {
          std::string v = h.substr(colon + 1);
          v.erase(0, v.find_first_not_of(' '));
          headers[lower(h.substr(0, colon))] = v;
        }
        p = e;
      }
      if (headers.count("content-length") && !to_head) len = std::stoul(headers["content-length"]);
      if (buf_.size() >= head_end + 4 + len) {
        auto sp = status_line.find(' ');
        r.status = sp == std::string::npos ? 0 : std::atoi(status_line.c_str() + sp + 1);
        r.headers = std::move(headers);
        r.body = buf_.substr(head_end + 4, len);
        buf_.erase(0, head_end + 4 + len);
        if (r.status == 100) {  // 100 Continue: the real response follows
          r = HttpReply{};
          continue;
        }
        return r;
      }
    }
    double left = deadline - now_s();
    if (fd_ < 0 || left <= 0) return r;
    pollfd p{fd_, POLLIN, 0};
    int pr = ::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) return r;
    char chunk[65536];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      r.closed = true;
      close();
      return r;
    }
    buf_.append(chunk, static_cast<size_t>(n));
  }
}

bool HttpConn::closed_within(double timeout_s) {
  const double deadline = now_s() + timeout_s;
  while (fd_ >= 0) {
    double left = deadline - now_s();
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    int pr = ::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) return false;
    char chunk[4096];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close();
      return true;
    }
    buf_.append(chunk, static_cast<size_t>(n));  // e.g. a 408 before the close
  }
  return true;
}

std::string http_bytes(const std::string& method, const std::string& path, const std::string& body,
                       const std::string& extra_headers) {
  std::string s = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  if (!body.empty() || method == "POST") {
    if (extra_headers.find("Content-Type") == std::string::npos) s += "Content-Type: application/json\r\n";
    s += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  s += extra_headers + "\r\n" + body;
  return s;
}

HttpReply http_request(int port, const std::string& method, const std::string& path, const std::string& body,
                       const std::string& extra_headers, double timeout_s) {
  HttpConn c(port);
  if (!c.connected()) return {};
  if (!c.send(http_bytes(method, path, body, extra_headers + "Connection: close\r\n"))) return {};
  return c.read_reply(timeout_s);
}

}  // namespace et::test
