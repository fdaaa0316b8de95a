// split.cpp: et::split_list, the shared comma-list splitter.
#include "ethost/text/split.h"

namespace et {

std::vector<std::string> split_list(std::string_view s, char sep, EmptyItems empty) {
  std::vector<std::string> out;
  if (s.find_first_not_of(" \t") == std::string_view::npos) return out;
  size_t start = 0;
  for (;;) {
    const size_t end = s.find(sep, start);
    std::string_view item =
        s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    const size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    item = b == std::string_view::npos ? std::string_view() : item.substr(b, e - b + 1);
    if (!item.empty() || empty == EmptyItems::keep) out.emplace_back(item);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace et
