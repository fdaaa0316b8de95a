// elf_reader.h: reads a plugin's manifest section, DT_NEEDED entries and dynamic symbol names without loading it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace et::host {

struct ElfInfo {
  bool is_elf = false;          // a readable 64-bit little-endian ELF shared object
  std::string error;            // why not (when !is_elf)
  std::optional<std::string> manifest;  // contents of the .ethost.manifest section (NUL-terminated text)
  std::vector<std::string> needed;      // DT_NEEDED sonames
  std::vector<std::string> dynamic_symbols;  // defined, exported dynamic symbol names
};

// Never throws; every failure (unreadable, not ELF, truncated, bad offsets) is reported in ElfInfo::error.
ElfInfo read_elf(const std::string& path);

}  // namespace et::host
