// pattern.cpp: parsing PET patterns and (fuzzy) verbalizers, and laying verbalizers out as token tables.
#include "pattern.h"

#include <ethost/error.h>
#include <ethost/text/split.h>

#include <algorithm>

namespace et::apps::fewshot {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// "<pseudo>" (one prompt token) or "<pseudo>*N" (N of them).
PatternItem pseudo_item(const std::string& item, const std::string& spec, const std::string& where) {
  const std::string tag = "<pseudo>";
  PatternItem it;
  it.kind = PatternItem::Kind::pseudo;
  it.count = 1;
  bool ok = item.compare(0, tag.size(), tag) == 0;
  if (ok && item.size() > tag.size()) {
    const std::string n = item.substr(tag.size() + 1);
    ok = item[tag.size()] == '*' && !n.empty() && n.size() <= 2 &&
         n.find_first_not_of("0123456789") == std::string::npos;
    if (ok) it.count = std::stoll(n);
    ok = ok && it.count >= 1 && it.count <= kMaxPseudoPerItem;
  }
  if (!ok)
    throw ConfigError("the pattern '" + spec + "' has the item '" + item +
                          "': a P-tuning prompt item is '<pseudo>' or '<pseudo>*N' (N in 1.." +
                          std::to_string(kMaxPseudoPerItem) + "), on its own between commas",
                      where, "e.g. \"sent1,<pseudo>*3,label\"");
  return it;
}

}  // namespace

int64_t Pattern::pseudo_tokens() const {
  int64_t n = 0;
  for (const auto& it : items)
    if (it.kind == PatternItem::Kind::pseudo) n += it.count;
  return n;
}

std::vector<std::string> Pattern::columns() const {
  std::vector<std::string> out;
  for (const auto& it : items)
    if (it.kind == PatternItem::Kind::column && std::find(out.begin(), out.end(), it.value) == out.end())
      out.push_back(it.value);
  return out;
}

Pattern parse_pattern(const std::string& spec, const std::string& first, const std::string& second,
                      const std::string& where, bool label_in_text) {
  const std::string hint =
      "write items separated by ',': sent1 / sent2 (data.first_sequence / data.second_sequence), {column}, "
      "label (the mask), or literal text, e.g. \"sent1,label,用,sent2,概括。\"";
  if (trim(spec).empty()) throw ConfigError("the pattern is empty", where, hint);
  Pattern p;
  int slots = 0;
  for (const auto& item : split_list(spec, ',', EmptyItems::keep)) {
    PatternItem it;
    if (item.empty()) {
      throw ConfigError("the pattern '" + spec + "' has an empty item (two commas in a row?)", where,
                        "a literal comma cannot be written: use the full-width '，'");
    } else if (item == "label") {
      it.kind = PatternItem::Kind::label;
      ++slots;
    } else if (item == "sent1" || item == "sent2") {
      const std::string& col = item == "sent1" ? first : second;
      if (col.empty())
        throw ConfigError("the pattern uses " + item + " but data." +
                              (item == "sent1" ? "first_sequence" : "second_sequence") + " is not set",
                          where, "set the column, or name it as {column}");
      it = {PatternItem::Kind::column, col};
    } else if (item.size() > 2 && item.front() == '{' && item.back() == '}') {
      it = {PatternItem::Kind::column, item.substr(1, item.size() - 2)};
    } else if (item.find("<pseudo>") != std::string::npos) {
      it = pseudo_item(item, spec, where);
      it.first = p.pseudo_tokens();
    } else {
      it.value = item;
    }
    p.items.push_back(std::move(it));
  }
  if (label_in_text && slots != 0)
    throw ConfigError("the pattern '" + spec +
                          "' has a 'label' slot, but candidate_placeholder is set: the mask "
                          "goes where a column's text holds the placeholder",
                      where, "drop the label item, or unset candidate_placeholder");
  if (!label_in_text && slots != 1)
    throw ConfigError("the pattern '" + spec + "' has " + std::to_string(slots) +
                          " 'label' slots; it needs exactly one (where the label word is predicted)",
                      where, hint);
  if (p.columns().empty()) throw ConfigError("the pattern '" + spec + "' reads no column", where, hint);
  return p;
}

std::vector<std::vector<std::string>> parse_verbalizers(const std::string& spec, size_t n_labels,
                                                        const std::string& where) {
  if (trim(spec).empty())
    throw ConfigError("label_desc is empty", where,
                      "give one word per label in label order, e.g. \"差,好\" (sets separated by '/')");
  std::vector<std::vector<std::string>> sets;
  for (const auto& set : split_list(spec, '/', EmptyItems::keep)) {
    auto words = split_list(set, ',', EmptyItems::keep);
    bool blank = words.empty();  // "a,b/" (an empty set)
    for (const auto& w : words) blank = blank || w.empty();
    if (blank)
      throw ConfigError("label_desc '" + spec + "' has an empty label word", where,
                        "words are separated by ',' and sets by '/'");
    if (words.size() != n_labels)
      throw ConfigError("label_desc set " + std::to_string(sets.size() + 1) + " ('" + set + "') has " +
                            std::to_string(words.size()) + " words for " + std::to_string(n_labels) +
                            " labels",
                        where, "each set lists one word per label, in the order of the labels");
    sets.push_back(std::move(words));
  }
  return sets;
}

VerbalizerTable make_table(const std::vector<std::vector<std::vector<int64_t>>>& word_ids,
                           std::vector<std::vector<std::string>> words) {
  VerbalizerTable t;
  t.sets = static_cast<int64_t>(word_ids.size());
  t.labels = t.sets ? static_cast<int64_t>(word_ids[0].size()) : 0;
  for (const auto& set : word_ids)
    for (const auto& w : set) t.mask_len = std::max<int64_t>(t.mask_len, static_cast<int64_t>(w.size()));
  t.ids.assign(size_t(t.sets * t.labels * t.mask_len), 0);
  t.weights.assign(t.ids.size(), 0.0f);
  for (int64_t s = 0; s < t.sets; ++s)
    for (int64_t l = 0; l < t.labels; ++l) {
      const auto& w = word_ids[size_t(s)][size_t(l)];
      for (size_t j = 0; j < w.size(); ++j) {
        size_t k = size_t((s * t.labels + l) * t.mask_len) + j;
        t.ids[k] = w[j];
        t.weights[k] = 1.0f / static_cast<float>(w.size());
      }
    }
  t.words = std::move(words);
  return t;
}

}  // namespace et::apps::fewshot
