// docs_paths_test.cpp: every repository path a Markdown file quotes exists — backquoted paths under a
// top-level folder of the repository (in code spans and fenced blocks) and relative links — so docs cannot
// cite gone files.
//
// A quoted path counts as existing relative to the repository root or to the Markdown file's folder. Not
// checked: paths with placeholders (`<name>`, `*`, `{h,cpp}`, `$VAR`, `...`), outputs outside the listed
// folders (`runs/`, `build/`), URLs, and lines that carry the comment <!-- docs-paths: skip --> (a path of
// another repository or archive that happens to start like one of ours).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

// The repository's top-level folders: a backquoted token starting with one of them is a repository path.
const std::vector<std::string> kTopLevel = {"bench", "cmake",   "configs", "data",    "docs", "examples",
                                            "host",  "kernels", "plugins", "scripts", "sdk",  "tests"};
const char* const kSkipMarker = "<!-- docs-paths: skip -->";

struct Quoted {
  int line = 0;
  std::string path;
  bool link = false;  // a Markdown link target (resolved against the file's folder only)
};

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// A token of a code span or fenced line, reduced to the repository path it names; empty when it names none.
std::string repo_path(std::string t) {
  if (t.find("...") != std::string::npos || t.find("\xE2\x80\xA6") != std::string::npos) return {};  // "…"
  while (!t.empty() && std::string(".:;!").find(t.back()) != std::string::npos) t.pop_back();
  auto colon = t.rfind(':');  // file.cpp:42 or file.cpp:42-50
  if (colon != std::string::npos && colon + 1 < t.size() &&
      t.find_first_not_of("0123456789-", colon + 1) == std::string::npos)
    t.resize(colon);
  if (starts_with(t, "./")) t = t.substr(2);
  auto slash = t.find('/');
  if (slash == std::string::npos) return {};
  if (std::find(kTopLevel.begin(), kTopLevel.end(), t.substr(0, slash)) == kTopLevel.end()) return {};
  if (t.find_first_of("*?<>{}$[]|%") != std::string::npos) return {};
  return t;
}

void add_tokens(const std::string& text, int line, std::vector<Quoted>& out) {
  std::string tok;
  auto flush = [&] {
    auto p = repo_path(tok);
    if (!p.empty()) out.push_back({line, p, false});
    tok.clear();
  };
  for (char c : text) {
    if (std::string(" \t=\"'\\,();`").find(c) != std::string::npos)
      flush();
    else
      tok += c;
  }
  flush();
}

// The link targets of one line (code spans already blanked out), without #anchors; URLs left out.
void add_links(const std::string& text, int line, std::vector<Quoted>& out) {
  for (size_t at = text.find("]("); at != std::string::npos; at = text.find("](", at + 2)) {
    size_t b = at + 2, e = text.find_first_of(") \t", b);
    if (e == std::string::npos) continue;
    std::string t = text.substr(b, e - b);
    t = t.substr(0, t.find_first_of("#?"));
    auto colon = t.find(':');
    bool url = colon != std::string::npos && t.find('/') > colon;  // http:, mailto:, ...
    if (t.empty() || url || t.find_first_of("<>{}$") != std::string::npos) continue;
    out.push_back({line, t, true});
  }
}

// Every repository path quoted in a Markdown text, with its line.
std::vector<Quoted> quoted_paths(const std::string& markdown) {
  std::vector<Quoted> out;
  std::istringstream in(markdown);
  std::string line;
  bool fenced = false;
  for (int n = 1; std::getline(in, line); ++n) {
    auto first = line.find_first_not_of(" \t");
    std::string lead = first == std::string::npos ? "" : line.substr(first, 3);
    if (lead == "```" || lead == "~~~") {
      fenced = !fenced;
      continue;
    }
    if (line.find(kSkipMarker) != std::string::npos) continue;
    if (fenced) {
      add_tokens(line, n, out);
      continue;
    }
    std::string rest;  // the line with its code spans blanked, for the links
    for (size_t i = 0; i < line.size();) {
      if (line[i] != '`') {
        rest += line[i++];
        continue;
      }
      size_t run = line.find_first_not_of('`', i) - i;
      if (i + run > line.size()) run = line.size() - i;
      size_t close = line.find(std::string(run, '`'), i + run);
      if (close == std::string::npos) {
        rest += line.substr(i);
        break;
      }
      add_tokens(line.substr(i + run, close - i - run), n, out);
      rest += std::string(close + run - i, ' ');
      i = close + run;
    }
    add_links(rest, n, out);
  }
  return out;
}

