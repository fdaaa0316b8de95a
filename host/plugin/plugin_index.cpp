// plugin_index.cpp: plugin discovery and the compatibility checks that need no plugin code (ELF, manifest,
// entry symbol, LibTorch soname, ABI stamp), plus duplicate/shadow resolution across search-path tiers.
#include "plugin_index.h"

#include <sys/stat.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

#include "ethost/error.h"
#include "ethost/plugin_abi.h"
#include "ethost/toolkit_version.h"

namespace fs = std::filesystem;

namespace et::host {

std::string host_torch_soversion() {
  return std::to_string(host_abi_stamp().torch_major) + "." + std::to_string(host_abi_stamp().torch_minor);
}

SearchPath make_search_path(const std::vector<std::string>& plugin_dirs, bool no_default_plugins) {
  SearchPath sp;
  for (auto& d : plugin_dirs) sp.dirs.push_back(d);
  if (const char* env = std::getenv("ETHOST_PLUGIN_PATH")) {
    std::string s = env, cur;
    for (char c : s + ":") {
      if (c == ':') {
        if (!cur.empty()) sp.dirs.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
  }
  if (!no_default_plugins) {
    boost::dll::fs::error_code ec;
    fs::path exe_dir = fs::path(boost::dll::program_location(ec).string()).parent_path();
    if (!ec) {
      sp.dirs.push_back((exe_dir / "plugins").string());
      sp.dirs.push_back((exe_dir.parent_path() / "lib" / "ethost" / "plugins").string());
    }
  }
  return sp;
}

void PluginIndex::check_file(PluginFile& f) {
  if (!f.elf.is_elf) {
    f.skipped = true;
    f.problem = f.elf.error;
    return;
  }
  if (!f.elf.manifest) {
    f.skipped = true;
    f.problem = "no " ETHOST_MANIFEST_SECTION " section: not an ethost plugin";
    return;
  }
  try {
    f.manifest = parse_manifest(*f.elf.manifest, f.path);
  } catch (const Error& e) {
    f.problem = e.bare_what();
    return;
  }
  const Manifest& m = *f.manifest;
  // LibTorch sonames: a second LibTorch must never be mapped into the process.
  static const std::regex torch_so(R"(^lib(torch|torch_cpu|torch_cuda|c10)\.so\.(.+)$)");
  for (auto& n : f.elf.needed) {
    std::smatch mt;
    if (std::regex_match(n, mt, torch_so) && mt[2].str() != host_torch_soversion()) {
      f.problem = "needs " + n + ", host has LibTorch " + host_torch_soversion() + ": rebuild the plugin";
      return;
    }
  }
  // The entry symbol: its name carries the ABI major.
  bool has_entry = false;
  std::string other_entry;
  for (auto& s : f.elf.dynamic_symbols) {
    if (s == ETHOST_PLUGIN_ENTRY_SYMBOL) has_entry = true;
    else if (s.rfind(ETHOST_PLUGIN_ENTRY_PREFIX, 0) == 0) other_entry = s;
  }
  if (m.has_build) {
    std::string why = abi_incompatibility(m.build, host_abi_stamp());
    if (why.empty()) why = toolkit_incompatibility(m.toolkit_major, m.toolkit_minor);
    if (!why.empty()) {
      f.problem = why;
      return;
    }
  }
  if (!has_entry) {
    f.problem = other_entry.empty()
                    ? "missing entry symbol " ETHOST_PLUGIN_ENTRY_SYMBOL
                      " (not built with ethost_add_plugin(), or a legacy plugin?)"
                    : "exports " + other_entry + " instead of " ETHOST_PLUGIN_ENTRY_SYMBOL
                      ": built for another SDK ABI major, rebuild the plugin";
    return;
  }
  if (!m.has_build) f.problem = "manifest has no [build] table: not built with ethost_add_plugin()";
}

void PluginIndex::scan(const SearchPath& path) {
  std::set<std::pair<dev_t, ino_t>> seen;
  for (size_t tier = 0; tier < path.dirs.size(); ++tier) {
    std::error_code ec;
    fs::directory_iterator it(path.dirs[tier], ec);
    if (ec) continue;
    std::vector<fs::path> paths;
    for (auto& e : it) {
      std::error_code ec2;
      if (e.path().extension() == ".so" && e.is_regular_file(ec2)) paths.push_back(e.path());
    }
    std::sort(paths.begin(), paths.end());
    for (auto& p : paths) {
      struct stat st {};
      if (::stat(p.c_str(), &st) != 0 || !seen.insert({st.st_dev, st.st_ino}).second) continue;
      auto f = std::make_unique<PluginFile>();
      f->path = p.string();
      f->tier = static_cast<int>(tier);
      f->elf = read_elf(f->path);
      check_file(*f);
      files_.push_back(std::move(f));
    }
  }

  // Components, then duplicates within a tier and shadowing across tiers.
  for (auto& f : files_) {
    if (f->skipped) continue;
    if (!f->manifest) {
      ComponentEntry e;
      e.name = "?";
      e.file = f.get();
      e.status = "incompatible: " + f->problem;
      components_.push_back(e);
      continue;
    }
    for (auto& d : f->manifest->provides) {
      ComponentEntry e;
      e.kind = d.kind;
      e.name = d.name;
      e.decl = &d;
      e.file = f.get();
      e.status = f->problem.empty() ? "ok" : "incompatible: " + f->problem;
      components_.push_back(e);
    }
  }
  std::map<std::pair<int, std::string>, std::vector<size_t>> by_key;
  for (size_t i = 0; i < components_.size(); ++i)
    if (components_[i].usable())
      by_key[{static_cast<int>(components_[i].kind), components_[i].name}].push_back(i);
  for (auto& [key, idx] : by_key) {
    // idx is in tier order. The first tier holding the name decides.
    int first_tier = components_[idx[0]].file->tier;
    std::vector<size_t> same;
    for (size_t i : idx)
      if (components_[i].file->tier == first_tier) same.push_back(i);
    if (same.size() > 1) {
      std::string names;
      for (size_t i : same) names += (names.empty() ? "" : " and ") + components_[i].file->path;
      for (size_t i : same) components_[i].status = "duplicate: provided by both " + names + "; neither is used";
    }
    for (size_t i : idx)
      if (components_[i].file->tier != first_tier)
        components_[i].status = "shadowed by " + components_[idx[0]].file->path;
  }
}

const ComponentEntry* PluginIndex::find(Kind kind, const std::string& name) const {
  for (auto& c : components_)
    if (c.kind == kind && c.name == name && c.usable()) return &c;
  return nullptr;
}

std::vector<std::string> PluginIndex::names(Kind kind) const {
  std::vector<std::string> out;
  for (auto& c : components_)
    if (c.kind == kind && c.usable()) out.push_back(c.name);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const ComponentEntry& PluginIndex::require(Kind kind, const std::string& name,
                                           const std::string& needed_by) const {
  if (auto* c = find(kind, name)) return *c;
  std::string what = std::string(kind_name(kind)) + " '" + name + "'";
  std::string prefix = needed_by.empty() ? "" : needed_by + " needs ";
  for (auto& c : components_) {
    if (c.kind == kind && c.name == name && !c.usable())
      throw PluginError(prefix + what + " from " + c.file->path + ": " + c.status, "",
                        "see `ethost --list` for every plugin's status");
  }
  std::string avail;
  for (auto& n : names(kind)) avail += (avail.empty() ? "" : ", ") + n;
  throw PluginError(prefix + what + ": not found", "",
                    "available: " + (avail.empty() ? std::string("(none)") : avail) +
                        "; add the plugin's directory with --plugin-dir or ETHOST_PLUGIN_PATH");
}

}  // namespace et::host
