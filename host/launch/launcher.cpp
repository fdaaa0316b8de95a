// launcher.cpp: fork/exec of the workers (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), rank-prefixed output, failure propagation and signal forwarding.
#include "launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>

#include <csignal>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/dll/runtime_symbol_info.hpp>
#include <chrono>
#include <cstring>
#include <iostream>
#include <mutex>
#include <thread>

#include "ethost/error.h"
#include "ethost/log.h"

namespace et::host {
namespace {

volatile sig_atomic_t g_forward_signal = 0;
void on_signal(int sig) { g_forward_signal = sig; }

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw Error("cannot find a free TCP port for the rendezvous", "launcher", "pass --master_port");
  }
  int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

const char* const kLauncherFlags[] = {"--nproc_per_node", "--nnodes", "--node_rank", "--master_addr", "--master_port",
                                      "--worker_timeout"};

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
  if (WIFSIGNALED(st)) return std::string("killed by signal ") + std::to_string(WTERMSIG(st)) + " (" + strsignal(WTERMSIG(st)) + ")";
  return "status " + std::to_string(st);
}

}  // namespace

int launch_workers(const LaunchOptions& o, int argc, const char* const* argv) {
  auto log = log::get("launch");
  if (o.nproc_per_node < 1) throw UsageError("--nproc_per_node must be >= 1", "command line");
  if (o.nnodes < 1 || o.node_rank < 0 || o.node_rank >= o.nnodes)
    throw UsageError("--node_rank must be in [0, --nnodes)", "command line");
  int port = o.master_port;
  if (port == 0) {
    if (o.nnodes > 1) throw UsageError("multi-node runs need --master_port (and --master_addr)", "command line");
    port = free_port();
  }
  const int world = o.nproc_per_node * o.nnodes;
  const std::string exe = boost::dll::program_location().string();
  auto args = worker_args(argc, argv);
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  bool threads_given = false;
  for (auto& a : args) threads_given = threads_given || a == "--threads" || a.rfind("--threads=", 0) == 0;
  int threads = std::max(1, static_cast<int>(cores) / o.nproc_per_node);
  log.info("launching ", o.nproc_per_node, " worker(s) on node ", o.node_rank, "/", o.nnodes, ", world size ", world,
           ", rendezvous ", o.master_addr, ":", port, threads_given ? "" : ", " + std::to_string(threads) + " thread(s) each");

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::vector<Worker> workers(static_cast<size_t>(o.nproc_per_node));
  for (int lr = 0; lr < o.nproc_per_node; ++lr) {
    Worker& w = workers[size_t(lr)];
    w.rank = o.node_rank * o.nproc_per_node + lr;
    int out_p[2], err_p[2];
    if (pipe(out_p) != 0 || pipe(err_p) != 0) throw Error("pipe failed", "launcher");
    std::vector<std::string> env = {"RANK=" + std::to_string(w.rank), "LOCAL_RANK=" + std::to_string(lr),
                                    "WORLD_SIZE=" + std::to_string(world),
                                    "LOCAL_WORLD_SIZE=" + std::to_string(o.nproc_per_node),
                                    "MASTER_ADDR=" + o.master_addr, "MASTER_PORT=" + std::to_string(port),
                                    "ETHOST_LAUNCHED=1"};
    std::vector<std::string> wargs = args;
    if (!threads_given) {
      wargs.push_back("--threads");
      wargs.push_back(std::to_string(threads));
    }
    pid_t pid = fork();
    if (pid < 0) throw Error("fork failed", "launcher");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the launcher
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
  Worker* failed = nullptr;
  int forwarded = 0;
  while (alive() > 0 && !failed) {
    if (g_forward_signal && !forwarded) {
      forwarded = g_forward_signal;
      for (auto& w : workers)
        if (!w.done) kill(w.pid, forwarded);
    }
    Worker* w = reap(false);
    if (!w) {
      poll(nullptr, 0, 20);
      continue;
    }
    bool ok = WIFEXITED(w->status) && WEXITSTATUS(w->status) == 0;
    if (!ok && !forwarded) failed = w;
  }
  if (failed) {
    log.error("rank ", failed->rank, " (pid ", failed->pid, ") failed: ", describe_status(failed->status),
              "; stopping the other workers");
    for (auto& w : workers)
      if (!w.done) kill(w.pid, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.worker_timeout);
    while (alive() > 0 && std::chrono::steady_clock::now() < deadline) {
      if (!reap(false)) poll(nullptr, 0, 20);
    }
    for (auto& w : workers)
      if (!w.done) {
        log.warn("rank ", w.rank, " did not stop within ", o.worker_timeout, " s: killing it");
        kill(w.pid, SIGKILL);
      }
    while (alive() > 0) reap(true);
  } else {
    while (alive() > 0) reap(true);
  }
  for (auto& t : pumps) t.join();
  if (failed) {
    int code = WIFEXITED(failed->status) ? WEXITSTATUS(failed->status) : 128 + WTERMSIG(failed->status);
    std::cerr << "ethost: error: launcher: rank " << failed->rank << " failed (" << describe_status(failed->status)
              << "); all workers stopped" << std::endl;
    return code == 0 ? 1 : code;
  }
  int worst = 0;
  for (auto& w : workers) {
    int c = WIFEXITED(w.status) ? WEXITSTATUS(w.status) : 128 + WTERMSIG(w.status);
    worst = std::max(worst, c);
  }
  return worst;
}

}  // namespace et::host
