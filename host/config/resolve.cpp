// resolve.cpp: config resolution and validation for a run (see resolve.h).
#include "resolve.h"

#include <algorithm>

#include "ethost/error.h"

namespace et::host {
namespace {

struct Section {
  std::string prefix;           // e.g. "model"
  const ComponentEntry* entry;  // the component selected there
};

std::string parent_key(const std::string& key) {
  auto pos = key.rfind('.');
  return pos == std::string::npos ? std::string() : key.substr(0, pos);
}

std::string last_segment(const std::string& key) {
  auto pos = key.rfind('.');
  return pos == std::string::npos ? key : key.substr(pos + 1);
}

Config runtime_defaults() {
  Config c;
  for (auto& s : runtime_specs())
    if (!s.default_toml.empty()) c.set_from_text(s.key, s.default_toml, "defaults of the host");
  return c;
}

}  // namespace

const std::vector<ConfigKeySpec>& runtime_specs() {
  static const std::vector<ConfigKeySpec> specs = [] {
    std::vector<ConfigKeySpec> v;
    ConfigKeySpec threads;
    threads.key = "runtime.threads";
    threads.type = "int";
    threads.default_toml = "0";
    threads.min = 0;
    threads.doc = "LibTorch intra-op threads (0 = all cores); --threads sets it";
    v.push_back(threads);
    ConfigKeySpec level;
    level.key = "runtime.log_level";
    level.type = "string";
    level.default_toml = "\"info\"";
    level.choices = {"trace", "debug", "info", "warn", "error", "off"};
    level.doc = "console log level; --log-level sets it";
    v.push_back(level);
    auto add = [&](const char* key, const char* type, const char* def, const char* doc,
                   std::vector<std::string> choices = {}) {
      ConfigKeySpec s;
      s.key = key;
      s.type = type;
      s.default_toml = def;
      s.doc = doc;
      s.choices = std::move(choices);
      v.push_back(s);
    };
    add("distributed.backend", "string", "\"auto\"",
        "c10d backend: auto (gloo on CPU, nccl for CUDA), gloo, nccl", {"auto", "gloo", "nccl"});
    add("distributed.timeout_s", "int", "600",
        "a collective that does not finish in this many seconds fails");
    add("distributed.bucket_mb", "float", "25.0", "data parallel: gradient bucket size for the all-reduce");
    add("distributed.rendezvous_timeout_s", "int", "300",
        "a rank that waits longer for the store or the other ranks fails, naming the ones that never arrived "
        "(the launcher's --rendezvous_timeout overrides it)");
    add("distributed.socket_ifname", "string", "\"\"",
        "network interface(s) the ranks advertise, comma-separated (GLOO_SOCKET_IFNAME wins); empty: the "
        "interface that routes to MASTER_ADDR");
    return v;
  }();
  return specs;
}

Config resolve_config(const PluginIndex& index, const ComponentEntry& app, const ConfigInput& input) {
  const ComponentDecl& decl = *app.decl;
  Config user = input.file.empty() ? Config() : Config::from_file(input.file);
  for (auto& [key, text, source] : input.sets) user.set_from_text(key, text, source);

  Config cfg;
  cfg.merge_from(decl.defaults);
  cfg.merge_from(runtime_defaults());
  cfg.merge_from(user);

  // Components selected by the app's config (keys of type "component"), with their defaults.
  std::vector<Section> sections;
  for (auto& s : decl.config) {
    if (s.type != "component") continue;
    ConfigView v = cfg.view();
    if (!v.has(s.key)) continue;
    std::string name = v.get_string(s.key);
    Kind kind = *parse_kind(s.component_kind);
    const ComponentEntry* comp = index.find(kind, name);
    if (!comp) {
      try {
        index.require(kind, name, decl.key());
      } catch (const PluginError& e) {
        std::string where = v.where(s.key);
        throw PluginError(
            e.bare_what() + " (config key " + s.key + (where.empty() ? "" : " from " + where) + ")", "",
            e.hint());
      }
    }
    std::string prefix = parent_key(s.key);
    if (prefix.empty())
      throw PluginError(
          decl.key() + ": component key '" + s.key + "' must be inside a section (e.g. model.name)",
          app.file->path);
    cfg.merge_defaults(comp->decl->defaults, prefix);
    sections.push_back({prefix, comp});
  }

  // --user_defined_parameters: bare names resolve to the unique known key with that last segment.
  for (auto& [k, text] : input.user_params) {
    std::string key = k;
    if (k.find('.') == std::string::npos) {
      std::vector<std::string> matches;
      // Keys whose choices list this value: EasyNLP spells several switches `type` (type=pet_fewshot,
      // type=vanilla_kd), and the value tells which one is meant.
      std::vector<std::string> by_value;
      auto consider = [&](const ConfigKeySpec& s, const std::string& full) {
        if (last_segment(s.key) != k) return;
        matches.push_back(full);
        if (std::find(s.choices.begin(), s.choices.end(), text) != s.choices.end()) by_value.push_back(full);
      };
      for (auto& s : decl.config) consider(s, s.key);
      for (auto& sec : sections)
        for (auto& s : sec.entry->decl->config) consider(s, sec.prefix + "." + s.key);
      std::sort(matches.begin(), matches.end());
      matches.erase(std::unique(matches.begin(), matches.end()), matches.end());
      std::sort(by_value.begin(), by_value.end());
      by_value.erase(std::unique(by_value.begin(), by_value.end()), by_value.end());
      if (matches.size() > 1 && by_value.size() == 1) matches = by_value;
      if (matches.empty())
        throw ConfigError("unknown parameter '" + k + "'", "--user_defined_parameters",
                          "use a key listed by `ethost --describe " + decl.key() + "`, or a full dotted key");
      if (matches.size() > 1)
        throw ConfigError("parameter '" + k + "' is ambiguous: " + matches[0] + " or " + matches[1],
                          "--user_defined_parameters", "use the full dotted key");
      key = matches[0];
    }
    // EasyNLP's parameters are Python literals: True / False are booleans there.
    const std::string value = text == "True" ? "true" : text == "False" ? "false" : text;
    cfg.set_from_text(key, value, "--user_defined_parameters");
  }

  std::vector<ConfigKeySpec> top = decl.config;
  for (const auto& s : runtime_specs()) top.push_back(s);
  // Relative paths the config file gives name files beside it; --set and flags stay relative to the
  // current directory.
  resolve_config_paths(cfg, top);
  for (auto& sec : sections) resolve_config_paths(cfg, sec.entry->decl->config, sec.prefix);

  // Validate: app keys (+ [runtime]) at the top, each component section against its own schema.
  std::vector<std::string> owned;
  for (auto& sec : sections) owned.push_back(sec.prefix);
  validate_config(cfg.view(), top, owned, decl.key());
  for (auto& sec : sections) {
    std::vector<ConfigKeySpec> specs = sec.entry->decl->config;
    if (input.serving && sec.entry->decl->kind == Kind::reader)
      for (auto& s : specs) s.required = false;
    for (auto& s : decl.config) {
      if (s.key.rfind(sec.prefix + ".", 0) == 0) {
        ConfigKeySpec c = s;
        c.key = s.key.substr(sec.prefix.size() + 1);
        specs.push_back(c);
      }
    }
    validate_config(cfg.view(sec.prefix), specs, {},
                    sec.entry->decl->key() + " (section [" + sec.prefix + "])");
  }
  return cfg;
}

}  // namespace et::host
