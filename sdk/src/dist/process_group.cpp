// process_group.cpp: c10d ProcessGroupGloo (and NCCL when compiled in) behind ethost's small collective API.
#include "ethost/dist/process_group.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include <cstdlib>

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
    throw ConfigError(std::string("environment variable ") + name + "='" + v + "' is not a non-negative integer");
  return static_cast<int>(x);
}

std::shared_ptr<ProcessGroup> g_pg;

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
    throw ConfigError("RANK " + std::to_string(e.rank) + " is not below WORLD_SIZE " + std::to_string(e.world_size));
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
    throw Error(std::string("collective failed: ") + e.what(), "dist",
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
  if (backend == "nccl")
    throw ConfigError("backend nccl needs a CUDA build of LibTorch; this build has only gloo", "distributed.backend");
  auto impl = std::make_unique<Impl>();
  impl->rank = env.rank;
  impl->size = env.world_size;
  impl->backend = "gloo";
  c10d::TCPStoreOptions so;
  so.port = static_cast<uint16_t>(env.master_port);
  so.isServer = env.rank == 0;
  so.numWorkers = env.world_size;
  so.waitWorkers = true;
  so.timeout = timeout;
  try {
    impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
    auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
    // One node: loopback. Several nodes: the interface the host name resolves to.
    opts->devices.push_back(env.local_world_size == env.world_size
                                ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                : c10d::ProcessGroupGloo::createDefaultDevice());
    opts->threads = 2;
    impl->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, env.rank, env.world_size, opts);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw Error("rendezvous failed for rank " + std::to_string(env.rank) + " at " + env.master_addr + ":" +
                    std::to_string(env.master_port) + ": " + what.substr(0, what.find('\n')),
                "dist", "check MASTER_ADDR/MASTER_PORT and that every rank started");
  }
  log::get("dist").info("process group ready: rank ", env.rank, "/", env.world_size, " (", impl->backend, ", ",
                        env.master_addr, ":", env.master_port, ")");
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
