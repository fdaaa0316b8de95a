// run_cmd.cpp: `ethost --app <name> --mode <mode>` — resolve config, configure the runtime, run the app.
#include <ATen/Parallel.h>

#include <chrono>
#include <csignal>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli_internal.h"
#include "config/resolve.h"
#include "cpu/blas_backend.h"
#include "ethost/app.h"
#include "ethost/app/predict_driver.h"
#include "ethost/dist/process_group.h"
#include "ethost/error.h"
#include "ethost/log.h"
#include "ethost/predictor.h"
#include "plugin/component_errors.h"
#include "plugin/host_context.h"
#include "serve/serve.h"

namespace et::host {
namespace {

bool version_less(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  for (int i = 0; i < 3; ++i) {
    long x = 0, y = 0;
    char dot;
    sa >> x;
    sb >> y;
    if (x != y) return x < y;
    sa >> dot;
    sb >> dot;
  }
  return false;
}

void on_stop_signal(int sig) {
  if (g_stop_signal.exchange(sig) != 0) {
    // Second signal: stop now.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

// `requires` entries are "kind" (checked through the config's component keys) or "kind:name[>=version]".
void check_requires(const PluginIndex& index, const ComponentDecl& decl) {
  for (const auto& req : decl.requires_) {
    auto colon = req.find(':');
    if (colon == std::string::npos) continue;
    auto kind = parse_kind(req.substr(0, colon));
    if (!kind) throw PluginError(decl.key() + ": malformed requires entry '" + req + "'");
    std::string name = req.substr(colon + 1), min_version;
    if (auto ge = name.find(">="); ge != std::string::npos) {
      min_version = name.substr(ge + 2);
      name = name.substr(0, ge);
    }
    const ComponentEntry& dep = index.require(*kind, name, decl.key());
    if (!min_version.empty() && version_less(dep.decl->version, min_version))
      throw PluginError(
          decl.key() + " needs " + req + " but " + dep.file->path + " provides version " + dep.decl->version,
          "", "install a newer plugin");
  }
}

// The launcher's --rendezvous_timeout (passed as ETHOST_RENDEZVOUS_TIMEOUT_S) wins over the config key.
double rendezvous_timeout_s(const ConfigView& root) {
  if (const char* v = std::getenv("ETHOST_RENDEZVOUS_TIMEOUT_S"); v && *v) {
    char* end = nullptr;
    double s = std::strtod(v, &end);
    if (*end == '\0' && s > 0) return s;
    throw ConfigError(std::string("ETHOST_RENDEZVOUS_TIMEOUT_S='") + v +
                      "' is not a positive number of seconds");
  }
  int64_t s = root.get_int("distributed.rendezvous_timeout_s");
  if (s < 1)
    throw ConfigError("must be >= 1 (seconds), got " + std::to_string(s),
                      root.full_key("distributed.rendezvous_timeout_s"));
  return static_cast<double>(s);
}

Mode parse_mode(const std::string& m) {
  if (m == "train") return Mode::train;
  if (m == "evaluate") return Mode::evaluate;
  if (m == "predict") return Mode::predict;
  return Mode::serve;
}

// --mode serve: the host serves any app with the Predictor capability, without the app writing any.
void serve_app(App& instance, const ConfigView& root, const HostOptions& o, const dist::WorldEnv& env,
               const ComponentEntry& app, const Config& cfg) {
  auto* predictor = query<Predictor>(instance);
  if (!predictor)
    throw UsageError("app/" + o.app + " cannot be served: it does not offer the Predictor capability",
                     "--mode",
                     "serve an app that has --mode predict, such as text_classify (see docs/serving.md)");
  if (env.world_size > 1)
    throw UsageError("--mode serve runs as one process, not under the launcher", "--mode");
  serve::run_serve(*predictor, root, {app.decl->key(), app.decl->version, cfg.to_toml()});
}

}  // namespace

int cmd_run_app(const PluginIndex& index, const HostOptions& o) {
  auto lg = log::get("host");
  const ComponentEntry& app = index.require(Kind::app, o.app);
  check_requires(index, *app.decl);

  ConfigInput in;
  in.file = o.config_file;
  in.sets = o.sets;
  if (o.threads) in.sets.emplace_back("runtime.threads", std::to_string(*o.threads), "--threads");
  if (o.log_level) in.sets.emplace_back("runtime.log_level", "\"" + *o.log_level + "\"", "--log-level");
  in.user_params = o.user_params;
  in.serving = o.mode == "serve";
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

  dist::WorldEnv env = dist::WorldEnv::from_environment();
  WorldInfo world{env.rank, env.world_size, env.local_rank, env.local_world_size};
  if (env.world_size > 1) {
    log::set_rank(env.rank);
    if (env.rank != 0) log::set_console_min_level(log::Level::warn);  // rank 0 logs info to the console
  }
  int threads = static_cast<int>(root.get_int("runtime.threads"));
  if (threads == 0)
    threads = static_cast<int>(
        std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(env.local_world_size)));
  at::set_num_threads(threads);
  lg.info("ethost ", ET_VERSION_STRING, ": app ", app.decl->key(), " ", app.decl->version, " mode ", o.mode,
          " (", app.file->path, ")");
  lg.info("threads: LibTorch intra-op ", at::get_num_threads());
  lg.info("BLAS: ", cpu::blas_summary());
  lg.info("resolved config:\n", cfg.to_toml());

  if (env.world_size > 1) {
    // Until the group is formed SIGINT/SIGTERM keep their default action (the rank ends at once): a rank
    // blocked in the rendezvous could not act on the graceful stop flag anyway.
    dist::GroupOptions go;
    go.timeout =
        std::chrono::milliseconds(static_cast<int64_t>(root.get_int("distributed.timeout_s") * 1000));
    go.rendezvous_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(rendezvous_timeout_s(root) * 1000));
    go.backend = root.get_string("distributed.backend");
    go.socket_ifname = root.get_string("distributed.socket_ifname");
    dist::set_process_group(dist::ProcessGroup::create(env, go));
  }
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  HostContext ctx(index, loader, cfg, threads, world);
  auto instance = ctx.create<App>(o.app, root);
  for (auto* f : loader.loaded())
    lg.debug("loaded plugin ", f->manifest->id, " ", f->manifest->version, " from ", f->path);
  Mode mode = parse_mode(o.mode);
  if (mode == Mode::serve) {
    serve_app(*instance, root, o, env, app, cfg);
  } else {
    // Apps with the Predictor capability are driven by the SDK's predict loop (tables -> TSV); others run it.
    // A LibTorch or C++ library error escaping the app names it (a model's names the model: HostContext).
    try {
      if (auto* predictor = mode == Mode::predict ? query<Predictor>(*instance) : nullptr)
        app::run_predict(ctx, *predictor, root);
      else
        instance->run(mode);
    } catch (...) {
      rethrow_attributed("app/" + o.app);
    }
  }
  instance.reset();
  if (auto* pg = dist::process_group()) pg->barrier();
  dist::set_process_group(nullptr);
  int sig = g_stop_signal.load();
  if (sig) throw Interrupted(sig);
  return kExitOk;
}

}  // namespace et::host
