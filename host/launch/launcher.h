// launcher.h: `ethost --nproc_per_node N ...` — starts N worker processes with torchrun's environment
// contract, prefixes their output with the rank, and stops every worker when one fails, on any node (bounded
// time, never a hang). Node 0's launcher hosts the rendezvous store that every launcher and worker uses.
#pragma once

#include <string>
#include <vector>

namespace et::host {

struct LaunchOptions {
  int nproc_per_node = 0;  // 0: not launching
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;            // 0: a free port (single node only)
  double worker_timeout = 30;     // seconds between a failure (or a stop signal) and SIGKILL of the rest
  double rendezvous_timeout = 0;  // 0: not given (the launcher waits 300 s; workers use their config key)
};

// argv: the host's full command line; launcher flags are removed before it is handed to the workers.
int launch_workers(const LaunchOptions& opts, int argc, const char* const* argv);

}  // namespace et::host
