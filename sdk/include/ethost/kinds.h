// kinds.h: the four plugin component kinds and their names.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace et {

enum class Kind { app, model, optimizer, reader };

inline const char* kind_name(Kind k) {
  switch (k) {
    case Kind::app: return "app";
    case Kind::model: return "model";
    case Kind::optimizer: return "optimizer";
    case Kind::reader: return "reader";
  }
  return "?";
}

inline std::optional<Kind> parse_kind(std::string_view s) {
  if (s == "app") return Kind::app;
  if (s == "model") return Kind::model;
  if (s == "optimizer") return Kind::optimizer;
  if (s == "reader") return Kind::reader;
  return std::nullopt;
}

}  // namespace et