bool skipped_dir(const fs::path& dir) {
  std::string name = dir.filename().string();
  for (const char* p :
       {"build", ".git", "out", "runs", ".cache", "third_party", "node_modules", "__pycache__"})
    if (starts_with(name, p)) return true;
  return fs::exists(dir / "CMakeCache.txt");  // a build tree by any other name
}

std::vector<fs::path> markdown_files(const fs::path& root) {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_symlink()) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory()) {
      if (skipped_dir(it->path())) it.disable_recursion_pending();
    } else if (it->path().extension() == ".md") {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool exists_for(const fs::path& root, const fs::path& md, const Quoted& q) {
  if (q.link) return fs::exists(q.path[0] == '/' ? root / q.path.substr(1) : md.parent_path() / q.path);
  return fs::exists(root / q.path) || fs::exists(md.parent_path() / q.path);
}

std::string read_all(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> paths_of(const std::string& md) {
  std::vector<std::string> out;
  for (auto& q : quoted_paths(md)) out.push_back((q.link ? "link:" : "") + q.path);
  return out;
}

}  // namespace

TEST_SUITE("unit.docs_paths") {
  TEST_CASE("the scanner finds backquoted repository paths, fenced commands and relative links") {
    CHECK(paths_of("see `plugins/readers/tsv/README.md`, `sdk/src/config.cpp:42` and `docs/` here") ==
          std::vector<std::string>{"plugins/readers/tsv/README.md", "sdk/src/config.cpp", "docs/"});
    CHECK(paths_of("run `./scripts/quickstart.sh --config configs/x.toml,configs/y.toml`") ==
          std::vector<std::string>{"scripts/quickstart.sh", "configs/x.toml", "configs/y.toml"});
    CHECK(paths_of("```bash\nethost --set a=\\\"tests/fixtures/tiny_bert\\\"\n```\n") ==
          std::vector<std::string>{"tests/fixtures/tiny_bert"});
    CHECK(paths_of("[serving](../serving.md#endpoints) and [x](https://example.com/a/b) [top](/README.md)") ==
          std::vector<std::string>{"link:../serving.md", "link:/README.md"});
  }

  TEST_CASE("the scanner leaves placeholders, outputs, URLs, code-span links and skipped lines alone") {
    CHECK(
        paths_of("`plugins/<kind>s/<name>/`, `pairs.{h,cpp}`, `docs/*.md`, `$ROOT/x`, `tests/...`").empty());
    CHECK(paths_of("`runs/quickstart/`, `build/bin/ethost`, `http://localhost:8000/predict`").empty());
    CHECK(paths_of("`set_window_encoder([this](const Row& r) {...})`").empty());
    CHECK(paths_of("`storage record 'data/3' is missing` <!-- docs-paths: skip -->").empty());
    CHECK(paths_of("```\n````\n").empty());
  }

  TEST_CASE("every repository path quoted in the repository's Markdown files exists") {
    fs::path root = ETHOST_SOURCE_DIR;
    auto files = markdown_files(root);
    REQUIRE(files.size() > 10);  // the walk found the docs
    size_t checked = 0;
    for (auto& md : files) {
      for (auto& q : quoted_paths(read_all(md))) {
        ++checked;
        if (exists_for(root, md, q)) continue;
        std::string what =
            q.link ? "link `" + q.path + "` does not exist (relative to the file's folder)"
                   : "`" + q.path + "` does not exist (relative to the repository root or the file's folder)";
        std::string where = fs::relative(md, root).string() + ":" + std::to_string(q.line) + ": ";
        FAIL_CHECK(where << what);
      }
    }
    CHECK(checked > 100);
  }
}
