// elf_reader.cpp: a bounded Elf64 reader over <elf.h> (section headers, .dynamic, .dynsym), in the spirit of
// Qt's qelfparser: every offset is checked against the file size, so garbage input is reported, never a crash.
#include "elf_reader.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "ethost/plugin_abi.h"

namespace et::host {
namespace {

struct Mapping {
  const unsigned char* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data) munmap(const_cast<unsigned char*>(data), size);
  }
  bool in_range(uint64_t off, uint64_t len) const { return off <= size && len <= size - off; }
};

bool section_ok(const Mapping& m, const Elf64_Shdr& s) {
  return s.sh_type == SHT_NOBITS || m.in_range(s.sh_offset, s.sh_size);
}

// The NUL-terminated string at off in a string table section (cut at the section's end).
std::string str_at(const Mapping& m, const Elf64_Shdr& strtab, uint64_t off) {
  if (off >= strtab.sh_size) return {};
  const char* s = reinterpret_cast<const char*>(m.data + strtab.sh_offset + off);
  size_t maxlen = strtab.sh_size - off;
  return std::string(s, strnlen(s, maxlen));
}

// Maps the whole file read-only; an error message, or "" on success.
std::string map_file(const std::string& path, Mapping& m) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("cannot open: ") + std::strerror(errno);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return "not a regular file";
  }
  m.size = static_cast<size_t>(st.st_size);
  if (m.size < sizeof(Elf64_Ehdr)) {
    ::close(fd);
    return "not an ELF file (too small)";
  }
  void* p = mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return std::string("cannot map: ") + std::strerror(errno);
  m.data = static_cast<const unsigned char*>(p);
  return {};
}

// What is wrong with the ELF header for a plugin (an x86-64 little-endian shared object), or "".
std::string check_header(const Elf64_Ehdr& eh, const Mapping& m) {
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file";
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return "not a 64-bit little-endian ELF file";
  if (eh.e_type != ET_DYN) return "ELF file is not a shared object";
  if (eh.e_machine != EM_X86_64)
    return "ELF shared object for another machine (e_machine " + std::to_string(eh.e_machine) + ")";
  if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
      !m.in_range(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr)) || eh.e_shstrndx >= eh.e_shnum)
    return "corrupt ELF section header table";
  return {};
}

// DT_NEEDED entries of a .dynamic section (up to DT_NULL).
void read_needed(const Mapping& m, const Elf64_Shdr& s, const Elf64_Shdr& strtab, ElfInfo& info) {
  size_t n = s.sh_size / sizeof(Elf64_Dyn);
  for (size_t i = 0; i < n; ++i) {
    Elf64_Dyn d;
    std::memcpy(&d, m.data + s.sh_offset + i * sizeof(Elf64_Dyn), sizeof d);
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_NEEDED) info.needed.push_back(str_at(m, strtab, d.d_un.d_val));
  }
}

// Defined global/weak symbols of default or protected visibility in a .dynsym section.
void read_exported_symbols(const Mapping& m, const Elf64_Shdr& s, const Elf64_Shdr& strtab, ElfInfo& info) {
  size_t n = s.sh_size / sizeof(Elf64_Sym);
  for (size_t i = 1; i < n; ++i) {
    Elf64_Sym sym;
    std::memcpy(&sym, m.data + s.sh_offset + i * sizeof(Elf64_Sym), sizeof sym);
    if (sym.st_shndx == SHN_UNDEF) continue;
    unsigned bind = ELF64_ST_BIND(sym.st_info);
    if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
    unsigned vis = ELF64_ST_VISIBILITY(sym.st_other);
    if (vis != STV_DEFAULT && vis != STV_PROTECTED) continue;
    info.dynamic_symbols.push_back(str_at(m, strtab, sym.st_name));
  }
}

}  // namespace

ElfInfo read_elf(const std::string& path) {
  ElfInfo info;
  Mapping m;
  info.error = map_file(path, m);
  if (!info.error.empty()) return info;

  Elf64_Ehdr eh;
  std::memcpy(&eh, m.data, sizeof eh);
  info.error = check_header(eh, m);
  if (!info.error.empty()) return info;
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), m.data + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  const Elf64_Shdr& shstr = sh[eh.e_shstrndx];
  if (!section_ok(m, shstr)) {
    info.error = "corrupt ELF section name table";
    return info;
  }
  info.is_elf = true;

  for (const auto& s : sh) {
    if (!section_ok(m, s)) continue;
    std::string name = str_at(m, shstr, s.sh_name);
    const bool linked = s.sh_link < sh.size() && section_ok(m, sh[s.sh_link]);
    if (name == ETHOST_MANIFEST_SECTION && s.sh_type != SHT_NOBITS) {
      const char* txt = reinterpret_cast<const char*>(m.data + s.sh_offset);
      info.manifest = std::string(txt, strnlen(txt, s.sh_size));
    } else if (s.sh_type == SHT_DYNAMIC && linked) {
      read_needed(m, s, sh[s.sh_link], info);
    } else if (s.sh_type == SHT_DYNSYM && linked) {
      read_exported_symbols(m, s, sh[s.sh_link], info);
    }
  }
  return info;
}

}  // namespace et::host
