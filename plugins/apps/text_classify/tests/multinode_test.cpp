// multinode_test.cpp: two hosts made of two network namespaces joined by a veth pair (10.99.0.1, 10.99.0.2;
// the host name resolves to loopback) — 2 nodes x 1 process equal 1 node x 2, ZeRO-2 across the hosts resumes
// on one, a killed or frozen worker on one node stops both within the timeouts, and a missing node ends the
// rendezvous. It creates the namespaces itself; where it cannot (not root), it skips with a message, and as
// root that is a failure unless ETHOST_NETNS_OPTIONAL=1 (CI runs as root, so a skip there would hide a broken
// test).
#include <torch/torch.h>

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "dist_support.h"
#include "ethost/dist/net.h"
#include "process.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using namespace et::test::dist;

namespace {

using Clock = std::chrono::steady_clock;

// Two network namespaces "hosts" A (10.99.0.1) and B (10.99.0.2), named after this process so that parallel
// test runs do not collide; removed at destruction.
class TwoHosts {
 public:
  TwoHosts() {
    const std::string id = std::to_string(::getpid() % 100000);
    ns_ = {"ethost-" + id + "-a", "ethost-" + id + "-b"};
    veth_ = {"etv" + id + "a", "etv" + id + "b"};
    const std::vector<std::vector<std::string>> steps = {
        {"ip", "netns", "add", ns_[0]},
        {"ip", "netns", "add", ns_[1]},
        {"ip", "link", "add", veth_[0], "type", "veth", "peer", "name", veth_[1]},
        {"ip", "link", "set", veth_[0], "netns", ns_[0]},
        {"ip", "link", "set", veth_[1], "netns", ns_[1]},
        {"ip", "-n", ns_[0], "addr", "add", "10.99.0.1/24", "dev", veth_[0]},
        {"ip", "-n", ns_[1], "addr", "add", "10.99.0.2/24", "dev", veth_[1]},
        {"ip", "-n", ns_[0], "link", "set", veth_[0], "up"},
        {"ip", "-n", ns_[1], "link", "set", veth_[1], "up"},
        {"ip", "-n", ns_[0], "link", "set", "lo", "up"},
        {"ip", "-n", ns_[1], "link", "set", "lo", "up"}};
    for (auto& s : steps) {
      auto r = et::test::run_process(s, {}, {}, 20);
      if (r.exit_code != 0) {
        why_ = "'";
        for (auto& a : s) why_ += a + " ";
        why_ += "' failed: " + r.err;
        return;
      }
      if (s[2] == "add" && s[1] == "netns") created_.push_back(s[3]);
    }
    ok_ = true;
  }
  ~TwoHosts() {
    for (auto& n : created_) et::test::run_process({"ip", "netns", "del", n}, {}, {}, 20);
  }
  bool ok() const { return ok_; }
  const std::string& why() const { return why_; }
  const std::string& ns(int i) const { return ns_[size_t(i)]; }
  const std::string& veth(int i) const { return veth_[size_t(i)]; }

