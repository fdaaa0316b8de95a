// serve_process.cpp: starts, watches and stops an `ethost --mode serve` child for the serving tests.
#include "serve_process.h"

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <regex>
#include <thread>

#include "process.h"
#include "test_paths.h"

namespace et::test {

ServeProcess::ServeProcess(std::vector<std::string> args, std::string log_file, double timeout_s,
                           std::vector<std::string> prefix)
    : log_file_(std::move(log_file)) {
  std::vector<std::string> argv = std::move(prefix);
  argv.push_back(ETHOST_EXE);
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--mode", "serve", "--set", "serve.port=0"});
  pid_ = spawn_background(argv, log_file_, {{"ETHOST_PLUGIN_PATH", ""}});
  static const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch m;
    std::string text = log();
    if (std::regex_search(text, m, listening)) {
      port_ = std::stoi(m[1]);
      return;
    }
    if (int st = wait_child_for(pid_, 0.05); st != -1) {  // exited before listening
      exit_status_ = st;
      pid_ = -1;
      return;
    }
  }
}

ServeProcess::~ServeProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    wait_child(pid_);
  }
}

std::string ServeProcess::log() const { return read_file(log_file_); }

bool ServeProcess::wait_log(const std::string& text, double timeout_s) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (contains(log(), text)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling a log file: no other signal
  }
  return contains(log(), text);
}

int ServeProcess::terminate(double timeout_s) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  return wait_exit(timeout_s);
}

int ServeProcess::wait_exit(double timeout_s) {
  if (pid_ <= 0) return exit_status_;
  int status = wait_child_for(pid_, timeout_s);
  if (status != -1) {
    pid_ = -1;
    exit_status_ = status;
  }
  return status;
}

}  // namespace et::test
