// launcher.cpp: fork/exec of the workers (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), rank-prefixed output, failure propagation and signal forwarding.
#include "launcher.h"

#include <poll.h>
#include <signal.h>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>

#include <boost/dll/runtime_symbol_info.hpp>
#include <chrono>
#include <cstring>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "ethost/dist/net.h"
#include "ethost/error.h"
#include "ethost/log.h"
#include "launch/node_store.h"

namespace et::host {
namespace {

volatile sig_atomic_t g_forward_signal = 0;
void on_signal(int sig) { g_forward_signal = sig; }

const char* const kLauncherFlags[] = {"--nproc_per_node",    "--nnodes",      "--node_rank",
                                      "--master_addr",       "--master_port", "--worker_timeout",
                                      "--rendezvous_timeout"};

std::vector<std::string> worker_args(int argc, const char* const* argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool drop = false;
    for (const char* f : kLauncherFlags) {
      std::string fs = f;
      if (a == fs) {
        drop = true;
        ++i;  // and its value
      } else if (a.rfind(fs + "=", 0) == 0) {
        drop = true;
      }
      if (drop) break;
    }
    if (!drop) out.push_back(a);
  }
  return out;
}

struct Worker {
  int rank = 0;
  pid_t pid = -1;
  int out_fd = -1, err_fd = -1;
  bool done = false;
  bool killed = false;  // SIGKILLed after the worker timeout
  int status = 0;
  std::thread reader;
};

std::mutex g_out_mu;

void pump(int fd, int rank, std::ostream& os) {
  std::string buf, line;
  char chunk[4096];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n <= 0) break;
    buf.append(chunk, size_t(n));
    size_t pos;
    while ((pos = buf.find('\n')) != std::string::npos) {
      line = buf.substr(0, pos);
      buf.erase(0, pos + 1);
      std::lock_guard<std::mutex> lock(g_out_mu);
      os << "[rank " << rank << "] " << line << "\n" << std::flush;
    }
  }
  if (!buf.empty()) {
    std::lock_guard<std::mutex> lock(g_out_mu);
    os << "[rank " << rank << "] " << buf << "\n" << std::flush;
  }
  ::close(fd);
}

std::string describe_status(int st) {
  if (WIFEXITED(st)) return "exit status " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st))
    return std::string("killed by signal ") + std::to_string(WTERMSIG(st)) + " (" + strsignal(WTERMSIG(st)) +
           ")";
  return "status " + std::to_string(st);
}

}  // namespace