 private:
  std::vector<std::string> ns_, veth_, created_;
  bool ok_ = false;
  std::string why_;
};

// True when the test may go on; otherwise it has skipped (with a message) or failed (as root).
bool have_hosts(const TwoHosts& h) {
  if (h.ok()) return true;
  if (::geteuid() == 0 && !std::getenv("ETHOST_NETNS_OPTIONAL")) {
    FAIL("running as root but cannot create network namespaces: "
         << h.why() << " (set ETHOST_NETNS_OPTIONAL=1 to allow a skip)");
  } else {
    MESSAGE("skipped: network namespaces cannot be created here (" << h.why() << ")");
  }
  return false;
}

constexpr const char* kMaster = "10.99.0.1";
constexpr const char* kPort = "29471";

// Starts `ethost --nnodes 2 --node_rank <node>` inside host `node`'s namespace (background; output to `log`).
int start_node(const TwoHosts& h, int node, const et::test::TempDir& dir, const std::string& name,
               const std::vector<std::string>& sets, const std::vector<std::string>& launcher_extra = {},
               std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv{"ip",
                                "netns",
                                "exec",
                                h.ns(node),
                                ETHOST_EXE,
                                "--nnodes",
                                "2",
                                "--node_rank",
                                std::to_string(node),
                                "--nproc_per_node",
                                "1",
                                "--master_addr",
                                kMaster,
                                "--master_port",
                                kPort,
                                "--worker_timeout",
                                "5"};
  argv.insert(argv.end(), launcher_extra.begin(), launcher_extra.end());
  for (const char* a : {"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "text_classify",
                        "--threads", "1", "--config"})
    argv.push_back(a);
  argv.push_back(dir / (name + ".toml"));
  for (auto& s : sets) {
    argv.push_back("--set");
    argv.push_back(s);
  }
  env.emplace("ETHOST_PLUGIN_PATH", "");
  env.emplace("GLOO_SOCKET_IFNAME", "");  // the default choice, as on a fresh machine
  return et::test::spawn_background(argv, dir / (name + ".node" + std::to_string(node) + ".log"), env);
}

struct TwoNodeRun {
  int status[2] = {-1, -1};
  std::string log[2];
  RunOut out;  // rank 0's metrics
};

TwoNodeRun run_two_nodes(const TwoHosts& h, const et::test::TempDir& dir, const std::string& name,
                         const std::vector<std::string>& sets,
                         const std::map<std::string, std::string> env[2] = nullptr) {
  write_file(dir / (name + ".toml"), dist_config(dir / name));
  int pid[2];
  for (int n = 0; n < 2; ++n)
    pid[n] = start_node(h, n, dir, name, sets, {}, env ? env[n] : std::map<std::string, std::string>{});
  TwoNodeRun r;
  for (int n = 0; n < 2; ++n) {
    r.status[n] = et::test::wait_child_for(pid[n], 240);
    if (r.status[n] == -1) kill(pid[n], SIGKILL), et::test::wait_child(pid[n]);
    r.log[n] = et::test::read_file(dir / (name + ".node" + std::to_string(n) + ".log"));
  }
  read_metrics(r.out, dir / name);
  return r;
}

bool host_name_is_loopback() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  try {
    return et::dist::is_loopback_ipv4(et::dist::resolve_ipv4(name));
  } catch (...) {
    return false;
  }
}

