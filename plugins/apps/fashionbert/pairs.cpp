// pairs.cpp: reading the pair TSV (header-addressed columns, CRLF tolerated, bad rows counted).
#include "pairs.h"

#include <ethost/error.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace et::apps::fashionbert {
namespace {
std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t t = line.find('\t', start);
    out.push_back(line.substr(start, t == std::string::npos ? std::string::npos : t - start));
    if (t == std::string::npos) return out;
    start = t + 1;
  }
}
}  // namespace

PairTable read_pair_table(const std::string& path, bool strict) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw DataError(
        "cannot open the pair table", path,
        "--tables takes TSV files with the columns id, image, title, masterCategory, subCategory");
  PairTable t;
  t.path = path;
  const fs::path base = fs::path(path).parent_path();
  std::string line;
  int64_t n = 0;
  auto strip_cr = [](std::string& s) {
    if (!s.empty() && s.back() == '\r') s.pop_back();
  };
  if (!std::getline(in, line)) throw DataError("the pair table is empty (no header)", path);
  ++n;
  strip_cr(line);
  t.header = split_tabs(line);
  auto col = [&](const char* name, bool required) -> int64_t {
    auto it = std::find(t.header.begin(), t.header.end(), name);
    if (it != t.header.end()) return it - t.header.begin();
    if (!required) return -1;
    std::string have;
    for (auto& h : t.header) have += (have.empty() ? "" : ", ") + h;
    throw DataError(std::string("the header has no '") + name + "' column (it has: " + have + ")",
                    path + ":1",
                    "the first line must name the columns, as fashion_product_images/pairs.tsv does");
  };
  const int64_t ci = col("id", true), cm = col("image", true), ct = col("title", true);
  const int64_t cmaster = col("masterCategory", false), csub = col("subCategory", false);
  auto bad = [&](const std::string& why) {
    std::string where = path + ":" + std::to_string(n);
    if (strict) throw DataError(why, where, "fix the row, or unset data.strict to skip bad rows");
    ++t.bad_rows;
    if (t.bad_examples.size() < 5) t.bad_examples.push_back("line " + std::to_string(n) + ": " + why);
  };
  while (std::getline(in, line)) {
    ++n;
    strip_cr(line);
    if (line.empty()) continue;
    auto f = split_tabs(line);
    if (f.size() != t.header.size()) {
      bad("has " + std::to_string(f.size()) + " fields, the header has " + std::to_string(t.header.size()));
      continue;
    }
    if (f[size_t(cm)].empty() || f[size_t(ct)].empty()) {
      bad(f[size_t(cm)].empty() ? "empty image path" : "empty title");
      continue;
    }
    fs::path img(f[size_t(cm)]);
    t.id.push_back(f[size_t(ci)]);
    t.image.push_back((img.is_absolute() ? img : base / img).string());
    t.title.push_back(f[size_t(ct)]);
    t.master.push_back(cmaster >= 0 ? f[size_t(cmaster)] : std::string());
    t.sub.push_back(csub >= 0 ? f[size_t(csub)] : std::string());
    t.line.push_back(n);
    t.extra.push_back(std::move(f));
  }
  return t;
}

}  // namespace et::apps::fashionbert
