// manifest.cpp: parses and checks a plugin manifest with toml++ (no plugin code runs).
#include "manifest.h"

#include <toml++/toml.h>

#include <algorithm>
#include <sstream>

#include "ethost/error.h"
#include "ethost/services.h"

namespace et::host {
namespace {

const std::vector<std::string> kTypes = {"string",   "int",        "float",       "bool",      "string_list",
                                         "int_list", "float_list", "table",       "component", "any",
                                         "path",     "path_list",  "list_or_file"};

std::string render(const toml::node& n) {
  std::ostringstream os;
  n.visit([&](auto&& v) { os << v; });
  return os.str();
}

bool parse_version_pair(const std::string& s, int& a, int& b) {
  char dot = 0;
  std::istringstream is(s);
  return static_cast<bool>(is >> a >> dot >> b) && dot == '.';
}

PluginError manifest_error(const std::string& file, const std::string& why) {
  return PluginError("manifest: " + why, file, "fix the plugin's plugin.toml and rebuild it");
}

// One [provides.config.<key>] table: type, doc, bounds, choices, and the default (also set in c.defaults).
ConfigKeySpec parse_config_spec(ComponentDecl& c, const std::string& key, const toml::node& spec_node,
                                const std::string& file) {
  auto* spec = spec_node.as_table();
  if (!spec)
    throw manifest_error(
        file, c.key() + " config key '" + key + "' must be a table {type=..., default=..., doc=...}");
  ConfigKeySpec s;
  s.key = key;
  s.type = (*spec)["type"].value_or(std::string("string"));
  if (std::find(kTypes.begin(), kTypes.end(), s.type) == kTypes.end())
    throw manifest_error(file, c.key() + " config key '" + key + "' has unknown type '" + s.type + "'");
  s.doc = (*spec)["doc"].value_or(std::string());
  s.required = (*spec)["required"].value_or(false);
  if (auto v = (*spec)["min"].value<double>()) s.min = *v;
  if (auto v = (*spec)["max"].value<double>()) s.max = *v;
  if (auto* ch = (*spec)["choices"].as_array())
    for (auto& e : *ch) s.choices.push_back(e.value_or(std::string()));
  s.component_kind = (*spec)["kind"].value_or(std::string());
  if (s.type == "component" && !parse_kind(s.component_kind))
    throw manifest_error(
        file, c.key() + " config key '" + key + "': type component needs kind = app|model|optimizer|reader");
  if (const toml::node* d = spec->get("default")) {
    s.default_toml = render(*d);
    c.defaults.set_from_text(key, s.default_toml, "defaults of " + c.key());
  }
  return s;
}

// SDK services whose config keys the component takes over (defined once, in the SDK); the component's own
// declaration of a key wins.
void add_service_keys(ComponentDecl& c, const toml::array& services, const std::string& file) {
  for (auto& sv : services) {
    std::string name = sv.value_or(std::string());
    const std::vector<ConfigKeySpec>* specs = service_config_specs(name);
    if (!specs) {
      std::string known;
      for (auto& n : service_names()) known += (known.empty() ? "" : ", ") + n;
      throw manifest_error(file, c.key() + " uses unknown SDK service '" + name + "' (known: " + known + ")");
    }
    for (const auto& s : *specs) {
      bool declared = std::any_of(c.config.begin(), c.config.end(),
                                  [&](const ConfigKeySpec& own) { return own.key == s.key; });
      if (declared) continue;  // the component declares its own default for this key
      if (!s.default_toml.empty())
        c.defaults.set_from_text(s.key, s.default_toml, "defaults of the " + name + " service");
      c.config.push_back(s);
    }
    c.services.push_back(name);
  }
}

// One [[provides]] entry: kind, name, version, requires, its config keys and the services' keys, sorted.
ComponentDecl parse_component(const toml::table& p, const std::string& plugin_version,
                              const std::string& file) {
  ComponentDecl c;
  std::string kind = p["kind"].value_or(std::string());
  auto k = parse_kind(kind);
  if (!k)
    throw manifest_error(file, "unknown component kind '" + kind + "' (use app, model, optimizer or reader)");
  c.kind = *k;
  c.name = p["name"].value_or(std::string());
  if (c.name.empty()) throw manifest_error(file, "a [[provides]] entry has no name");
  c.version = p["version"].value_or(plugin_version);
  c.description = p["description"].value_or(std::string());
  if (auto* req = p["requires"].as_array())
    for (auto& r : *req) c.requires_.push_back(r.value_or(std::string()));
  if (auto* cfg = p["config"].as_table())
    for (auto&& [key, spec_node] : *cfg)
      c.config.push_back(parse_config_spec(c, std::string(key.str()), spec_node, file));
  if (auto* services = p["services"].as_array()) add_service_keys(c, *services, file);
  std::sort(c.config.begin(), c.config.end(),
            [](const ConfigKeySpec& a, const ConfigKeySpec& b) { return a.key < b.key; });
  return c;
}

// `aliases = ["language_modeling"]`: the same component under other names (EasyNLP's app names); the plugin
// registers its factory under each.
std::vector<ComponentDecl> component_aliases(const toml::table& p, const ComponentDecl& c,
                                             const std::string& file) {
  std::vector<ComponentDecl> aliases;
  if (auto* names = p["aliases"].as_array())
    for (auto& a : *names) {
      ComponentDecl alias = c;
      alias.name = a.value_or(std::string());
      if (alias.name.empty() || alias.name == c.name)
        throw manifest_error(file,
                             c.key() + ": aliases must be non-empty names other than the component's own");
      alias.alias_of = c.key();
      alias.description = "alias of " + c.key() + ": " + c.description;
      aliases.push_back(std::move(alias));
    }
  return aliases;
}

}  // namespace

Manifest parse_manifest(const std::string& text, const std::string& file) {
  auto fail = [&](const std::string& why) { return manifest_error(file, why); };
  toml::table root;
  try {
    root = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw fail("TOML syntax error at line " + std::to_string(e.source().begin.line) + ": " +
               std::string(e.description()));
  }
  Manifest m;
  auto* plugin = root["plugin"].as_table();
  if (!plugin) throw fail("missing [plugin] table");
  m.id = (*plugin)["id"].value_or(std::string());
  m.version = (*plugin)["version"].value_or(std::string());
  m.license = (*plugin)["license"].value_or(std::string());
  m.description = (*plugin)["description"].value_or(std::string());
  if (m.id.empty() || m.version.empty()) throw fail("[plugin] needs id and version");

  if (auto* b = root["build"].as_table()) {
    m.has_build = true;
    std::string abi = (*b)["sdk_abi"].value_or(std::string());
    std::string torch = (*b)["torch"].value_or(std::string());
    if (!parse_version_pair(abi, m.build.abi_major, m.build.abi_minor))
      throw fail("[build] sdk_abi must be \"<major>.<minor>\", got \"" + abi + "\"");
    if (!parse_version_pair(torch, m.build.torch_major, m.build.torch_minor))
      throw fail("[build] torch must be \"<major>.<minor>\", got \"" + torch + "\"");
    m.build.cxx11_abi = static_cast<int>((*b)["cxx11_abi"].value_or(int64_t(-1)));
    m.compiler = (*b)["compiler"].value_or(std::string());
    if (auto tk = (*b)["toolkit"].value<std::string>();
        tk && !parse_version_pair(*tk, m.toolkit_major, m.toolkit_minor))
      throw fail("[build] toolkit must be \"<major>.<minor>\", got \"" + *tk + "\"");
  }

  auto* provides = root["provides"].as_array();
  if (!provides || provides->empty()) throw fail("no [[provides]] entries");
  for (auto& node : *provides) {
    auto* p = node.as_table();
    if (!p) throw fail("[[provides]] entries must be tables");
    ComponentDecl c = parse_component(*p, m.version, file);
    std::vector<ComponentDecl> aliases = component_aliases(*p, c, file);
    m.provides.push_back(std::move(c));
    for (auto& a : aliases) m.provides.push_back(std::move(a));
  }
  return m;
}

}  // namespace et::host
