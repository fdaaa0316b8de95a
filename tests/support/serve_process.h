// serve_process.h: an `ethost --mode serve` child for the serving tests — started on a free loopback port
// (serve.port = 0), ready once it logs "listening on http://HOST:PORT", stopped with SIGTERM.
#pragma once

#include <string>
#include <vector>

namespace et::test {

class ServeProcess {
 public:
  // Runs ETHOST_EXE with `args` + --mode serve --set serve.port=0; waits up to timeout_s for the listening
  // line (started() is false if it never comes: the log says why).
  // `prefix` runs before it (e.g. {"prlimit", "--nofile=40", "--"}: a command that execs the rest).
  ServeProcess(std::vector<std::string> args, std::string log_file, double timeout_s = 120,
               std::vector<std::string> prefix = {});
  ~ServeProcess();  // SIGKILL if still running
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;
  bool started() const { return port_ > 0; }
  int port() const { return port_; }
  int pid() const { return pid_; }
  std::string log() const;
  // Waits up to timeout_s until the log contains `text`.
  bool wait_log(const std::string& text, double timeout_s) const;
  // Sends SIGTERM and waits up to timeout_s: the exit status (-1 still running).
  int terminate(double timeout_s = 60);
  // Waits up to timeout_s for the child to exit (after a signal sent elsewhere): its status, or -1. A child
  // that exited before listening answers its status at once.
  int wait_exit(double timeout_s);

 private:
  int pid_ = -1;
  int port_ = 0;
  int exit_status_ = -1;
  std::string log_file_;
};

}  // namespace et::test
