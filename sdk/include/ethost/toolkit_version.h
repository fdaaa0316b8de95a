// toolkit_version.h: version of libethost_toolkit (nn/, app/, services, kernels) and its compatibility rule.
#pragma once

#include <string>

// The toolkit is source-stable, not layout-stable: its classes (TransformerConfig, SupervisedApp, heads)
// change as models are added. A plugin that links it records the version it was built with in its manifest
// ([build] toolkit = "M.m"); the host refuses it when the major differs or its minor is newer than the
// host's.
//  - MAJOR: any change of an existing toolkit class's layout or vtable, or a removed function.
//  - MINOR: additions only.
//  - 1.0: split from libethost_sdk (SDK ABI 3.0).
//  - 1.1: kg/ (et::kg::KnowledgeGraph: KG loaders, entity trie, subgraphs).
#define ET_TOOLKIT_MAJOR 1
#define ET_TOOLKIT_MINOR 1

namespace et {

// Empty when a plugin built with toolkit `plugin_major.plugin_minor` may run with this host's toolkit, else a
// one-line reason. A plugin that does not link the toolkit passes plugin_major < 0.
inline std::string toolkit_incompatibility(int plugin_major, int plugin_minor,
                                           int host_major = ET_TOOLKIT_MAJOR,
                                           int host_minor = ET_TOOLKIT_MINOR) {
  if (plugin_major < 0) return {};
  auto ver = [](int a, int b) { return std::to_string(a) + "." + std::to_string(b); };
  if (plugin_major != host_major || plugin_minor > host_minor)
    return "built against toolkit " + ver(plugin_major, plugin_minor) + ", host has toolkit " +
           ver(host_major, host_minor) + ": rebuild the plugin against this host's SDK";
  return {};
}

}  // namespace et
