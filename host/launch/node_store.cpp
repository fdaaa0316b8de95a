// node_store.cpp: NodeStore on c10d::TCPStore — keys under "ethost/launch/": node/<r>, nodes (counter),
// notice/<r> and notices (counter), done (counter).
#include "launch/node_store.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <thread>

#include "ethost/dist/net.h"
#include "ethost/error.h"

namespace et::host {
namespace {

const std::string kPfx = "ethost/launch/";

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }

std::string first_line(const std::exception& e) {
  std::string w = e.what();
  return w.substr(0, w.find('\n'));
}

}  // namespace

struct NodeStore::Impl {
  c10::intrusive_ptr<c10d::TCPStore> store;
  std::string at;
  int node = 0, nnodes = 1, port = 0;
  bool posted = false;

  DistError lost(const std::exception& e) const {
    return DistError("node " + std::to_string(node) + " lost contact with the rendezvous store at " + at +
                         " (" + first_line(e) + ")",
                     "launcher", "node 0's launcher hosts it: see whether it is still running");
  }
};

NodeStore::NodeStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NodeStore::~NodeStore() = default;

std::unique_ptr<NodeStore> NodeStore::open(const std::string& addr, int port, int node_rank, int nnodes,
                                           Clock::time_point deadline, const StopFn& stop,
                                           const std::string& timeout_text) {
  auto impl = std::make_unique<Impl>();
  impl->node = node_rank;
  impl->nnodes = nnodes;
  const bool server = node_rank == 0;
  if (!server && !dist::wait_for_tcp(addr, port, deadline, stop)) {
    if (stop && stop()) return nullptr;
    throw DistError("node " + std::to_string(node_rank) + ": nothing answered at " + addr + ":" +
                        std::to_string(port) + " within the rendezvous timeout" +
                        (timeout_text.empty() ? "" : " (" + timeout_text + ")"),
                    "launcher",
                    "start node 0's launcher (it hosts the rendezvous store) with the same --master_addr and "
                    "--master_port, or raise --rendezvous_timeout");
  }
  c10d::TCPStoreOptions so;
  so.port = static_cast<uint16_t>(port);
  so.isServer = server;
  so.waitWorkers = false;
  so.timeout = std::chrono::milliseconds(30000);
  try {
    impl->store = c10::make_intrusive<c10d::TCPStore>(addr, so);
  } catch (const std::exception& e) {
    throw DistError(
        std::string(server ? "cannot host" : "cannot reach") + " the rendezvous store at " + addr + ":" +
            std::to_string(port) + ": " + first_line(e),
        "launcher",
        server ? "is the port in use? pass another --master_port" : "check --master_addr/--master_port");
  }
  impl->port = server ? impl->store->getPort() : port;
  impl->at = addr + ":" + std::to_string(impl->port);
  return std::unique_ptr<NodeStore>(new NodeStore(std::move(impl)));
}

int NodeStore::port() const { return impl_->port; }
bool NodeStore::hosts() const { return impl_->node == 0; }

NodeStore::Wait NodeStore::join(const std::string& info, Clock::time_point deadline, const StopFn& stop,
                                std::vector<int>* missing, std::vector<std::string>* joined) {
  auto& s = *impl_->store;
  try {
    s.set(kPfx + "node/" + std::to_string(impl_->node), bytes(info));
    s.add(kPfx + "nodes", 1);
    for (;;) {
      if (s.add(kPfx + "nodes", 0) >= impl_->nnodes) break;
      if (stop && stop()) return Wait::stopped;
      if (Clock::now() >= deadline) {
        if (missing)
          for (int n = 0; n < impl_->nnodes; ++n)
            if (!s.check({kPfx + "node/" + std::to_string(n)})) missing->push_back(n);
        return Wait::timeout;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (joined)
      for (int n = 0; n < impl_->nnodes; ++n)
        joined->push_back(text(s.get(kPfx + "node/" + std::to_string(n))));
  } catch (const DistError&) {
    throw;
  } catch (const std::exception& e) {
    throw impl_->lost(e);
  }
  return Wait::ok;
}

void NodeStore::post(const std::string& notice) {
  if (impl_->posted) return;
  impl_->posted = true;
  try {
    impl_->store->set(kPfx + "notice/" + std::to_string(impl_->node), bytes(notice));
    impl_->store->add(kPfx + "notices", 1);
  } catch (const std::exception&) {
    // The store is gone: the other nodes find out from that.
  }
}

void NodeStore::post_abort(const std::string& message) { post("abort 0 " + message); }
void NodeStore::post_stop(int signal, const std::string& message) {
  post("stop " + std::to_string(signal) + " " + message);
}

std::optional<NodeNotice> NodeStore::poll() {
  auto& s = *impl_->store;
  try {
    const int64_t n = s.add(kPfx + "notices", 0);
    if (n == 0 || (n == 1 && impl_->posted)) return std::nullopt;
    for (int node = 0; node < impl_->nnodes; ++node) {
      if (node == impl_->node) continue;
      const std::string key = kPfx + "notice/" + std::to_string(node);
      if (!s.check({key})) continue;
      const std::string v = text(s.get(key));
      NodeNotice out;
      out.node = node;
      const auto sp1 = v.find(' '), sp2 = v.find(' ', sp1 + 1);
      out.kind = v.compare(0, sp1, "stop") == 0 ? NodeNotice::stop : NodeNotice::abort;
      out.signal = std::atoi(v.substr(sp1 + 1, sp2 - sp1 - 1).c_str());
      out.message = v.substr(sp2 + 1);
      return out;
    }
  } catch (const std::exception& e) {
    throw impl_->lost(e);
  }
  return std::nullopt;
}

void NodeStore::mark_done() {
  try {
    impl_->store->add(kPfx + "done", 1);
  } catch (const std::exception&) {
  }
}

bool NodeStore::wait_all_done(Clock::time_point deadline) {
  try {
    while (impl_->store->add(kPfx + "done", 0) < impl_->nnodes) {
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

}  // namespace et::host
