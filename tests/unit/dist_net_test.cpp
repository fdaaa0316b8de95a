// dist_net_test.cpp: the advertised-address decision (precedence of GLOO_SOCKET_IFNAME, the config key,
// loopback and the route), its errors, and the bounded TCP wait. The two-host behaviour is in
// integration.multinode.
#include "ethost/dist/net.h"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "ethost/error.h"

namespace {

using et::dist::choose_advertise;

bool has(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

std::string loopback_name() {
  for (auto& i : et::dist::list_interfaces())
    if (i.loopback) return i.name;
  return {};
}

}  // namespace

TEST_SUITE("unit.dist_net") {
  TEST_CASE("addresses: loopback test, resolution, route source") {
    CHECK(et::dist::is_loopback_ipv4("127.0.0.1"));
    CHECK(et::dist::is_loopback_ipv4("127.0.1.1"));  // Debian's /etc/hosts entry for the host name
    CHECK_FALSE(et::dist::is_loopback_ipv4("10.99.0.1"));
    CHECK_FALSE(et::dist::is_loopback_ipv4("not an address"));
    CHECK(et::dist::resolve_ipv4("10.1.2.3") == "10.1.2.3");
    CHECK(et::dist::is_loopback_ipv4(et::dist::resolve_ipv4("localhost")));
    try {
      et::dist::resolve_ipv4("no-such-host.invalid", "--master_addr");
      FAIL("resolved a name that cannot exist");
    } catch (const et::ConfigError& e) {
      CHECK(has(e.what(), "--master_addr"));
      CHECK(has(e.what(), "no-such-host.invalid"));
    }
    CHECK(et::dist::route_source_address("127.0.0.1", 29500) == "127.0.0.1");
    CHECK(et::dist::route_source_address("bad", 1).empty());
  }

  TEST_CASE("precedence: GLOO_SOCKET_IFNAME, then distributed.socket_ifname, then loopback, then the route") {
    const std::string lo = loopback_name();
    REQUIRE(!lo.empty());
    auto a = choose_advertise("127.0.0.1", 29500, "", "");
    CHECK(a.address == "127.0.0.1");
    CHECK(a.interfaces.empty());
    CHECK(has(a.source, "is loopback"));
    a = choose_advertise("localhost", 29500, "", "");
    CHECK(a.address == "127.0.0.1");
    a = choose_advertise("127.0.0.1", 29500, "", lo);
    CHECK(a.source == "distributed.socket_ifname");
    CHECK(a.interfaces == std::vector<std::string>{lo});
    CHECK(a.interface == lo);
    a = choose_advertise("127.0.0.1", 29500, " " + lo + " , " + lo,
                         "nonexistent0");  // env wins; list, trimmed
    CHECK(a.source == "GLOO_SOCKET_IFNAME");
    CHECK(a.interfaces == std::vector<std::string>{lo, lo});
    CHECK(has(a.describe(), "(GLOO_SOCKET_IFNAME)"));
    try {
      choose_advertise("127.0.0.1", 29500, "nonexistent0", "");
      FAIL("accepted an interface that does not exist");
    } catch (const et::ConfigError& e) {
      CHECK(e.where() == "GLOO_SOCKET_IFNAME");
      CHECK(has(e.what(), "'nonexistent0' does not exist"));
      CHECK(has(e.what(), lo + " 127.0.0.1"));  // lists what the host has
    }
    // A non-loopback master: whatever the route gives, it is never a loopback address (or it is an error).
    try {
      a = choose_advertise("192.0.2.1", 29500, "", "");  // TEST-NET-1
      CHECK_FALSE(et::dist::is_loopback_ipv4(a.address));
      CHECK(has(a.source, "route to MASTER_ADDR 192.0.2.1"));
    } catch (const et::ConfigError& e) {
      CHECK(e.where() == "MASTER_ADDR");
    }
  }

  TEST_CASE("wait_for_tcp: true once something listens, false at the deadline or when asked to stop") {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    const int port = ntohs(a.sin_port);
    auto soon = [] { return std::chrono::steady_clock::now() + std::chrono::milliseconds(300); };
    auto t0 = std::chrono::steady_clock::now();
    CHECK_FALSE(
        et::dist::wait_for_tcp("127.0.0.1", port, soon()));  // bound, not listening: refused until deadline
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
    REQUIRE(::listen(fd, 4) == 0);
    CHECK(et::dist::wait_for_tcp("127.0.0.1", port, soon()));
    ::close(fd);
    int calls = 0;
    CHECK_FALSE(et::dist::wait_for_tcp("127.0.0.1", port,
                                       std::chrono::steady_clock::now() + std::chrono::hours(1),
                                       [&] { return ++calls > 2; }));
    CHECK(calls == 3);
  }
}
