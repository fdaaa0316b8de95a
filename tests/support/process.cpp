// process.cpp: subprocess helper for integration tests (posix_spawn + poll; kills the child on timeout).
#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "test_paths.h"

extern char** environ;

namespace et::test {

ProcResult run_process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                       const std::string& stdin_text, double timeout_s, const std::string& cwd) {
  int in_p[2], out_p[2], err_p[2];
  if (pipe(in_p) || pipe(out_p) || pipe(err_p)) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in_p[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out_p[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_p[1], 2);
  for (int fd : {in_p[0], in_p[1], out_p[0], out_p[1], err_p[0], err_p[1]})
    posix_spawn_file_actions_addclose(&fa, fd);
  std::vector<std::string> env_strs;
  for (char** e = environ; *e; ++e) {
    std::string s = *e;
    auto eq = s.find('=');
    if (eq != std::string::npos && env.count(s.substr(0, eq))) continue;
    env_strs.push_back(s);
  }
  for (auto& [k, v] : env) env_strs.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strs) envp.push_back(const_cast<char*>(s.c_str()));
  envp.push_back(nullptr);
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  std::string old_cwd;
  if (!cwd.empty()) {
    old_cwd = std::filesystem::current_path();
    std::filesystem::current_path(cwd);
  }
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  if (!cwd.empty()) std::filesystem::current_path(old_cwd);
  posix_spawn_file_actions_destroy(&fa);
  close(in_p[0]);
  close(out_p[1]);
  close(err_p[1]);
  if (rc != 0) {
    close(in_p[1]);
    close(out_p[0]);
    close(err_p[0]);
    throw std::runtime_error("cannot spawn " + argv[0] + ": " + std::strerror(rc));
  }
  // Feed stdin (small inputs in tests), then collect output.
  size_t written = 0;
  signal(SIGPIPE, SIG_IGN);
  fcntl(in_p[1], F_SETFL, O_NONBLOCK);
  ProcResult r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool out_open = true, err_open = true, in_open = true;
  if (stdin_text.empty()) {
    close(in_p[1]);
    in_open = false;
  }
  char buf[65536];
  while (out_open || err_open) {
    std::vector<pollfd> fds;
    if (out_open) fds.push_back({out_p[0], POLLIN, 0});
    if (err_open) fds.push_back({err_p[0], POLLIN, 0});
    if (in_open) fds.push_back({in_p[1], POLLOUT, 0});
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    int n = poll(fds.data(), fds.size(), static_cast<int>(std::min<long>(left.count(), 1000)));
    if (n <= 0) continue;
    for (auto& p : fds) {
      if (!p.revents) continue;
      if (p.fd == in_p[1]) {
        ssize_t w = write(in_p[1], stdin_text.data() + written, stdin_text.size() - written);
        if (w > 0) written += size_t(w);
        if (w < 0 || written == stdin_text.size()) {
          close(in_p[1]);
          in_open = false;
        }
        continue;
      }
      ssize_t k = read(p.fd, buf, sizeof buf);
      if (k <= 0) {
        if (p.fd == out_p[0])
          out_open = false;
        else
          err_open = false;
      } else {
        (p.fd == out_p[0] ? r.out : r.err).append(buf, size_t(k));
      }
    }
  }
  if (in_open) close(in_p[1]);
  close(out_p[0]);
  close(err_p[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
  return r;
}

int spawn_background(const std::vector<std::string>& argv, const std::string& log_file,
                     const std::map<std::string, std::string>& env) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> env_strs;
  for (char** e = environ; *e; ++e) {
    std::string s = *e;
    auto eq = s.find('=');
    if (eq != std::string::npos && env.count(s.substr(0, eq))) continue;
    env_strs.push_back(s);
  }
  for (auto& [k, v] : env) env_strs.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strs) envp.push_back(const_cast<char*>(s.c_str()));
  envp.push_back(nullptr);
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot spawn " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

int wait_child_for(int pid, double timeout_s) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int st = 0;
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
    if (r < 0 || std::chrono::steady_clock::now() >= until) return -1;
    poll(nullptr, 0, 10);
  }
}

int wait_child(int pid) {
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

ProcResult run_ethost(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                      const std::string& stdin_text, double timeout_s) {
  std::vector<std::string> argv{ETHOST_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  auto e = env;
  if (!e.count("ETHOST_PLUGIN_PATH")) e["ETHOST_PLUGIN_PATH"] = "";
  return run_process(argv, e, stdin_text, timeout_s);
}

TempDir::TempDir(const std::string& tag) {
  std::random_device rd;
  std::ostringstream os;
  os << ETHOST_BINARY_DIR << "/tests/tmp/" << tag << "-" << getpid() << "-" << std::hex << rd();
  path_ = os.str();
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_file(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream f(path, std::ios::binary);
  f << content;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool file_appears_within(const std::string& path, double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (std::filesystem::exists(path)) return true;
    ::usleep(5000);
  }
  return std::filesystem::exists(path);
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace et::test
