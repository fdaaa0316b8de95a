// split.h: et::split_list — "a, b,c" -> {"a", "b", "c"}: the one comma-list splitter of host, SDK and
// plugins.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ethost/export.h"

namespace et {

// What split_list does with an item that is empty after trimming ("a,,b", "a,").
enum class EmptyItems {
  drop,  // left out: "a,,b" -> {a, b}
  keep,  // kept in place: "a,,b" -> {a, "", b}, so the caller can report it
};

// Splits `s` on `sep` and trims spaces and tabs around every item. A string that is empty or only spaces and
// tabs is the empty list with either policy (never {""}).
ET_API std::vector<std::string> split_list(std::string_view s, char sep = ',',
                                           EmptyItems empty = EmptyItems::drop);

}  // namespace et
