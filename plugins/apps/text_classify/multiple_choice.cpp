// multiple_choice.cpp: one BERT sequence per candidate, the candidate in place of the placeholder (or as the
// second sequence), truncated around it, stacked and padded to [choices, T].
#include "multiple_choice.h"

#include <algorithm>

namespace et::apps::text_classify {
namespace {

bool ids_of(const text::Tokenizer& tok, const std::string& s, std::vector<int64_t>& out) {
  int64_t bad = 0;
  for (const auto& t : tok.tokenize(s, &bad)) out.push_back(t.id);
  return bad == 0;
}

}  // namespace

data::FeatureSchema choice_features(int64_t pad_id) {
  data::FeatureSchema s;
  auto spec = [](const std::string& name, double pad) {
    data::FeatureSpec f;
    f.name = name;
    f.pad_value = pad;
    f.pad = data::Pad::longest;
    f.dim = 1;  // [choices, T]: T varies
    return f;
  };
  s.add(spec("input_ids", static_cast<double>(pad_id)));
  s.add(spec("token_type_ids", 0));
  s.add(spec("attention_mask", 0));
  s.length_feature = "input_ids";
  return s;
}

bool encode_choices(const text::Tokenizer& tok, const std::string& text,
                    const std::vector<std::string>& cands, const std::string& placeholder, int64_t seq_len,
                    data::Example& ex, std::string& reason) {
  std::vector<int64_t> before, after;
  const size_t at = placeholder.empty() ? std::string::npos : text.find(placeholder);
  if (!placeholder.empty() && at == std::string::npos) {
    reason = "the text holds no candidate_placeholder '" + placeholder + "'";
    return false;
  }
  bool ok = at == std::string::npos ? ids_of(tok, text, before)
                                    : ids_of(tok, text.substr(0, at), before) &&
                                          ids_of(tok, text.substr(at + placeholder.size()), after);
  if (!ok) {
    reason = "text is not valid UTF-8";
    return false;
  }
  const auto& v = tok.vocab();
  std::vector<std::vector<int64_t>> seqs, types;
  size_t longest = 0;
  for (const auto& c : cands) {
    std::vector<int64_t> cid;
    if (!ids_of(tok, c, cid) || cid.empty()) {
      reason = "candidate '" + c + "' makes no tokens (or is not UTF-8)";
      return false;
    }
    const bool pair = placeholder.empty();
    const size_t specials = pair ? 3 : 2;
    const size_t room = size_t(seq_len) > specials + cid.size() ? size_t(seq_len) - specials - cid.size() : 0;
    std::vector<int64_t> b = before, a = after;
    while (b.size() + a.size() > room) {  // longest first; the text before loses its start
      if (b.size() >= a.size() && !pair)
        b.erase(b.begin());
      else if (a.size() > b.size())
        a.pop_back();
      else
        b.pop_back();
    }
    std::vector<int64_t> ids{v.cls_id()};
    ids.insert(ids.end(), b.begin(), b.end());
    if (pair) ids.push_back(v.sep_id());
    std::vector<int64_t> type(ids.size(), 0);
    ids.insert(ids.end(), cid.begin(), cid.end());
    ids.insert(ids.end(), a.begin(), a.end());
    ids.push_back(v.sep_id());
    type.resize(ids.size(), pair ? 1 : 0);
    longest = std::max(longest, ids.size());
    seqs.push_back(std::move(ids));
    types.push_back(std::move(type));
  }
  const auto C = static_cast<int64_t>(cands.size()), T = static_cast<int64_t>(longest);
  std::vector<int64_t> ids(size_t(C * T), v.pad_id()), tt(ids.size(), 0), mask(ids.size(), 0);
  for (size_t c = 0; c < seqs.size(); ++c)
    for (size_t t = 0; t < seqs[c].size(); ++t) {
      ids[c * size_t(T) + t] = seqs[c][t];
      tt[c * size_t(T) + t] = types[c][t];
      mask[c * size_t(T) + t] = 1;
    }
  ex.set("input_ids", data::Feature::tensor(std::move(ids), {C, T}));
  ex.set("token_type_ids", data::Feature::tensor(std::move(tt), {C, T}));
  ex.set("attention_mask", data::Feature::tensor(std::move(mask), {C, T}));
  return true;
}

}  // namespace et::apps::text_classify
