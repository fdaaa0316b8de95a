// process_group.h: the run's process group on torch's c10d (Gloo on CPU, NCCL where a CUDA LibTorch has it),
// with a TCPStore rendezvous from the torchrun environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, ...).
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ethost/export.h"

namespace et::dist {

struct ET_API WorldEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  bool from_env = false;  // WORLD_SIZE was set (by ethost --nproc_per_node, torchrun, SLURM/MPI wrappers)

  // Reads torchrun's variables. Inconsistent values throw et::ConfigError naming the variable.
  static WorldEnv from_environment();
};

// A pending asynchronous collective.
class ET_API Work {
 public:
  Work();
  ~Work();
  Work(Work&&) noexcept;
  Work& operator=(Work&&) noexcept;
  void wait();
  bool valid() const;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

// How a process group is formed (since ABI 2.1).
struct ET_API GroupOptions {
  std::chrono::milliseconds timeout{600000};             // a collective that takes longer fails
  std::chrono::milliseconds rendezvous_timeout{300000};  // waiting for the store and for every rank to arrive
  std::string backend = "auto";                          // auto | gloo | nccl
  std::string socket_ifname;                             // distributed.socket_ifname; GLOO_SOCKET_IFNAME wins
};

class ET_API ProcessGroup {
 public:
  // Rendezvous through a TCPStore on master_addr:master_port, hosted by the node-0 launcher when the
  // environment says so (ETHOST_AGENT_STORE=1, set by `ethost --nproc_per_node`), else by rank 0
  // (torchrun/srun-started workers). Every rank registers under its rank; a rank that waits longer than
  // rendezvous_timeout throws et::DistError naming the ranks (and nodes) that never arrived. Each rank
  // advertises the address chosen by choose_advertise (net.h), and rank 0 logs every rank's. backend: "auto"
  // (nccl for CUDA tensors where available, else gloo), "gloo" or "nccl". Collectives fail after `timeout`
  // instead of hanging.
  static std::shared_ptr<ProcessGroup> create(const WorldEnv& env, const GroupOptions& options);
  // The 2.0 form: rendezvous_timeout = timeout.
  static std::shared_ptr<ProcessGroup> create(const WorldEnv& env, std::chrono::milliseconds timeout,
                                              const std::string& backend = "auto");
  ~ProcessGroup();

  int rank() const;
  int size() const;
  const std::string& backend() const;

  // Sum over ranks, in place. async: returns a Work to wait on.
  void all_reduce(std::vector<at::Tensor>& tensors);
  Work all_reduce_async(std::vector<at::Tensor>& tensors);
  void broadcast(at::Tensor& tensor, int root);
  // outputs[r] receives rank r's input (all of the same shape).
  void all_gather(std::vector<at::Tensor>& outputs, const at::Tensor& input);
  // input is [size() * n] (flat); output [n] receives the sum over ranks of this rank's slice.
  void reduce_scatter(at::Tensor& output, const at::Tensor& input);
  void barrier();
  double all_reduce_scalar(double value);

  struct Impl;

 private:
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The run's process group (nullptr for a single process). Set by the host before the app runs.
ET_API ProcessGroup* process_group();
ET_API void set_process_group(std::shared_ptr<ProcessGroup> pg);

}  // namespace et::dist
