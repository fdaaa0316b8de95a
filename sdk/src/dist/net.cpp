// net.cpp: interface listing, the advertised-address decision, and the interruptible TCP wait (POSIX
// sockets).
#include "ethost/dist/net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "ethost/error.h"
#include "ethost/text/split.h"

namespace et::dist {
namespace {

std::string interface_names(const std::vector<NetInterface>& ifs) {
  std::string s;
  for (auto& i : ifs) s += (s.empty() ? "" : ", ") + i.name + " " + i.address;
  return s.empty() ? "(none)" : s;
}

// One TCP connect attempt with a short timeout; true when it was accepted.
bool try_connect(const sockaddr_in& a, int timeout_ms) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  bool ok = false;
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  if (rc == 0) {
    ok = true;
  } else if (errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, timeout_ms) == 1) {
      int err = 0;
      socklen_t len = sizeof err;
      ok = ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
    }
  }
  ::close(fd);
  return ok;
}

}  // namespace

std::vector<NetInterface> list_interfaces() {
  std::vector<NetInterface> out;
  ifaddrs* head = nullptr;
  if (::getifaddrs(&head) != 0) return out;
  for (ifaddrs* p = head; p; p = p->ifa_next) {
    if (!p->ifa_addr || p->ifa_addr->sa_family != AF_INET) continue;
    char buf[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(p->ifa_addr)->sin_addr, buf, sizeof buf);
    out.push_back({p->ifa_name, buf, (p->ifa_flags & IFF_LOOPBACK) != 0, (p->ifa_flags & IFF_UP) != 0});
  }
  ::freeifaddrs(head);
  return out;
}

bool is_loopback_ipv4(const std::string& dotted) {
  in_addr a{};
  if (::inet_pton(AF_INET, dotted.c_str(), &a) != 1) return false;
  return (ntohl(a.s_addr) >> 24) == 127;
}

std::string resolve_ipv4(const std::string& host, const std::string& what_key) {
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) == 1) return host;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res)
    throw ConfigError("cannot resolve '" + host + "' to an IPv4 address: " + ::gai_strerror(rc), what_key,
                      "give the master's IP address, or fix its name in DNS or /etc/hosts");
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, buf, sizeof buf);
  ::freeaddrinfo(res);
  return buf;
}

std::string route_source_address(const std::string& ipv4, int port) {
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(static_cast<uint16_t>(port > 0 ? port : 9));
  if (::inet_pton(AF_INET, ipv4.c_str(), &dst.sin_addr) != 1) return {};
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};
  std::string out;
  sockaddr_in src{};
  socklen_t len = sizeof src;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&src), &len) == 0) {
    char buf[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &src.sin_addr, buf, sizeof buf);
    out = buf;
  }
  ::close(fd);
  return out;
}

std::string Advertise::describe() const {
  std::string s = address.empty() ? "(interfaces " : address;
  if (address.empty()) {
    for (size_t i = 0; i < interfaces.size(); ++i) s += (i ? "," : "") + interfaces[i];
    s += ")";
  } else if (!interface.empty()) {
    s += " on " + interface;
  }
  if (interfaces.size() > 1) s += " (+" + std::to_string(interfaces.size() - 1) + " more interfaces)";
  return s + " (" + source + ")";
}

Advertise choose_advertise(const std::string& master_addr, int master_port, const std::string& env_ifname,
                           const std::string& config_ifname) {
  const auto ifs = list_interfaces();
  Advertise a;
  auto by_name = [&](const std::string& names, const std::string& key) {
    a.interfaces = split_list(names);
    a.source = key;
    for (auto& n : a.interfaces) {
      const NetInterface* found = nullptr;
      for (auto& i : ifs)
        if (i.name == n) found = &i;
      if (!found)
        throw ConfigError("network interface '" + n +
                              "' does not exist on this host (it has: " + interface_names(ifs) + ")",
                          key, "name an interface that carries the route to the other nodes");
      if (a.address.empty()) {
        a.address = found->address;
        a.interface = found->name;
      }
    }
  };
  if (!env_ifname.empty()) {
    by_name(env_ifname, "GLOO_SOCKET_IFNAME");
    return a;
  }
  if (!config_ifname.empty()) {
    by_name(config_ifname, "distributed.socket_ifname");
    return a;
  }
  const std::string master = resolve_ipv4(master_addr);
  if (is_loopback_ipv4(master)) {
    a.address = "127.0.0.1";
    a.source = "MASTER_ADDR " + master_addr + " is loopback";
  } else {
    a.address = route_source_address(master, master_port);
    a.source = "route to MASTER_ADDR " + master_addr;
    if (a.address.empty())
      throw ConfigError("this host has no route to MASTER_ADDR " + master_addr + " (" + master + ")",
                        "MASTER_ADDR", "check the address, or choose the interface with GLOO_SOCKET_IFNAME");
    if (is_loopback_ipv4(a.address))
      throw ConfigError("the route to MASTER_ADDR " + master_addr + " leaves through loopback address " +
                            a.address + ", which the other hosts cannot reach",
                        "MASTER_ADDR",
                        "set GLOO_SOCKET_IFNAME (or distributed.socket_ifname) to the interface "
                        "that reaches the other nodes; interfaces: " +
                            interface_names(ifs));
  }
  for (auto& i : ifs)
    if (i.address == a.address) a.interface = i.name;
  return a;
}

bool wait_for_tcp(const std::string& host, int port, std::chrono::steady_clock::time_point deadline,
                  const std::function<bool()>& should_stop) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, resolve_ipv4(host).c_str(), &a.sin_addr) != 1) return false;
  for (;;) {
    if (should_stop && should_stop()) return false;
    if (try_connect(a, 200)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace et::dist
