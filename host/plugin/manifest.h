// manifest.h: the parsed plugin manifest (plugin.toml + the generated [build] table).
#pragma once

#include <string>
#include <vector>

#include "ethost/config.h"
#include "ethost/kinds.h"
#include "ethost/version.h"

namespace et::host {

struct ComponentDecl {
  Kind kind = Kind::app;
  std::string name;
  std::string version;
  std::string description;
  std::vector<std::string> requires_;
  std::vector<std::string> services;  // SDK services whose keys it takes (ethost/services.h)
  std::vector<ConfigKeySpec> config;  // sorted by key
  Config defaults;                    // defaults of every key that has one, origin "defaults of kind/name"
  std::string alias_of;               // non-empty: another name of that component (manifest `aliases`)

  std::string key() const { return std::string(kind_name(kind)) + "/" + name; }
};

struct Manifest {
  std::string id;
  std::string version;
  std::string license;
  std::string description;
  AbiStamp build;
  bool has_build = false;
  int toolkit_major = -1;  // [build] toolkit = "M.m" when the plugin links libethost_toolkit; -1: it does not
  int toolkit_minor = -1;
  std::string compiler;
  std::vector<ComponentDecl> provides;
};

// Parses a manifest; throws et::PluginError("<file>: manifest: ...") on malformed text.
Manifest parse_manifest(const std::string& text, const std::string& file);

}  // namespace et::host
