// loader.cpp: the loading half of the plugin contract (checks 4-6 of PLUGIN_ABI.md §2).
#include "loader.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <boost/dll/shared_library.hpp>
#include <cstring>
#include <regex>

#include "ethost/error.h"
#include "ethost/plugin_abi.h"

namespace et::host {
namespace {

// ------------------------------------------------------------------------------------------ crash guard
// While plugin code runs for the first time (static initialisers, registration), a fatal signal is reported
// as "<file>: plugin crashed (SIGSEGV) while loading" and the process exits with kExitPlugin.
char g_crash_prefix[2048];

void crash_handler(int sig) {
  const char* name = sig == SIGSEGV   ? "SIGSEGV"
                     : sig == SIGBUS  ? "SIGBUS"
                     : sig == SIGILL  ? "SIGILL"
                     : sig == SIGFPE  ? "SIGFPE"
                     : sig == SIGABRT ? "SIGABRT"
                                      : "signal";
  const char* suffix = ") while loading or registering; remove the plugin or fix it\n";
  ssize_t r = ::write(2, g_crash_prefix, std::strlen(g_crash_prefix));
  r = ::write(2, name, std::strlen(name));
  r = ::write(2, suffix, std::strlen(suffix));
  (void)r;
  _exit(kExitPlugin);
}

class CrashGuard {
 public:
  explicit CrashGuard(const std::string& file) {
    std::snprintf(g_crash_prefix, sizeof g_crash_prefix, "ethost: error: %s: plugin crashed (", file.c_str());
    struct sigaction sa {};
    sa.sa_handler = crash_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~CrashGuard() {
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }

 private:
  static constexpr std::array<int, 5> kSignals = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
  std::array<struct sigaction, 5> old_{};
};

std::string demangle_symbols(std::string msg) {
  static const std::regex mangled(R"(_Z[A-Za-z0-9_]+)");
  std::string out;
  auto begin = std::sregex_iterator(msg.begin(), msg.end(), mangled);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    int status = 0;
    char* d = abi::__cxa_demangle(it->str().c_str(), nullptr, nullptr, &status);
    out += msg.substr(last, it->position() - last);
    out += (status == 0 && d) ? std::string(d) : it->str();
    std::free(d);
    last = it->position() + it->length();
  }
  out += msg.substr(last);
  return out;
}

// Collects registrations; they are committed only if they match the manifest exactly.
class StagingRegistrar final : public Registrar {
 public:
  void add_app(const std::string& name, AppFactory f) override { add(Kind::app, name, staged.apps, std::move(f)); }
  void add_model(const std::string& name, ModelFactory f) override {
    add(Kind::model, name, staged.models, std::move(f));
  }
  void add_optimizer(const std::string& name, OptimizerFactoryFactory f) override {
    add(Kind::optimizer, name, staged.optimizers, std::move(f));
  }
  void add_reader(const std::string& name, ReaderFactory f) override {
    add(Kind::reader, name, staged.readers, std::move(f));
  }
  Factories staged;
  std::set<std::string> keys;
  std::vector<std::string> twice;

 private:
  template <class M, class F>
  void add(Kind k, const std::string& name, M& map, F f) {
    std::string key = std::string(kind_name(k)) + "/" + name;
    if (!keys.insert(key).second) twice.push_back(key);
    map[name] = std::move(f);
  }
};

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out.empty() ? "(nothing)" : out;
}

}  // namespace

void PluginLoader::ensure_loaded(const ComponentEntry& entry) {
  const PluginFile& f = *entry.file;
  if (loaded_.count(f.path)) return;
  if (auto it = failed_.find(f.path); it != failed_.end()) throw PluginError(it->second, f.path);
  try {
    load(f);
  } catch (const PluginError& e) {
    failed_[f.path] = e.bare_what();
    throw;
  }
  loaded_.insert(f.path);
  loaded_list_.push_back(&f);
}

void PluginLoader::load(const PluginFile& f) {
  if (!f.problem.empty()) throw PluginError(f.problem, f.path);
  const Manifest& m = *f.manifest;
  CrashGuard guard(f.path);

  // Never unloaded: components, autograd nodes and deleters point into plugin code.
  static auto* libraries = new std::vector<boost::dll::shared_library>();
  boost::dll::shared_library lib;
  try {
    lib.load(boost::dll::fs::path(f.path),
             boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    // Boost wraps dlerror(): "...load() failed (dlerror system message: <msg>): <errno text>".
    std::string why = e.what();
    static const std::regex wrapped(R"(dlerror system message: (.*)\): [^)]*$)");
    std::smatch mt;
    if (std::regex_search(why, mt, wrapped)) why = mt[1].str();
    // dlerror repeats the path; keep the cause.
    if (auto pos = why.find(f.path + ": "); pos != std::string::npos) why.erase(pos, f.path.size() + 2);
    throw PluginError("cannot load: " + demangle_symbols(why), f.path,
                      "the plugin needs a symbol or library this host does not have: rebuild it against this SDK");
  }
  if (!lib.has(ETHOST_PLUGIN_ENTRY_SYMBOL))
    throw PluginError("missing entry symbol " ETHOST_PLUGIN_ENTRY_SYMBOL, f.path);
  auto entry = lib.get<const ethost_plugin_descriptor*()>(ETHOST_PLUGIN_ENTRY_SYMBOL);
  libraries->push_back(lib);

  const ethost_plugin_descriptor* d = entry();
  if (!d) throw PluginError("entry symbol returned no descriptor", f.path);
  if (d->struct_size < offsetof(ethost_plugin_descriptor, register_components) + sizeof(void*))
    throw PluginError("descriptor too small (" + std::to_string(d->struct_size) + " bytes)", f.path);
  AbiStamp stamp{d->abi_major, d->abi_minor, d->torch_major, d->torch_minor, d->cxx11_abi};
  if (std::string why = abi_incompatibility(stamp, host_abi_stamp()); !why.empty())
    throw PluginError(why, f.path);
  if (m.build.abi_major != stamp.abi_major || m.build.abi_minor != stamp.abi_minor ||
      m.build.torch_major != stamp.torch_major || m.build.torch_minor != stamp.torch_minor)
    throw PluginError("descriptor and manifest disagree about the SDK/LibTorch versions", f.path);
  if (!d->register_components) throw PluginError("descriptor has no register_components", f.path);

  StagingRegistrar reg;
  char err[1024] = {0};
  int rc = d->register_components(&reg, err, sizeof err);
  if (rc != 0)
    throw PluginError(m.id + " failed to initialise: " + (err[0] ? err : "register_components returned " +
                                                                          std::to_string(rc)),
                      f.path);
  if (!reg.twice.empty()) throw PluginError("registered " + reg.twice[0] + " twice", f.path);
  std::set<std::string> declared;
  for (auto& c : m.provides) declared.insert(c.key());
  if (declared != reg.keys)
    throw PluginError("registered components {" + join(reg.keys) + "} differ from the manifest's provides {" +
                          join(declared) + "}; plugin rejected",
                      f.path);
  // Commit all-or-nothing; a component shadowed by another tier's plugin stays unused.
  auto commit = [&](Kind k, auto& from, auto& to) {
    for (auto& [n, fn] : from) {
      const ComponentEntry* owner = index_.find(k, n);
      if (owner && owner->file == &f) to[n] = fn;
    }
  };
  commit(Kind::app, reg.staged.apps, factories_.apps);
  commit(Kind::model, reg.staged.models, factories_.models);
  commit(Kind::optimizer, reg.staged.optimizers, factories_.optimizers);
  commit(Kind::reader, reg.staged.readers, factories_.readers);
}

}  // namespace et::host
