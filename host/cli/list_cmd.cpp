// list_cmd.cpp: `ethost --list [--json]` and `--check-plugins`.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_internal.h"
#include "ethost/error.h"
#include "plugin/loader.h"

namespace et::host {

int cmd_list(const PluginIndex& index, bool json, bool verbose) {
  if (json) {
    nlohmann::json j;
    j["components"] = nlohmann::json::array();
    for (auto& c : index.components()) {
      nlohmann::json e;
      e["kind"] = c.name == "?" ? "?" : kind_name(c.kind);
      e["name"] = c.name;
      e["version"] = c.decl ? c.decl->version : "";
      e["plugin"] = c.file->manifest ? c.file->manifest->id : "";
      e["plugin_version"] = c.file->manifest ? c.file->manifest->version : "";
      e["file"] = c.file->path;
      e["status"] = c.status.rfind("incompatible", 0) == 0 ? "incompatible"
                    : c.status.rfind("shadowed", 0) == 0   ? "shadowed"
                    : c.status.rfind("duplicate", 0) == 0  ? "duplicate"
                                                           : "ok";
      e["detail"] = c.status;
      e["description"] = c.decl ? c.decl->description : "";
      j["components"].push_back(e);
    }
    j["skipped"] = nlohmann::json::array();
    for (auto& f : index.files())
      if (f->skipped) j["skipped"].push_back({{"file", f->path}, {"reason", f->problem}});
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows = {{"KIND", "NAME", "VERSION", "PLUGIN", "FILE", "STATUS"}};
  for (auto& c : index.components())
    rows.push_back({c.name == "?" ? "?" : kind_name(c.kind), c.name, c.decl ? c.decl->version : "-",
                    c.file->manifest ? c.file->manifest->id : "-", c.file->path, c.status});
  std::vector<size_t> w(rows[0].size(), 0);
  for (auto& r : rows)
    for (size_t i = 0; i + 1 < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  for (auto& r : rows) {
    for (size_t i = 0; i < r.size(); ++i) {
      std::cout << r[i];
      if (i + 1 < r.size()) std::cout << std::string(w[i] - r[i].size() + 2, ' ');
    }
    std::cout << "\n";
  }
  size_t skipped = 0;
  for (auto& f : index.files())
    if (f->skipped) {
      ++skipped;
      if (verbose) std::cout << "skipped " << f->path << ": " << f->problem << "\n";
    }
  if (skipped && !verbose) std::cout << "(" << skipped << " other .so file(s) skipped; --verbose says why)\n";
  return kExitOk;
}

// Loads every plugin in its own forked probe process so that a crash is attributed and contained.
int cmd_check_plugins(const PluginIndex& index) {
  int bad = 0;
  for (auto& f : index.files()) {
    if (f->skipped) continue;
    std::string status;
    if (!f->problem.empty()) {
      status = "incompatible: " + f->problem;
    } else {
      int fds[2];
      if (pipe(fds) != 0) throw InternalError("pipe failed");
      std::cout.flush();
      pid_t pid = fork();
      if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        PluginLoader loader(index);
        try {
          for (auto& c : index.components())
            if (c.file == f.get() && c.usable()) {
              loader.ensure_loaded(c);
              break;
            }
        } catch (const std::exception& e) {
          std::string msg = e.what();
          ssize_t r = write(2, msg.data(), msg.size());
          (void)r;
          _exit(kExitPlugin);
        }
        _exit(0);
      }
      close(fds[1]);
      std::string out;
      char buf[512];
      ssize_t n;
      while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, size_t(n));
      close(fds[0]);
      int st = 0;
      waitpid(pid, &st, 0);
      while (!out.empty() && (out.back() == '\n')) out.pop_back();
      if (WIFEXITED(st) && WEXITSTATUS(st) == 0) status = "ok";
      else if (WIFSIGNALED(st)) status = "crashed (signal " + std::to_string(WTERMSIG(st)) + ")";
      else status = "failed: " + out;
    }
    if (status != "ok") ++bad;
    std::cout << f->path << ": " << status << "\n";
  }
  return bad ? kExitPlugin : kExitOk;
}

}  // namespace et::host