// Bounded wait for a file to appear (training under way).
bool wait_for_file(const std::string& path, double seconds) {
  auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (!fs::exists(path) && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return fs::exists(path);
}

bool wait_for_text(const std::string& file, const std::string& text, double seconds) {
  auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    if (fs::exists(file) && contains(et::test::read_file(file), text)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// A TCP port nothing listens on now (bound to port 0, then closed).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Two nodes training without end (checkpoints every 2 steps), once both are under way; FAILs otherwise.
struct LongJob {
  int pid[2] = {-1, -1};
  std::vector<int> workers[2];  // each launcher's worker processes
};

LongJob start_long_job(const TwoHosts& h, const et::test::TempDir& dir, const std::string& name) {
  write_file(dir / (name + ".toml"), dist_config(dir / name));
  const std::vector<std::string> sets{"train.max_steps=100000", "train.save_checkpoint_steps=2",
                                      "train.micro_batch_size=4"};
  LongJob j;
  for (int n = 0; n < 2; ++n) j.pid[n] = start_node(h, n, dir, name, sets);
  const bool running = wait_for_file(dir / (name + "/checkpoint-2/train_state/trainer_state.json"), 120);
  for (int n = 0; n < 2; ++n) j.workers[n] = children_of(j.pid[n]);
  if (!running || j.workers[1].size() != 1) {
    for (int p : j.pid) kill(p, SIGKILL), et::test::wait_child(p);
    FAIL("training did not get under way on both nodes");
  }
  return j;
}

// Waits (bounded) for both launchers, kills what is left, and reads their logs.
struct JobEnd {
  int status[2] = {-1, -1};  // -1: still running at the bound (then killed)
  double took = 0;           // seconds from t0 until both had ended
  std::string log[2];
};

JobEnd finish(const LongJob& j, const et::test::TempDir& dir, const std::string& name, Clock::time_point t0,
              double bound_s) {
  JobEnd e;
  for (int n = 0; n < 2; ++n) e.status[n] = et::test::wait_child_for(j.pid[n], bound_s);
  e.took = since(t0);
  for (int n = 0; n < 2; ++n) {
    if (e.status[n] == -1) kill(j.pid[n], SIGKILL), et::test::wait_child(j.pid[n]);
    e.log[n] = et::test::read_file(dir / (name + ".node" + std::to_string(n) + ".log"));
  }
  return e;
}

}  // namespace

TEST_SUITE("integration.multinode") {
  TEST_CASE("2 nodes x 1 process equal 1 node x 2 processes, with no interface variable set") {
    TwoHosts h;
    if (!have_hosts(h)) return;
    INFO("host name resolves to loopback: " << host_name_is_loopback());
    et::test::TempDir dir("multinode_eq");
    auto one = train(dir, "one", 2, {"train.micro_batch_size=4"});
    INFO(tail(one.r.err));
    REQUIRE(one.r.exit_code == 0);
    auto two = run_two_nodes(h, dir, "two", {"train.micro_batch_size=4"});
    INFO(tail(two.log[0]));
    INFO(tail(two.log[1]));
    REQUIRE(two.status[0] == 0);
    REQUIRE(two.status[1] == 0);
    // Each rank advertised its own veth address (not the loopback its host name resolves to); rank 0 lists
    // both.
    CHECK(contains(two.log[0], "rank 0: node 0, host "));
    CHECK(contains(two.log[0], "advertises 10.99.0.1 on " + h.veth(0) + " (route to MASTER_ADDR 10.99.0.1)"));
    CHECK(contains(two.log[0], "advertises 10.99.0.2 on " + h.veth(1) + " (route to MASTER_ADDR 10.99.0.1)"));
    CHECK(contains(two.log[0], "rendezvous: node 1: host "));
    REQUIRE(two.out.losses.size() == 6);
    check_same_curve(one, two.out, 1e-5);
    CHECK(max_weight_diff(dir / "one/checkpoint-6/model.safetensors",
                          dir / "two/checkpoint-6/model.safetensors") < 1e-5);
  }

  TEST_CASE("ZeRO-2 across the two hosts (interfaces named by GLOO_SOCKET_IFNAME) resumes on one host") {
    TwoHosts h;
    if (!have_hosts(h)) return;
    et::test::TempDir dir("multinode_zero");
    const std::map<std::string, std::string> env[2] = {{{"GLOO_SOCKET_IFNAME", h.veth(0)}},
                                                       {{"GLOO_SOCKET_IFNAME", h.veth(1)}}};
    auto full = run_two_nodes(h, dir, "full",
                              {"train.micro_batch_size=4", "train.zero_stage=2", "train.max_steps=8",
                               "train.save_checkpoint_steps=4"},
                              env);
    INFO(tail(full.log[0]));
    INFO(tail(full.log[1]));
    REQUIRE(full.status[0] == 0);
    REQUIRE(full.status[1] == 0);
    CHECK(contains(full.log[0], "advertises 10.99.0.2 on " + h.veth(1) + " (GLOO_SOCKET_IFNAME)"));
    CHECK(contains(full.log[0], "ZeRO stage 2"));
    REQUIRE(full.out.losses.size() == 8);
    fs::create_directories(dir / "one");
    fs::copy(dir / "full/checkpoint-4", dir / "one/checkpoint-4", fs::copy_options::recursive);
    auto r = train(dir, "one", 0,
                   {"train.micro_batch_size=8", "train.zero_stage=2", "train.max_steps=8",
                    "train.save_checkpoint_steps=4", "train.resume_from_checkpoint=latest"});
    INFO(tail(r.r.err));
    REQUIRE(r.r.exit_code == 0);
    CHECK(contains(r.r.err, "resumed from "));
    REQUIRE(r.losses.size() == 4);  // steps 5..8
    for (size_t i = 0; i < 4; ++i) {
      CAPTURE(i);
      CHECK(std::abs(r.losses[i] - full.out.losses[4 + i]) <= 1e-5);
    }
    CHECK(max_weight_diff(dir / "full/checkpoint-8/model.safetensors",
                          dir / "one/checkpoint-8/model.safetensors") < 1e-5);
  }

  TEST_CASE("a worker killed on node 1 stops node 0 within the worker timeout, and no process is left") {
    TwoHosts h;
    if (!have_hosts(h)) return;
    et::test::TempDir dir("multinode_kill");
    const LongJob job = start_long_job(h, dir, "k");
    auto t0 = Clock::now();
    kill(job.workers[1][0], SIGKILL);
    const JobEnd end = finish(job, dir, "k", t0, 5 + 5);
    const int* st = end.status;
    const double took = end.took;
    const std::string &log0 = end.log[0], &log1 = end.log[1];
    INFO(tail(log0));
    INFO(tail(log1));
    CHECK(st[0] != 0);
    CHECK(st[0] != -1);
    CHECK(st[1] == 128 + SIGKILL);  // node 1's launcher exits with its worker's status
    MESSAGE("killed worker: both launchers ended " << took << " s after the kill (exit " << st[0] << ", "
                                                   << st[1] << ")");
    CHECK(took < 5 + 5);
    // Node 0's last line names the rank, the node and the cause.
    CHECK(contains(log0, "rank 1 (node 1, host "));
    CHECK(contains(log0, "failed: killed by signal 9"));
    for (auto& ws : job.workers)
      for (int w : ws) CHECK_FALSE(alive(w));
  }

  TEST_CASE(
      "SIGTERM to node 0 while node 1's worker is frozen in a collective: both stop within the timeout") {
    TwoHosts h;
    if (!have_hosts(h)) return;
    et::test::TempDir dir("multinode_frozen");
    const LongJob job = start_long_job(h, dir, "f");
    kill(job.workers[1][0], SIGSTOP);  // rank 1 stops answering: rank 0 blocks in its next all-reduce
    auto t0 = Clock::now();
    kill(job.pid[0], SIGTERM);
    const JobEnd end = finish(job, dir, "f", t0, 5 + 5);
    const int* st = end.status;
    const double took = end.took;
    const std::string &log0 = end.log[0], &log1 = end.log[1];
    INFO(tail(log0));
    INFO(tail(log1));
    CHECK(st[0] == 128 + SIGTERM);
    CHECK(st[1] == 128 + SIGTERM);
    MESSAGE("frozen worker: both launchers ended " << took << " s after SIGTERM (worker timeout 5 s)");
    CHECK(took < 5 + 5);
    CHECK(contains(log1, "node 0 is stopping (node 0's launcher received signal 15"));
    CHECK(contains(log0,
                   "node 0 stopped by signal 15 (Terminated, received here); rank 0: killed by signal 9 "
                   "(Killed) after the 5 s worker timeout"));
    CHECK(contains(
        log1,
        "node 1 stopped by signal 15 (Terminated, from another node: node 0's launcher received "
        "signal 15 (Terminated)); rank 1: killed by signal 9 (Killed) after the 5 s worker timeout"));
    for (auto& ws : job.workers)
      for (int w : ws) CHECK_FALSE(alive(w));
  }

  TEST_CASE(
      "a missing node: SIGTERM during the rendezvous ends it at once; the rendezvous timeout names the "
      "node") {
    TwoHosts h;
    if (!have_hosts(h)) return;
    et::test::TempDir dir("multinode_missing");
    write_file(dir / "m.toml", dist_config(dir / "m"));
    {  // SIGTERM while node 0 waits for node 1
      int pid = start_node(h, 0, dir, "m", {}, {"--rendezvous_timeout", "60"});
      const bool waiting = wait_for_text(dir / "m.node0.log", "waiting for 2 node(s)", 30);
      auto t0 = Clock::now();
      kill(pid, SIGTERM);
      int st = et::test::wait_child_for(pid, 5 + 5);
      const double took = since(t0);
      if (st == -1) kill(pid, SIGKILL), et::test::wait_child(pid);
      std::string log = et::test::read_file(dir / "m.node0.log");
      INFO(tail(log));
      CHECK(waiting);
      CHECK(st == 128 + SIGTERM);
      MESSAGE("SIGTERM during the rendezvous: exit " << st << " after " << took << " s");
      CHECK(took < 5);
      CHECK(contains(log, "node 0 stopped by signal 15 (Terminated) while waiting for the other nodes"));
    }
    {  // nobody else comes: node 0 gives up after the rendezvous timeout, naming node 1
      auto t0 = Clock::now();
      int pid = start_node(h, 0, dir, "m", {}, {"--rendezvous_timeout", "3"});
      int st = et::test::wait_child_for(pid, 3 + 5 + 5);
      const double took = since(t0);
      if (st == -1) kill(pid, SIGKILL), et::test::wait_child(pid);
      std::string log = et::test::read_file(dir / "m.node0.log");
      INFO(tail(log));
      CHECK(st == 5);
      MESSAGE("missing node 1: node 0 exited " << st << " after " << took << " s (rendezvous timeout 3 s)");
      CHECK(took < 3 + 5);
      CHECK(
          contains(log, "node 0: rendezvous timed out after 3 s: node(s) 1 never joined (1/2 at 10.99.0.1:"));
    }
    {  // node 1 alone: nothing answers at the master's address
      auto t0 = Clock::now();
      int pid = start_node(h, 1, dir, "m", {}, {"--rendezvous_timeout", "3"});
      int st = et::test::wait_child_for(pid, 3 + 5 + 5);
      const double took = since(t0);
      if (st == -1) kill(pid, SIGKILL), et::test::wait_child(pid);
      std::string log = et::test::read_file(dir / "m.node1.log");
      INFO(tail(log));
      CHECK(st == 5);
      MESSAGE("missing node 0: node 1 exited " << st << " after " << took << " s (rendezvous timeout 3 s)");
      CHECK(took < 3 + 5);
      CHECK(contains(log, "node 1: nothing answered at 10.99.0.1:29471 within the rendezvous timeout (3 s)"));
    }
  }
}

TEST_SUITE("integration.distributed") {
  TEST_CASE(
      "a torchrun-style rank whose peer never comes fails after distributed.rendezvous_timeout_s, naming "
      "it") {
    et::test::TempDir dir("rdzv_rank");
    write_file(dir / "r.toml", dist_config(dir / "r"));
    const std::string port = std::to_string(free_port());
    auto t0 = Clock::now();
    auto r = et::test::run_ethost(
        {"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "text_classify", "--threads",
         "1", "--config", dir / "r.toml", "--set", "distributed.rendezvous_timeout_s=2"},
        {{"WORLD_SIZE", "2"},
         {"RANK", "0"},
         {"LOCAL_WORLD_SIZE", "1"},
         {"MASTER_ADDR", "127.0.0.1"},
         {"MASTER_PORT", port},
         {"ETHOST_PLUGIN_PATH", ""}},
        {}, 60);
    const double took = since(t0);
    INFO(tail(r.err));
    CHECK(r.exit_code == 5);
    MESSAGE("missing rank: exit " << r.exit_code << " after " << took << " s (rendezvous timeout 2 s)");
    CHECK(took < 2 + 5);
    CHECK(contains(r.err,
                   "rank 0 (node 0): rendezvous timed out after 2 s: rank(s) 1 (node 1) never arrived; 1/2 "
                   "joined at 127.0.0.1:" +
                       port));
  }
}
