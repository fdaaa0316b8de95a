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
#include <functional>
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

namespace {

void check_launch_options(const LaunchOptions& o) {
  if (o.nproc_per_node < 1) throw UsageError("--nproc_per_node must be >= 1", "command line");
  if (o.nnodes < 1 || o.node_rank < 0 || o.node_rank >= o.nnodes)
    throw UsageError("--node_rank must be in [0, --nnodes)", "command line");
  if (o.nnodes > 1 && o.master_port == 0)
    throw UsageError("multi-node runs need --master_port (and --master_addr)", "command line");
}

// The launcher's stop signal arrived before any worker started: the message and the exit code.
int stopped_before_start(const std::string& me, const std::string& during) {
  const int sig = g_forward_signal;
  std::cerr << "ethost: error: launcher: " << me << " stopped by signal " << sig << " (" << strsignal(sig)
            << ") while " << during << "; no worker was started" << std::endl;
  return 128 + sig;
}

// Every node joins the store at rdzv_at; false when a stop signal came first. Throws DistError on timeout.
bool join_nodes(const LaunchOptions& o, NodeStore& store, const std::string& me, const std::string& rdzv_at,
                int port, double rdzv_s, std::chrono::steady_clock::time_point rdzv_deadline,
                const std::function<bool()>& signalled) {
  auto log = log::get("launch");
  const std::string route =
      dist::route_source_address(dist::resolve_ipv4(o.master_addr, "--master_addr"), port);
  const std::string info = "host " + host_name() + ", address " + (route.empty() ? "?" : route);
  log.info(me, " (", info, ") waiting for ", o.nnodes, " node(s) at ", rdzv_at, " (rendezvous timeout ",
           seconds(rdzv_s), " s)");
  std::vector<int> missing;
  std::vector<std::string> joined;
  switch (store.join(info, rdzv_deadline, signalled, &missing, &joined)) {
    case NodeStore::Wait::stopped:
      return false;
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
  return true;
}

// What every worker of this node gets: the torchrun environment (less RANK/LOCAL_RANK) and its arguments.
struct WorkerSpec {
  std::string exe;
  // The host's arguments less the launcher flags, plus --threads when not given.
  std::vector<std::string> args;
  int world = 0;
  int port = 0;
};

WorkerSpec worker_spec(const LaunchOptions& o, int argc, const char* const* argv, int port,
                       const std::string& rdzv_at) {
  WorkerSpec spec;
  spec.world = o.nproc_per_node * o.nnodes;
  spec.port = port;
  spec.exe = boost::dll::program_location().string();
  spec.args = worker_args(argc, argv);
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  bool threads_given = false;
  for (auto& a : spec.args)
    threads_given = threads_given || a == "--threads" || a.rfind("--threads=", 0) == 0;
  int threads = std::max(1, static_cast<int>(cores) / o.nproc_per_node);
  log::get("launch").info("launching ", o.nproc_per_node, " worker(s) on node ", o.node_rank, "/", o.nnodes,
                          ", world size ", spec.world, ", rendezvous ", rdzv_at,
                          threads_given ? "" : ", " + std::to_string(threads) + " thread(s) each");
  if (!threads_given) {
    spec.args.push_back("--threads");
    spec.args.push_back(std::to_string(threads));
  }
  return spec;
}

// Forks and execs local rank lr with its output on pipes; fills w's pid and pipe ends.
void start_worker(const LaunchOptions& o, const WorkerSpec& spec, int lr, Worker& w) {
  const int node = o.node_rank;
  w.rank = node * o.nproc_per_node + lr;
  int out_p[2], err_p[2];
  if (pipe(out_p) != 0 || pipe(err_p) != 0)
    throw InternalError(std::string("pipe failed: ") + std::strerror(errno), "launcher",
                        "out of file descriptors? (ulimit -n)");
  std::vector<std::string> env = {"RANK=" + std::to_string(w.rank),
                                  "LOCAL_RANK=" + std::to_string(lr),
                                  "WORLD_SIZE=" + std::to_string(spec.world),
                                  "LOCAL_WORLD_SIZE=" + std::to_string(o.nproc_per_node),
                                  "GROUP_RANK=" + std::to_string(node),
                                  "MASTER_ADDR=" + o.master_addr,
                                  "MASTER_PORT=" + std::to_string(spec.port),
                                  "ETHOST_LAUNCHED=1",
                                  "ETHOST_AGENT_STORE=1"};
  if (o.rendezvous_timeout > 0) env.push_back("ETHOST_RENDEZVOUS_TIMEOUT_S=" + seconds(o.rendezvous_timeout));
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
    std::vector<char*> av{const_cast<char*>(spec.exe.c_str())};
    for (auto& a : spec.args) av.push_back(const_cast<char*>(a.c_str()));
    av.push_back(nullptr);
    execv(spec.exe.c_str(), av.data());
    _exit(127);
  }
  close(out_p[1]);
  close(err_p[1]);
  w.pid = pid;
  w.out_fd = out_p[0];
  w.err_fd = err_p[0];
}

// Why this node stops before its workers finish by themselves (the first cause wins).
enum class Cause { none, local_failure, signal, remote_abort, remote_stop, lost_store };

// Watches this node's workers until all have ended: a failed worker, a stop signal, or another node's notice
// stops the rest (SIGKILL after the worker timeout); then reports why, with the launcher's exit code.
class Supervisor {
 public:
  Supervisor(const LaunchOptions& o, const std::string& me, NodeStore& store, std::vector<Worker>& workers)
      : o_(o), me_(me), store_(store), workers_(workers), log_(log::get("launch")) {}

