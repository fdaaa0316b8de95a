// node_store.h: the launchers' shared c10d TCPStore, hosted by node 0's launcher (its workers use it too):
// the node rendezvous, failure and stop notices between nodes, and the end-of-job handshake.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace et::host {

// What another node's launcher announced.
struct NodeNotice {
  enum Kind { abort, stop } kind = abort;
  int node = -1;
  int signal = 0;       // stop: the signal the launcher received
  std::string message;  // abort: "rank 1 (node 1, host h) failed: killed by signal 9 (Killed)"
};

class NodeStore {
 public:
  using Clock = std::chrono::steady_clock;
  using StopFn = std::function<bool()>;

  // Node 0 hosts the store on `port` (0: a free port) and connects to it; the others wait for it (probing,
  // until `deadline` or `stop()`). Returns nullptr when stopped; throws et::DistError on timeout.
  static std::unique_ptr<NodeStore> open(const std::string& addr, int port, int node_rank, int nnodes,
                                         Clock::time_point deadline, const StopFn& stop,
                                         const std::string& timeout_text = {});
  ~NodeStore();

  int port() const;
  bool hosts() const;

  enum class Wait { ok, timeout, stopped };
  // Registers this node (info: "host h, address a") and waits for every node. On timeout, `missing` gets the
  // nodes that never joined. On ok, `joined` gets each node's info, in node order.
  Wait join(const std::string& info, Clock::time_point deadline, const StopFn& stop,
            std::vector<int>* missing, std::vector<std::string>* joined);

  // Announces this node's failure or stop to the others (at most once each; later calls are ignored).
  void post_abort(const std::string& message);
  void post_stop(int signal, const std::string& message);
  // The first notice another node posted, if any. Throws et::DistError when the store is unreachable.
  std::optional<NodeNotice> poll();

  // This node's workers are gone. Node 0 then waits (bounded) until every node said so, so that the others
  // can still read its notices before its store goes away.
  void mark_done();
  bool wait_all_done(Clock::time_point deadline);

  struct Impl;

 private:
  explicit NodeStore(std::unique_ptr<Impl> impl);
  void post(const std::string& notice);  // "abort 0 <message>" or "stop <signal> <message>", once
  std::unique_ptr<Impl> impl_;
};

}  // namespace et::host
