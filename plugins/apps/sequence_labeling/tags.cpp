// tags.cpp: tag parsing, conlleval's chunk boundary rules, and span <-> tag conversion.
#include "tags.h"

#include <algorithm>

namespace et::apps::sequence_labeling {

TagParts split_tag(const std::string& tag) {
  auto dash = tag.find('-');
  if (dash == std::string::npos) return {tag, ""};
  return {tag.substr(0, dash), tag.substr(dash + 1)};
}

bool chunk_end(const TagParts& p, const TagParts& c) {
  const std::string &pt = p.prefix, &t = c.prefix;
  if (pt == "E" || pt == "S") return true;
  if ((pt == "B" || pt == "I") && (t == "B" || t == "S" || t == "O")) return true;
  if (pt != "O" && pt != "." && p.type != c.type) return true;
  if (pt == "]" || pt == "[") return true;
  return false;
}

bool chunk_start(const TagParts& p, const TagParts& c) {
  const std::string &pt = p.prefix, &t = c.prefix;
  if (t == "B" || t == "S") return true;
  if ((pt == "E" || pt == "S" || pt == "O") && (t == "E" || t == "I")) return true;
  if (t != "O" && t != "." && p.type != c.type) return true;
  if (t == "[" || t == "]") return true;
  return false;
}

std::vector<Chunk> chunks(const std::vector<std::string>& tags) {
  std::vector<Chunk> out;
  TagParts prev{"O", ""};
  bool open = false;
  for (size_t i = 0; i <= tags.size(); ++i) {
    TagParts cur = i < tags.size() ? split_tag(tags[i]) : TagParts{"O", ""};
    if (open && chunk_end(prev, cur)) {
      out.back().end = static_cast<int64_t>(i);
      open = false;
    }
    if (i < tags.size() && chunk_start(prev, cur)) {
      if (open) out.back().end = static_cast<int64_t>(i);  // only after a tag of unknown prefix (X-PER)
      out.push_back({cur.type, static_cast<int64_t>(i), static_cast<int64_t>(i) + 1});
      open = true;
    }
    prev = cur;
  }
  return out;
}

std::string tags_from_chunks(int64_t n, const std::vector<Chunk>& entities, Scheme scheme,
                             std::vector<std::string>& tags) {
  tags.assign(static_cast<size_t>(n), "O");
  for (const auto& e : entities) {
    if (e.start < 0 || e.end > n || e.start >= e.end)
      return "span [" + std::to_string(e.start) + ", " + std::to_string(e.end - 1) + "] of '" + e.type +
             "' is outside the text (" + std::to_string(n) + " characters)";
    for (int64_t i = e.start; i < e.end; ++i)
      if (tags[size_t(i)] != "O")
        return "span [" + std::to_string(e.start) + ", " + std::to_string(e.end - 1) + "] of '" + e.type +
               "' overlaps another entity";
    for (int64_t i = e.start; i < e.end; ++i) {
      std::string p = i == e.start ? "B" : "I";
      if (scheme == Scheme::bioes) {
        if (e.end - e.start == 1)
          p = "S";
        else if (i == e.end - 1)
          p = "E";
      }
      tags[size_t(i)] = p + "-" + e.type;
    }
  }
  return "";
}

std::vector<std::string> labels_of_type(const std::string& type, Scheme scheme) {
  if (scheme == Scheme::bio) return {"B-" + type, "I-" + type};
  return {"B-" + type, "I-" + type, "E-" + type, "S-" + type};
}

}  // namespace et::apps::sequence_labeling