  void run() {
    while (alive() > 0) {
      if (g_forward_signal && cause_ == Cause::none) on_stop_signal();
      if (Worker* w = reap()) {
        on_worker_exit(*w);
        continue;
      }
      const auto now = std::chrono::steady_clock::now();
      if (o_.nnodes > 1 && cause_ == Cause::none && now - last_poll_ >= std::chrono::milliseconds(100)) {
        last_poll_ = now;
        poll_other_nodes();
      }
      if (deadline_ && !killed_ && now >= *deadline_) kill_overdue();
      poll(nullptr, 0, 20);
    }
  }

  // Node 0 keeps the store up until every node is done (bounded), so that they can read its notices.
  void finish_rendezvous() {
    store_.mark_done();
    if (o_.nnodes > 1 && store_.hosts()) {
      if (!store_.wait_all_done(after(o_.worker_timeout)))
        log_.warn("not every node reported its end within ", seconds(o_.worker_timeout), " s");
      if (cause_ == Cause::local_failure && remote_.empty()) {
        try {
          if (auto n = store_.poll()) remote_ = n->message;
        } catch (const DistError&) {
        }
      }
    }
  }

  int exit_code() const;

 private:
  int alive() const {
    int n = 0;
    for (auto& w : workers_) n += !w.done;
    return n;
  }
  Worker* reap() {
    int st = 0;
    pid_t pid = waitpid(-1, &st, WNOHANG);
    if (pid <= 0) return nullptr;
    for (auto& w : workers_)
      if (w.pid == pid) {
        w.done = true;
        w.status = st;
        return &w;
      }
    return nullptr;
  }
  void stop_workers(int sig) {
    for (auto& w : workers_)
      if (!w.done) kill(w.pid, sig);
    deadline_ = after(o_.worker_timeout);
  }
  void on_stop_signal() {
    cause_ = Cause::signal;
    stop_signal_ = g_forward_signal;
    log_.warn(me_, ": received signal ", stop_signal_, " (", strsignal(stop_signal_),
              "): stopping the workers (", seconds(o_.worker_timeout), " s before SIGKILL)");
    if (o_.nnodes > 1)
      store_.post_stop(stop_signal_, me_ + "'s launcher received signal " + std::to_string(stop_signal_) +
                                         " (" + strsignal(stop_signal_) + ")");
    stop_workers(stop_signal_);
  }
  void on_worker_exit(Worker& w) {
    bool ok = WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0;
    if (ok || cause_ != Cause::none) return;
    cause_ = Cause::local_failure;
    failed_ = &w;
    const std::string what = "rank " + std::to_string(w.rank) + " (" + me_ + ", host " + host_name() +
                             ") failed: " + describe_status(w.status);
    log_.error(what, "; stopping the other workers");
    if (o_.nnodes > 1) store_.post_abort(what);
    stop_workers(SIGTERM);
  }
  void poll_other_nodes() {
    try {
      if (auto n = store_.poll()) {
        remote_ = n->message;
        if (n->kind == NodeNotice::stop) {
          cause_ = Cause::remote_stop;
          stop_signal_ = n->signal;
          log_.warn(me_, ": node ", n->node, " is stopping (", n->message,
                    "): stopping the workers here too");
          stop_workers(stop_signal_);
        } else {
          cause_ = Cause::remote_abort;
          log_.error(me_, ": node ", n->node, " reported: ", n->message, "; stopping the workers here");
          stop_workers(SIGTERM);
        }
      }
    } catch (const DistError& e) {
      cause_ = Cause::lost_store;
      remote_ = e.bare_what();
      log_.error(remote_, "; stopping the workers here");
      stop_workers(SIGTERM);
    }
  }
  void kill_overdue() {
    killed_ = true;
    for (auto& w : workers_)
      if (!w.done) {
        log_.warn("rank ", w.rank, " did not stop within ", seconds(o_.worker_timeout), " s: killing it");
        kill(w.pid, SIGKILL);
        w.killed = true;
      }
  }
  int stopped_exit_code() const;