namespace {

int exit_code_of_status(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

std::string host_name() {
  char b[256] = {};
  ::gethostname(b, sizeof b - 1);
  return b;
}

std::chrono::steady_clock::time_point after(double s) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

std::string seconds(double s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace

int launch_workers(const LaunchOptions& o, int argc, const char* const* argv) {
  auto log = log::get("launch");
  if (o.nproc_per_node < 1) throw UsageError("--nproc_per_node must be >= 1", "command line");
  if (o.nnodes < 1 || o.node_rank < 0 || o.node_rank >= o.nnodes)
    throw UsageError("--node_rank must be in [0, --nnodes)", "command line");
  if (o.nnodes > 1 && o.master_port == 0)
    throw UsageError("multi-node runs need --master_port (and --master_addr)", "command line");
  const int node = o.node_rank;
  const std::string me = "node " + std::to_string(node);
  const double rdzv_s = o.rendezvous_timeout > 0 ? o.rendezvous_timeout : 300.0;
  const auto rdzv_deadline = after(rdzv_s);

  // Signals first: a launcher waiting for the store or for other nodes must stop at once when asked to.
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  auto signalled = [] { return g_forward_signal != 0; };
  auto stopped_early = [&](const std::string& during) {
    const int sig = g_forward_signal;
    std::cerr << "ethost: error: launcher: " << me << " stopped by signal " << sig << " (" << strsignal(sig)
              << ") while " << during << "; no worker was started" << std::endl;
    return 128 + sig;
  };

  // The rendezvous store (hosted here on node 0), then every node.
  const std::string at = o.master_addr + ":" + std::to_string(o.master_port);
  auto store = NodeStore::open(o.master_addr, o.master_port, node, o.nnodes, rdzv_deadline, signalled,
                               seconds(rdzv_s) + " s");
  if (!store) return stopped_early("waiting for the rendezvous store at " + at);
  const int port = store->port();
  const std::string rdzv_at = o.master_addr + ":" + std::to_string(port);
  if (o.nnodes > 1) {
    const std::string route =
        dist::route_source_address(dist::resolve_ipv4(o.master_addr, "--master_addr"), port);
    const std::string info = "host " + host_name() + ", address " + (route.empty() ? "?" : route);
    log.info(me, " (", info, ") waiting for ", o.nnodes, " node(s) at ", rdzv_at, " (rendezvous timeout ",
             seconds(rdzv_s), " s)");
    std::vector<int> missing;
    std::vector<std::string> joined;
    switch (store->join(info, rdzv_deadline, signalled, &missing, &joined)) {
      case NodeStore::Wait::stopped:
        return stopped_early("waiting for the other nodes at " + rdzv_at);
      case NodeStore::Wait::timeout: {
        std::string m;
        for (int n : missing) m += (m.empty() ? "" : ", ") + std::to_string(n);
        throw DistError(
            me + ": rendezvous timed out after " + seconds(rdzv_s) + " s: node(s) " + m + " never joined (" +
                std::to_string(o.nnodes - static_cast<int>(missing.size())) + "/" + std::to_string(o.nnodes) +
                " at " + rdzv_at + ")",
            "launcher",
            "start ethost with --node_rank " + std::to_string(missing.empty() ? 0 : missing[0]) +
                " (and the same --nnodes/--master_addr/--master_port) on the missing host, or raise "
                "--rendezvous_timeout");
      }
      case NodeStore::Wait::ok:
        for (size_t n = 0; n < joined.size(); ++n) log.info("rendezvous: node ", n, ": ", joined[n]);
        break;
    }
  }

  const int world = o.nproc_per_node * o.nnodes;
  const std::string exe = boost::dll::program_location().string();
  auto args = worker_args(argc, argv);
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  bool threads_given = false;
  for (auto& a : args) threads_given = threads_given || a == "--threads" || a.rfind("--threads=", 0) == 0;
  int threads = std::max(1, static_cast<int>(cores) / o.nproc_per_node);
  log.info("launching ", o.nproc_per_node, " worker(s) on node ", node, "/", o.nnodes, ", world size ", world,
           ", rendezvous ", rdzv_at, threads_given ? "" : ", " + std::to_string(threads) + " thread(s) each");

  std::vector<Worker> workers(static_cast<size_t>(o.nproc_per_node));
  for (int lr = 0; lr < o.nproc_per_node; ++lr) {
    Worker& w = workers[size_t(lr)];
    w.rank = node * o.nproc_per_node + lr;
    int out_p[2], err_p[2];
    if (pipe(out_p) != 0 || pipe(err_p) != 0)
      throw InternalError(std::string("pipe failed: ") + std::strerror(errno), "launcher",
                          "out of file descriptors? (ulimit -n)");
    std::vector<std::string> env = {"RANK=" + std::to_string(w.rank),
                                    "LOCAL_RANK=" + std::to_string(lr),
                                    "WORLD_SIZE=" + std::to_string(world),
                                    "LOCAL_WORLD_SIZE=" + std::to_string(o.nproc_per_node),
                                    "GROUP_RANK=" + std::to_string(node),
                                    "MASTER_ADDR=" + o.master_addr,
                                    "MASTER_PORT=" + std::to_string(port),
                                    "ETHOST_LAUNCHED=1",
                                    "ETHOST_AGENT_STORE=1"};
    if (o.rendezvous_timeout > 0)
      env.push_back("ETHOST_RENDEZVOUS_TIMEOUT_S=" + seconds(o.rendezvous_timeout));
    std::vector<std::string> wargs = args;
    if (!threads_given) {
      wargs.push_back("--threads");
      wargs.push_back(std::to_string(threads));
    }
    pid_t pid = fork();
    if (pid < 0)
      throw InternalError(std::string("fork failed: ") + std::strerror(errno), "launcher",
                          "out of processes or memory? (ulimit -u)");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
      std::signal(SIGINT, SIG_DFL);
      std::signal(SIGTERM, SIG_DFL);
      dup2(out_p[1], 1);
      dup2(err_p[1], 2);
      close(out_p[0]);
      close(err_p[0]);
      close(out_p[1]);
      close(err_p[1]);
      for (auto& e : env) putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> av{const_cast<char*>(exe.c_str())};
      for (auto& a : wargs) av.push_back(const_cast<char*>(a.c_str()));
      av.push_back(nullptr);
      execv(exe.c_str(), av.data());
      _exit(127);
    }
    close(out_p[1]);
    close(err_p[1]);
    w.pid = pid;
    w.out_fd = out_p[0];
    w.err_fd = err_p[0];
  }
  std::vector<std::thread> pumps;
  for (auto& w : workers) {
    pumps.emplace_back(pump, w.out_fd, w.rank, std::ref(std::cout));
    pumps.emplace_back(pump, w.err_fd, w.rank, std::ref(std::cerr));
  }

  auto alive = [&] {
    int n = 0;
    for (auto& w : workers) n += !w.done;
    return n;
  };
  auto reap = [&](bool block) {
    int st = 0;
    pid_t pid = waitpid(-1, &st, block ? 0 : WNOHANG);
    if (pid <= 0) return static_cast<Worker*>(nullptr);
    for (auto& w : workers)
      if (w.pid == pid) {
        w.done = true;
        w.status = st;
        return &w;
      }
    return static_cast<Worker*>(nullptr);
  };

  // Why this node stops before its workers finish by themselves (the first cause wins).
  enum class Cause { none, local_failure, signal, remote_abort, remote_stop, lost_store } cause = Cause::none;
  Worker* failed = nullptr;
  int stop_signal = 0;
  std::string remote;  // the other node's notice, or the lost-store message
  std::optional<std::chrono::steady_clock::time_point> deadline;
  auto stop_workers = [&](int sig) {
    for (auto& w : workers)
      if (!w.done) kill(w.pid, sig);
    deadline = after(o.worker_timeout);
  };
  auto last_poll = std::chrono::steady_clock::now();
  bool killed = false;
  while (alive() > 0) {
    if (g_forward_signal && cause == Cause::none) {
      cause = Cause::signal;
      stop_signal = g_forward_signal;
      log.warn(me, ": received signal ", stop_signal, " (", strsignal(stop_signal),
               "): stopping the workers (", seconds(o.worker_timeout), " s before SIGKILL)");
      if (o.nnodes > 1)
        store->post_stop(stop_signal, me + "'s launcher received signal " + std::to_string(stop_signal) +
                                          " (" + strsignal(stop_signal) + ")");
      stop_workers(stop_signal);
    }
    if (Worker* w = reap(false)) {
      bool ok = WIFEXITED(w->status) && WEXITSTATUS(w->status) == 0;
      if (!ok && cause == Cause::none) {
        cause = Cause::local_failure;
        failed = w;
        const std::string what = "rank " + std::to_string(w->rank) + " (" + me + ", host " + host_name() +
                                 ") failed: " + describe_status(w->status);
        log.error(what, "; stopping the other workers");
        if (o.nnodes > 1) store->post_abort(what);
        stop_workers(SIGTERM);
      }
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (o.nnodes > 1 && cause == Cause::none && now - last_poll >= std::chrono::milliseconds(100)) {
      last_poll = now;
      try {
        if (auto n = store->poll()) {
          remote = n->message;
          if (n->kind == NodeNotice::stop) {
            cause = Cause::remote_stop;
            stop_signal = n->signal;
            log.warn(me, ": node ", n->node, " is stopping (", n->message,
                     "): stopping the workers here too");
            stop_workers(stop_signal);
          } else {
            cause = Cause::remote_abort;
            log.error(me, ": node ", n->node, " reported: ", n->message, "; stopping the workers here");
            stop_workers(SIGTERM);
          }
        }
      } catch (const DistError& e) {
        cause = Cause::lost_store;
        remote = e.bare_what();
        log.error(remote, "; stopping the workers here");
        stop_workers(SIGTERM);
      }
    }
    if (deadline && !killed && now >= *deadline) {
      killed = true;
      for (auto& w : workers)
        if (!w.done) {
          log.warn("rank ", w.rank, " did not stop within ", seconds(o.worker_timeout), " s: killing it");
          kill(w.pid, SIGKILL);
          w.killed = true;
        }
    }
    poll(nullptr, 0, 20);
  }
  for (auto& t : pumps) t.join();

  // Node 0 keeps the store up until every node is done (bounded), so that they can read its notices.
  store->mark_done();
  if (o.nnodes > 1 && store->hosts()) {
    if (!store->wait_all_done(after(o.worker_timeout)))
      log.warn("not every node reported its end within ", seconds(o.worker_timeout), " s");
    if (cause == Cause::local_failure && remote.empty()) {
      try {
        if (auto n = store->poll()) remote = n->message;
      } catch (const DistError&) {
      }
    }
  }

  const std::string where = "ethost: error: launcher: ";
  switch (cause) {
    case Cause::local_failure: {
      int code = exit_code_of_status(failed->status);
      std::cerr << where << "rank " << failed->rank << " (" << me << ") failed ("
                << describe_status(failed->status) << ")"
                << (remote.empty() ? "" : "; another node reported: " + remote) << "; all workers stopped"
                << std::endl;
      return code == 0 ? 1 : code;
    }
    case Cause::remote_abort:
      std::cerr << where << me << " stopped its workers because another node failed: " << remote << std::endl;
      return kExitDistributed;
    case Cause::lost_store:
      std::cerr << where << remote << "; " << me << " stopped its workers" << std::endl;
      return kExitDistributed;
    case Cause::signal:
    case Cause::remote_stop: {
      bool all_ok = true;
      for (auto& w : workers) all_ok = all_ok && WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0;
      if (all_ok) return kExitOk;  // they had finished anyway
      std::string ranks;
      for (auto& w : workers)
        ranks += "; rank " + std::to_string(w.rank) + ": " + describe_status(w.status) +
                 (w.killed ? " after the " + seconds(o.worker_timeout) + " s worker timeout" : "");
      std::cerr << where << me << " stopped by signal " << stop_signal << " (" << strsignal(stop_signal)
                << ", " << (cause == Cause::signal ? "received here" : "from another node: " + remote) << ")"
                << ranks << std::endl;
      return 128 + stop_signal;
    }
    case Cause::none:
      break;
  }
  int worst = 0;
  for (auto& w : workers) worst = std::max(worst, exit_code_of_status(w.status));
  return worst;
}

}  // namespace et::host
