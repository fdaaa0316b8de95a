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

}  // namespace

ElfInfo read_elf(const std::string& path) {
  ElfInfo info;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    info.error = std::string("cannot open: ") + std::strerror(errno);
    return info;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    info.error = "not a regular file";
    return info;
  }
  Mapping m;
  m.size = static_cast<size_t>(st.st_size);
  if (m.size < sizeof(Elf64_Ehdr)) {
    ::close(fd);
    info.error = "not an ELF file (too small)";
    return info;
  }
  void* p = mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    info.error = std::string("cannot map: ") + std::strerror(errno);
    return info;
  }
  m.data = static_cast<const unsigned char*>(p);

  Elf64_Ehdr eh;
  std::memcpy(&eh, m.data, sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    info.error = "not an ELF file";
    return info;
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    info.error = "not a 64-bit little-endian ELF file";
    return info;
  }
  if (eh.e_type != ET_DYN) {
    info.error = "ELF file is not a shared object";
    return info;
  }
  if (eh.e_machine != EM_X86_64) {
    info.error = "ELF shared object for another machine (e_machine " + std::to_string(eh.e_machine) + ")";
    return info;
  }
  if (eh.e_shentsize != sizeof(Elf64_Shdr) ||
      !m.in_range(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr)) ||
      eh.e_shstrndx >= eh.e_shnum) {
    info.error = "corrupt ELF section header table";
    return info;
  }
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), m.data + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  auto section_ok = [&](const Elf64_Shdr& s) {
    return s.sh_type == SHT_NOBITS || m.in_range(s.sh_offset, s.sh_size);
  };
  const Elf64_Shdr& shstr = sh[eh.e_shstrndx];
  if (!section_ok(shstr)) {
    info.error = "corrupt ELF section name table";
    return info;
  }
  auto str_at = [&](const Elf64_Shdr& strtab, uint64_t off) -> std::string {
    if (off >= strtab.sh_size) return {};
    const char* s = reinterpret_cast<const char*>(m.data + strtab.sh_offset + off);
    size_t maxlen = strtab.sh_size - off;
    return std::string(s, strnlen(s, maxlen));
  };
  info.is_elf = true;

  for (const auto& s : sh) {
    if (!section_ok(s)) continue;
    std::string name = str_at(shstr, s.sh_name);
    if (name == ETHOST_MANIFEST_SECTION && s.sh_type != SHT_NOBITS) {
      const char* txt = reinterpret_cast<const char*>(m.data + s.sh_offset);
      info.manifest = std::string(txt, strnlen(txt, s.sh_size));
    } else if (s.sh_type == SHT_DYNAMIC && s.sh_link < sh.size() && section_ok(sh[s.sh_link])) {
      const Elf64_Shdr& strtab = sh[s.sh_link];
      size_t n = s.sh_size / sizeof(Elf64_Dyn);
      for (size_t i = 0; i < n; ++i) {
        Elf64_Dyn d;
        std::memcpy(&d, m.data + s.sh_offset + i * sizeof(Elf64_Dyn), sizeof d);
        if (d.d_tag == DT_NULL) break;
        if (d.d_tag == DT_NEEDED) info.needed.push_back(str_at(strtab, d.d_un.d_val));
      }
    } else if (s.sh_type == SHT_DYNSYM && s.sh_link < sh.size() && section_ok(sh[s.sh_link])) {
      const Elf64_Shdr& strtab = sh[s.sh_link];
      size_t n = s.sh_size / sizeof(Elf64_Sym);
      for (size_t i = 1; i < n; ++i) {
        Elf64_Sym sym;
        std::memcpy(&sym, m.data + s.sh_offset + i * sizeof(Elf64_Sym), sizeof sym);
        if (sym.st_shndx == SHN_UNDEF) continue;
        unsigned bind = ELF64_ST_BIND(sym.st_info);
        if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
        unsigned vis = ELF64_ST_VISIBILITY(sym.st_other);
        if (vis != STV_DEFAULT && vis != STV_PROTECTED) continue;
        info.dynamic_symbols.push_back(str_at(strtab, sym.st_name));
      }
    }
  }
  return info;
}

}  // namespace et::host
