// process_group.cpp: c10d ProcessGroupGloo (and NCCL when compiled in) behind ethost's small collective API.
#include "ethost/dist/process_group.h"

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <thread>

#include "ethost/dist/net.h"
#include "ethost/error.h"
#include "ethost/log.h"

namespace et::dist {
namespace {

int env_int(const char* name, int def, bool* present = nullptr) {
  const char* v = std::getenv(name);
  if (present) *present = v && *v;
  if (!v || !*v) return def;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (*end != '\0' || x < 0)
    throw ConfigError(std::string("environment variable ") + name + "='" + v +
                      "' is not a non-negative integer");
  return static_cast<int>(x);
}

std::shared_ptr<ProcessGroup> g_pg;

std::string env_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The node of a rank when every node runs LOCAL_WORLD_SIZE ranks (the launcher's and torchrun's layout).
int node_of(const WorldEnv& e, int rank) { return e.local_world_size > 0 ? rank / e.local_world_size : rank; }

std::string host_name() {
  char b[256] = {};
  ::gethostname(b, sizeof b - 1);
  return b;
}

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }

std::string fmt_seconds(double s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace

WorldEnv WorldEnv::from_environment() {
  WorldEnv e;
  e.world_size = env_int("WORLD_SIZE", 1, &e.from_env);
  e.rank = env_int("RANK", 0);
  e.local_rank = env_int("LOCAL_RANK", e.rank);
  e.local_world_size = env_int("LOCAL_WORLD_SIZE", e.world_size);
  if (const char* a = std::getenv("MASTER_ADDR"); a && *a) e.master_addr = a;
  e.master_port = env_int("MASTER_PORT", 29500);
  if (e.world_size < 1) throw ConfigError("WORLD_SIZE must be >= 1");
  if (e.rank >= e.world_size)
    throw ConfigError("RANK " + std::to_string(e.rank) + " is not below WORLD_SIZE " +
                      std::to_string(e.world_size));
  if (e.master_port < 1 || e.master_port > 65535) throw ConfigError("MASTER_PORT must be a TCP port");
  return e;
}

struct Work::Impl {
  c10::intrusive_ptr<c10d::Work> w;
};
Work::Work() = default;
Work::~Work() = default;
Work::Work(Work&&) noexcept = default;
Work& Work::operator=(Work&&) noexcept = default;
bool Work::valid() const { return impl && impl->w; }
void Work::wait() {
  if (!valid()) return;
  try {
    impl->w->wait();
  } catch (const std::exception& e) {
    throw DistError(std::string("collective failed: ") + e.what(), "dist",
                    "another rank probably died or timed out; see its log");
  }
  impl.reset();
}

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroup> pg;
  std::string backend;
  int rank = 0, size = 1;
};

ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessGroup::~ProcessGroup() = default;

std::shared_ptr<ProcessGroup> ProcessGroup::create(const WorldEnv& env, std::chrono::milliseconds timeout,
                                                   const std::string& backend) {
  GroupOptions o;
  o.timeout = timeout;
  o.rendezvous_timeout = timeout;
  o.backend = backend;
  return create(env, o);
}

std::shared_ptr<ProcessGroup> ProcessGroup::create(const WorldEnv& env, const GroupOptions& o) {
  if (o.backend == "nccl")
    throw ConfigError("backend nccl needs a CUDA build of LibTorch; this build has only gloo",
                      "distributed.backend");
  auto lg = log::get("dist");
  auto impl = std::make_unique<Impl>();
  impl->rank = env.rank;
  impl->size = env.world_size;
  impl->backend = "gloo";
  const int node = env_int("GROUP_RANK", node_of(env, env.rank));
  const std::string who = "rank " + std::to_string(env.rank) + " (node " + std::to_string(node) + ")";
  const std::string at = env.master_addr + ":" + std::to_string(env.master_port);
  const bool agent_store = env_str("ETHOST_AGENT_STORE") == "1";
  const bool server = !agent_store && env.rank == 0;
  const double secs = static_cast<double>(o.rendezvous_timeout.count()) / 1000.0;
  const auto deadline = std::chrono::steady_clock::now() + o.rendezvous_timeout;

  Advertise adv =
      choose_advertise(env.master_addr, env.master_port, env_str("GLOO_SOCKET_IFNAME"), o.socket_ifname);
  if (env.local_world_size < env.world_size && is_loopback_ipv4(adv.address))
    lg.warn(who, " advertises loopback address ", adv.describe(), ": ranks on other hosts cannot reach it");
  lg.info(who, " advertises ", adv.describe());

  // The store: wait for it with our own probe (bounded), then connect.
  if (!server && !wait_for_tcp(env.master_addr, env.master_port, deadline))
    throw DistError(who + ": nothing answered at " + at + " within " + fmt_seconds(secs) + " s", "rendezvous",
                    agent_store
                        ? "start node 0's launcher (it hosts the store) with the same --master_addr and "
                          "--master_port"
                        : "rank 0 hosts the store: check that it runs and MASTER_ADDR/MASTER_PORT");
  const std::string pfx = "ethost/rdzv/";
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<uint16_t>(env.master_port);
    so.isServer = server;
    so.waitWorkers = false;
    so.timeout = o.rendezvous_timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
    // Register, then wait (polling, bounded) until every rank has.
    std::string info = "node " + std::to_string(node) + ", host " + host_name() + ", pid " +
                       std::to_string(::getpid()) + ", advertises " + adv.describe();
    impl->store->set(pfx + "rank/" + std::to_string(env.rank), bytes(info));
    impl->store->add(pfx + "joined", 1);
    for (;;) {
      const int64_t joined = impl->store->add(pfx + "joined", 0);
      if (joined >= env.world_size) break;
      if (std::chrono::steady_clock::now() >= deadline) {
        std::string missing;
        int n_missing = 0;
        for (int r = 0; r < env.world_size; ++r)
          if (!impl->store->check({pfx + "rank/" + std::to_string(r)})) {
            if (++n_missing <= 16)
              missing += (missing.empty() ? "" : ", ") + std::to_string(r) + " (node " +
                         std::to_string(node_of(env, r)) + ")";
          }
        if (n_missing > 16) missing += ", ... (" + std::to_string(n_missing) + " in all)";
        throw DistError(who + ": rendezvous timed out after " + fmt_seconds(secs) + " s: rank(s) " + missing +
                            " never arrived; " + std::to_string(joined) + "/" +
                            std::to_string(env.world_size) + " joined at " + at,
                        "rendezvous",
                        "start the missing ranks/nodes with the same MASTER_ADDR/MASTER_PORT, or raise "
                        "distributed.rendezvous_timeout_s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (env.rank == 0)
      for (int r = 0; r < env.world_size; ++r)
        lg.info("rendezvous: rank ", r, ": ", text(impl->store->get(pfx + "rank/" + std::to_string(r))));
  } catch (const DistError&) {
    throw;
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw DistError(who + ": lost the rendezvous store at " + at + ": " + what.substr(0, what.find('\n')),
                    "rendezvous",
                    "the process hosting it (node 0's launcher, or rank 0) probably stopped; see its log");
  }
  try {
    auto opts = c10d::ProcessGroupGloo::Options::create(o.timeout);
    if (!adv.interfaces.empty()) {
      for (auto& name : adv.interfaces)
        opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
    } else {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(adv.address));
    }
    opts->threads = 2;
    auto store = c10::make_intrusive<c10d::PrefixStore>("ethost/pg", impl->store);
    impl->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, opts);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw DistError(who + ": connecting to the other ranks failed (advertising " + adv.describe() +
                        "): " + what.substr(0, what.find('\n')),
                    "dist",
                    "the ranks must reach each other's advertised addresses: choose the interface with "
                    "GLOO_SOCKET_IFNAME or distributed.socket_ifname");
  }
  log::get("dist").info("process group ready: rank ", env.rank, "/", env.world_size, " (", impl->backend,
                        ", ", at, ")");
  return std::shared_ptr<ProcessGroup>(new ProcessGroup(std::move(impl)));
}

int ProcessGroup::rank() const { return impl_->rank; }
int ProcessGroup::size() const { return impl_->size; }
const std::string& ProcessGroup::backend() const { return impl_->backend; }

Work ProcessGroup::all_reduce_async(std::vector<at::Tensor>& tensors) {
  Work w;
  w.impl = std::make_unique<Work::Impl>();
  w.impl->w = impl_->pg->allreduce(tensors);
  return w;
}

void ProcessGroup::all_reduce(std::vector<at::Tensor>& tensors) { all_reduce_async(tensors).wait(); }

void ProcessGroup::broadcast(at::Tensor& tensor, int root) {
  std::vector<at::Tensor> t{tensor};
  c10d::BroadcastOptions o;
  o.rootRank = root;
  Work w;
  w.impl = std::make_unique<Work::Impl>();
  w.impl->w = impl_->pg->broadcast(t, o);
  w.wait();
}

void ProcessGroup::all_gather(std::vector<at::Tensor>& outputs, const at::Tensor& input) {
  std::vector<std::vector<at::Tensor>> out{outputs};
  std::vector<at::Tensor> in{input.contiguous()};
  Work w;
  w.impl = std::make_unique<Work::Impl>();
  w.impl->w = impl_->pg->allgather(out, in);
  w.wait();
  for (size_t i = 0; i < outputs.size(); ++i)
    if (out[0][i].data_ptr() != outputs[i].data_ptr()) outputs[i].copy_(out[0][i]);
}

void ProcessGroup::reduce_scatter(at::Tensor& output, const at::Tensor& input) {
  // Gloo has no reduce-scatter in this LibTorch: all-reduce the whole buffer, keep this rank's slice.
  at::Tensor buf = input.contiguous().clone();
  std::vector<at::Tensor> t{buf};
  all_reduce(t);
  const int64_t n = output.numel();
  output.copy_(buf.view({-1}).narrow(0, static_cast<int64_t>(rank()) * n, n).view_as(output));
}

void ProcessGroup::barrier() {
  Work w;
  w.impl = std::make_unique<Work::Impl>();
  w.impl->w = impl_->pg->barrier();
  w.wait();
}

double ProcessGroup::all_reduce_scalar(double value) {
  std::vector<at::Tensor> t{torch::tensor({value}, torch::kDouble)};
  all_reduce(t);
  return t[0].item<double>();
}

ProcessGroup* process_group() { return g_pg.get(); }
void set_process_group(std::shared_ptr<ProcessGroup> pg) { g_pg = std::move(pg); }

}  // namespace et::dist
