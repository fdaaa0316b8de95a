/* plugin_abi.h: the frozen C entry contract between the ethost host and a plugin library (append-only). */
#ifndef ETHOST_PLUGIN_ABI_H
#define ETHOST_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The host reads the prefix of this struct that it knows; new fields are only ever appended. */
typedef struct ethost_plugin_descriptor {
  uint32_t struct_size; /* sizeof(ethost_plugin_descriptor) as the plugin was built */
  uint16_t abi_major;   /* SDK ABI the plugin was built against */
  uint16_t abi_minor;
  uint16_t torch_major; /* LibTorch major.minor (never the patch) */
  uint16_t torch_minor;
  uint8_t cxx11_abi; /* value of _GLIBCXX_USE_CXX11_ABI */
  uint8_t reserved[7];
  const char* compiler;       /* e.g. "g++ 12.2.0" */
  const char* plugin_id;      /* e.g. "modelzoo.bert" */
  const char* plugin_version; /* semver of the plugin library */
  const char* manifest_toml;  /* the same text as the .ethost.manifest section */
  /* Registers the plugin's components into an et::Registrar. Returns 0 on success; on failure writes a
   * NUL-terminated reason into err (at most n bytes) and returns non-zero. Never throws. */
  int (*register_components)(void* registrar, char* err, size_t n);
} ethost_plugin_descriptor;

/* The entry symbol carries the ABI major in its name: a host for ABI 1 looks up exactly this name. */
#define ETHOST_PLUGIN_ENTRY_SYMBOL "ethost_plugin_v3"
#define ETHOST_PLUGIN_ENTRY_PREFIX "ethost_plugin_v"
#define ETHOST_MANIFEST_SECTION ".ethost.manifest"

typedef const ethost_plugin_descriptor* (*ethost_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* ETHOST_PLUGIN_ABI_H */
