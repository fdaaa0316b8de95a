// segment_cmd.cpp: `ethost segment` — one line of space-separated words per stdin line (jieba cut, HMM off).
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli_internal.h"
#include "ethost/error.h"
#include "ethost/text/segmenter.h"

namespace po = boost::program_options;

namespace et::host {
namespace {

// Python's str.isspace() code points (what jieba users filter with), for the BMP.
bool is_space_cp(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

// True when every character of the (valid UTF-8) token is whitespace.
bool all_space(std::string_view w) {
  const auto* s = reinterpret_cast<const unsigned char*>(w.data());
  for (std::size_t i = 0; i < w.size();) {
    char32_t c;
    if (s[i] < 0x80) {
      c = s[i++];
    } else if ((s[i] & 0xE0) == 0xC0 && i + 1 < w.size()) {
      c = (char32_t(s[i] & 0x1F) << 6) | (s[i + 1] & 0x3F);
      i += 2;
    } else if ((s[i] & 0xF0) == 0xE0 && i + 2 < w.size()) {
      c = (char32_t(s[i] & 0x0F) << 12) | (char32_t(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
      i += 3;
    } else {
      return false;
    }
    if (!is_space_cp(c)) return false;
  }
  return !w.empty();
}

}  // namespace

int cmd_segment(int argc, const char* const* argv) {
  std::string dict;
  std::string delimiter = " ";
  bool help = false, stats = false, keep_space = false;
  po::options_description d("ethost segment options");
  // clang-format off
  d.add_options()
      ("help,h", po::bool_switch(&help), "show this help")
      ("dict", po::value(&dict), "jieba dictionary (default: $ETHOST_JIEBA_DICT, else Debian's python3-jieba dict.txt)")
      ("delimiter,d", po::value(&delimiter), "between words (default: one space)")
      ("keep-space", po::bool_switch(&keep_space), "also print whitespace tokens (jieba yields them)")
      ("stats", po::bool_switch(&stats), "print bytes, seconds and MB/s (dictionary load excluded) to stderr");
  // clang-format on
  parse_subcommand(argc, argv, d, "ethost segment");
  if (help) {
    std::cout << "Usage: ethost segment [--dict dict.txt] < lines\n"
                 "Prints the words of each input line, as jieba's cut(HMM=False) (see docs/segmenter.md).\n"
              << d;
    return kExitOk;
  }
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  const text::Segmenter seg =
      text::Segmenter::from_file(dict.empty() ? text::Segmenter::default_dict_path() : dict);
  const double load_s = std::chrono::duration<double>(Clock::now() - t0).count();

  std::ios::sync_with_stdio(false);
  std::string line, out;
  std::vector<std::string_view> words;
  std::size_t bytes = 0, lines = 0;
  double cut_s = 0;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ++lines;
    bytes += line.size();
    words.clear();
    auto c0 = Clock::now();
    seg.cut(line, words);
    cut_s += std::chrono::duration<double>(Clock::now() - c0).count();
    out.clear();
    bool first = true;
    for (auto w : words) {
      if (!keep_space && all_space(w)) continue;
      if (!first) out += delimiter;
      out.append(w.data(), w.size());
      first = false;
    }
    out.push_back('\n');
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  std::fflush(stdout);
  if (stats)
    std::fprintf(stderr,
                 "segment: %zu lines, %.3f MB in %.3f s (%.2f MB/s); dictionary %zu words in %.2f s\n", lines,
                 static_cast<double>(bytes) / 1e6, cut_s,
                 cut_s > 0 ? static_cast<double>(bytes) / 1e6 / cut_s : 0.0, seg.size(), load_s);
  return kExitOk;
}

}  // namespace et::host
