// process.h: runs a command (no shell) with extra environment, optional stdin, and a timeout; captures
// output.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace et::test {

struct ProcResult {
  int exit_code = -1;  // exit status, or 128+signal when killed by a signal
  std::string out;
  std::string err;
  bool timed_out = false;
};

ProcResult run_process(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& env = {}, const std::string& stdin_text = {},
                       double timeout_s = 120.0, const std::string& cwd = {});

// Runs the ethost binary with these arguments (hermetic: --no-default-plugins is NOT added automatically).
ProcResult run_ethost(const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env = {}, const std::string& stdin_text = {},
                      double timeout_s = 120.0);

// Starts a command in the background (stdout/stderr to the given file); returns its pid.
int spawn_background(const std::vector<std::string>& argv, const std::string& log_file,
                     const std::map<std::string, std::string>& env = {});
// Waits for a background child; returns its exit status (128+signal when killed).
int wait_child(int pid);
// Waits at most timeout_s for a background child: its exit status (128+signal when killed), or -1 if it is
// still running then (it is left running).
int wait_child_for(int pid, double timeout_s);

// A fresh empty directory under the build tree, removed at destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& tag);
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void write_file(const std::string& path, const std::string& content);
std::string read_file(const std::string& path);
bool contains(const std::string& haystack, const std::string& needle);
// Polls (every 5 ms) until path exists; false after `seconds` without it. For files another process writes.
bool file_appears_within(const std::string& path, double seconds);
int count_lines(const std::string& text);

}  // namespace et::test