  const LaunchOptions& o_;
  const std::string& me_;
  NodeStore& store_;
  std::vector<Worker>& workers_;
  log::Logger log_;
  Cause cause_ = Cause::none;
  Worker* failed_ = nullptr;
  int stop_signal_ = 0;
  std::string remote_;  // the other node's notice, or the lost-store message
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::chrono::steady_clock::time_point last_poll_ = std::chrono::steady_clock::now();
  bool killed_ = false;
};

const char* const kLauncherError = "ethost: error: launcher: ";

// A stop signal (here or from another node): 0 if the workers had finished anyway, else 128 + the signal.
int Supervisor::stopped_exit_code() const {
  bool all_ok = true;
  for (auto& w : workers_) all_ok = all_ok && WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0;
  if (all_ok) return kExitOk;  // they had finished anyway
  std::string ranks;
  for (auto& w : workers_)
    ranks += "; rank " + std::to_string(w.rank) + ": " + describe_status(w.status) +
             (w.killed ? " after the " + seconds(o_.worker_timeout) + " s worker timeout" : "");
  std::cerr << kLauncherError << me_ << " stopped by signal " << stop_signal_ << " ("
            << strsignal(stop_signal_) << ", "
            << (cause_ == Cause::signal ? "received here" : "from another node: " + remote_) << ")" << ranks
            << std::endl;
  return 128 + stop_signal_;
}

int Supervisor::exit_code() const {
  switch (cause_) {
    case Cause::local_failure: {
      int code = exit_code_of_status(failed_->status);
      std::cerr << kLauncherError << "rank " << failed_->rank << " (" << me_ << ") failed ("
                << describe_status(failed_->status) << ")"
                << (remote_.empty() ? "" : "; another node reported: " + remote_) << "; all workers stopped"
                << std::endl;
      return code == 0 ? 1 : code;
    }
    case Cause::remote_abort:
      std::cerr << kLauncherError << me_ << " stopped its workers because another node failed: " << remote_
                << std::endl;
      return kExitDistributed;
    case Cause::lost_store:
      std::cerr << kLauncherError << remote_ << "; " << me_ << " stopped its workers" << std::endl;
      return kExitDistributed;
    case Cause::signal:
    case Cause::remote_stop:
      return stopped_exit_code();
    case Cause::none:
      break;
  }
  int worst = 0;
  for (auto& w : workers_) worst = std::max(worst, exit_code_of_status(w.status));
  return worst;
}

}  // namespace

int launch_workers(const LaunchOptions& o, int argc, const char* const* argv) {
  check_launch_options(o);
  const std::string me = "node " + std::to_string(o.node_rank);
  const double rdzv_s = o.rendezvous_timeout > 0 ? o.rendezvous_timeout : 300.0;
  const auto rdzv_deadline = after(rdzv_s);

  // Signals first: a launcher waiting for the store or for other nodes must stop at once when asked to.
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::function<bool()> signalled = [] { return g_forward_signal != 0; };

  // The rendezvous store (hosted here on node 0), then every node.
  const std::string at = o.master_addr + ":" + std::to_string(o.master_port);
  auto store = NodeStore::open(o.master_addr, o.master_port, o.node_rank, o.nnodes, rdzv_deadline, signalled,
                               seconds(rdzv_s) + " s");
  if (!store) return stopped_before_start(me, "waiting for the rendezvous store at " + at);
  const int port = store->port();
  const std::string rdzv_at = o.master_addr + ":" + std::to_string(port);
  if (o.nnodes > 1 && !join_nodes(o, *store, me, rdzv_at, port, rdzv_s, rdzv_deadline, signalled))
    return stopped_before_start(me, "waiting for the other nodes at " + rdzv_at);

  const WorkerSpec spec = worker_spec(o, argc, argv, port, rdzv_at);
  std::vector<Worker> workers(static_cast<size_t>(o.nproc_per_node));
  for (int lr = 0; lr < o.nproc_per_node; ++lr) start_worker(o, spec, lr, workers[size_t(lr)]);
  std::vector<std::thread> pumps;
  for (auto& w : workers) {
    pumps.emplace_back(pump, w.out_fd, w.rank, std::ref(std::cout));
    pumps.emplace_back(pump, w.err_fd, w.rank, std::ref(std::cerr));
  }

  Supervisor supervisor(o, me, *store, workers);
  supervisor.run();
  for (auto& t : pumps) t.join();
  supervisor.finish_rendezvous();
  return supervisor.exit_code();
}

}  // namespace et::host
