// http_client.h: a raw loopback HTTP/1.1 client for the serving tests — whole requests, or bytes sent piece
// by piece (slow headers, half bodies, disconnects), every read bounded by a timeout.
#pragma once

#include <map>
#include <string>

namespace et::test {

struct HttpReply {
  int status = 0;                              // 0: no (complete) response before the timeout or the close
  std::map<std::string, std::string> headers;  // lower-cased names
  std::string body;
  bool closed = false;  // the server closed the connection after (or instead of) the response
};

// One TCP connection to 127.0.0.1:port.
class HttpConn {
 public:
  explicit HttpConn(int port);
  ~HttpConn();
  HttpConn(const HttpConn&) = delete;
  HttpConn& operator=(const HttpConn&) = delete;
  bool connected() const { return fd_ >= 0; }
  // Bytes received and not yet taken by read_reply.
  size_t buffered() const { return buf_.size(); }
  // Sends raw bytes; false when the peer has gone.
  bool send(const std::string& bytes);
  // Reads one response (Content-Length framed) within timeout_s; the answer to a HEAD request has no body
  // whatever its Content-Length says.
  HttpReply read_reply(double timeout_s = 30.0, bool to_head = false);
  // True when the server closes the connection within timeout_s (EOF or reset).
  bool closed_within(double timeout_s);
  void close();

 private:
  int fd_ = -1;
  std::string buf_;
};

// A whole request on a fresh connection (Connection: close).
HttpReply http_request(int port, const std::string& method, const std::string& path,
                       const std::string& body = "", const std::string& extra_headers = "",
                       double timeout_s = 30.0);
// The bytes of a request (for HttpConn::send), keep-alive unless extra_headers says otherwise.
std::string http_bytes(const std::string& method, const std::string& path, const std::string& body = "",
                       const std::string& extra_headers = "");

}  // namespace et::test
