// run_cmd.cpp: `ethost --app <name> --mode <mode>` — resolve config, configure the runtime, run the app.
#include <ATen/Parallel.h>

#include <csignal>
#include <iostream>
#include <thread>

#include "cli_internal.h"
#include "config/resolve.h"
#include "ethost/app.h"
#include "ethost/error.h"
#include "ethost/log.h"
#include "plugin/host_context.h"

namespace et::host {
namespace {

void on_stop_signal(int sig) {
  if (g_stop_signal.exchange(sig) != 0) {
    // Second signal: stop now.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

Mode parse_mode(const std::string& m) {
  if (m == "train") return Mode::train;
  if (m == "evaluate") return Mode::evaluate;
  if (m == "predict") return Mode::predict;
  return Mode::serve;
}

}  // namespace

int cmd_run_app(const PluginIndex& index, const HostOptions& o) {
  auto lg = log::get("host");
  const ComponentEntry& app = index.require(Kind::app, o.app);

  ConfigInput in;
  in.file = o.config_file;
  in.sets = o.sets;
  if (o.threads) in.sets.emplace_back("runtime.threads", std::to_string(*o.threads), "--threads");
  if (o.log_level) in.sets.emplace_back("runtime.log_level", "\"" + *o.log_level + "\"", "--log-level");
  in.user_params = o.user_params;
  Config cfg = resolve_config(index, app, in);

  if (o.dump_config) {
    std::cout << cfg.to_toml() << "\n";
    return kExitOk;
  }
  ConfigView root = cfg.view();
  if (!o.log_level && !std::getenv("ET_LOG_LEVEL") && !o.verbose)
    log::set_level(log::parse_level(root.get_string("runtime.log_level")));

  // Load the app's plugin before anything else happens, so a broken plugin fails fast with one line.
  PluginLoader loader(index);
  loader.ensure_loaded(app);

  int threads = static_cast<int>(root.get_int("runtime.threads"));
  if (threads == 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  lg.info("ethost ", ET_VERSION_STRING, ": app ", app.decl->key(), " ", app.decl->version, " mode ", o.mode,
          " (", app.file->path, ")");
  lg.info("threads: LibTorch intra-op ", at::get_num_threads());
  lg.info("resolved config:\n", cfg.to_toml());

  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);

  HostContext ctx(index, loader, cfg, threads, WorldInfo{});
  auto instance = ctx.create<App>(o.app, root);
  for (auto* f : loader.loaded())
    lg.debug("loaded plugin ", f->manifest->id, " ", f->manifest->version, " from ", f->path);
  instance->run(parse_mode(o.mode));
  int sig = g_stop_signal.load();
  if (sig) throw Interrupted(sig);
  return kExitOk;
}

}  // namespace et::host
