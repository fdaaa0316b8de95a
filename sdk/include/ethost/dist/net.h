// net.h: which local address a rank advertises to its peers (GLOO_SOCKET_IFNAME, a config key, or the route
// to MASTER_ADDR — never loopback on a multi-host job), and a bounded, interruptible wait for a TCP port.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "ethost/export.h"

namespace et::dist {

struct ET_API NetInterface {
  std::string name;     // e.g. eth0
  std::string address;  // its IPv4 address (dotted quad)
  bool loopback = false;
  bool up = false;
};

// The host's IPv4 interfaces (getifaddrs), in the kernel's order.
ET_API std::vector<NetInterface> list_interfaces();

ET_API bool is_loopback_ipv4(const std::string& dotted);
// Resolves a host name or dotted quad to an IPv4 address; throws et::ConfigError naming `what_key` when it
// fails.
ET_API std::string resolve_ipv4(const std::string& host, const std::string& what_key = "MASTER_ADDR");
// The local address the kernel would use to reach ipv4:port (UDP connect + getsockname; nothing is sent).
// Empty when there is no route.
ET_API std::string route_source_address(const std::string& ipv4, int port);

// What a rank advertises: either named interfaces (Gloo gets one device per name) or one address.
struct ET_API Advertise {
  std::vector<std::string> interfaces;  // chosen by name: GLOO_SOCKET_IFNAME or distributed.socket_ifname
  std::string address;                  // the (first) advertised IPv4 address
  std::string interface;                // the interface holding `address`, when known
  std::string source;                   // why: "GLOO_SOCKET_IFNAME", "route to MASTER_ADDR 10.0.0.1", ...
  std::string describe() const;         // "10.0.0.2 on eth0 (route to MASTER_ADDR 10.0.0.1)"
};

// Decides the advertised address. Precedence: GLOO_SOCKET_IFNAME (env_ifname, comma-separated, torch's
// contract), then the config key distributed.socket_ifname, then loopback when MASTER_ADDR is loopback, then
// the route to MASTER_ADDR. Throws et::ConfigError for an unknown interface name (listing the host's
// interfaces), or when the only route to a non-loopback MASTER_ADDR is a loopback address.
ET_API Advertise choose_advertise(const std::string& master_addr, int master_port,
                                  const std::string& env_ifname, const std::string& config_ifname);

// Waits until something accepts TCP connections on host:port (a fresh socket per attempt, every 50 ms).
// Returns true when it did; false when `deadline` passed or `should_stop` returned true.
ET_API bool wait_for_tcp(const std::string& host, int port, std::chrono::steady_clock::time_point deadline,
                         const std::function<bool()>& should_stop = {});

}  // namespace et::dist
