// packer.cpp: sentence packing, NSP/SOP pairs, and the resumable packer state.
#include "packer.h"

#include <ethost/data/mlm_masking.h>
#include <ethost/error.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace et::apps::pretrain {
namespace {

constexpr size_t kRingSentences = 64;
constexpr uint64_t kPairSalt = 0x9E3779B97F4A7C15ULL;

size_t total(const std::vector<Packer::Piece>& ps) {
  size_t n = 0;
  for (const auto& p : ps) n += p.size();
  return n;
}

void trim_to(std::vector<Packer::Piece>& ps, size_t n) {  // drop tokens from the end
  while (total(ps) > n && !ps.empty()) {
    size_t extra = total(ps) - n;
    if (ps.back().size() <= extra)
      ps.pop_back();
    else
      ps.back().end -= extra;
  }
}

}  // namespace

PairTask parse_pair_task(const std::string& s) {
  if (s == "none" || s.empty()) return PairTask::none;
  if (s == "nsp") return PairTask::nsp;
  if (s == "sop") return PairTask::sop;
  throw ConfigError("unknown pretraining pair task '" + s + "'", "pair_task",
                    "use none (MLM only), nsp (next sentence prediction) or sop (sentence order)");
}

Packer::Packer(Corpus& corpus, const text::Tokenizer& tok, const text::Segmenter* seg, PackOptions o)
    : corpus_(corpus), tok_(tok), seg_(seg), o_(o) {
  if (o_.max_length < 8) throw ConfigError("data.sequence_length must be at least 8", "data.sequence_length");
  restart(0);
}

void Packer::restart(int64_t epoch) {
  epoch_ = epoch;
  index_ = tokens_ = 0;
  have_doc_ = corpus_end_ = false;
  doc_.clear();
  sent_ = tok_off_ = 0;
  doc_serial_ = 0;
  doc_pos_ = {0, 0, 1};
  doc_pos_.pass = epoch;
  ring_.clear();
  corpus_.seek(doc_pos_);
}

void Packer::load_document() {
  std::vector<std::string> texts;
  for (;;) {
    doc_pos_ = corpus_.tell();
    if (!corpus_.next_document(texts)) {
      corpus_end_ = true;
      have_doc_ = false;
      doc_.clear();
      return;
    }
    doc_.clear();
    for (const auto& t : texts) {
      auto toks = tok_.tokenize(t);
      if (toks.empty()) continue;
      Sent s;
      s.ids.reserve(toks.size());
      for (const auto& k : toks) s.ids.push_back(k.id);
      s.words = data::whole_word_ids(toks, t, seg_);
      doc_.push_back(std::move(s));
    }
    if (doc_.empty()) continue;
    have_doc_ = true;
    sent_ = tok_off_ = 0;
    ++doc_serial_;
    return;
  }
}

bool Packer::ensure_sentence() {
  while (!corpus_end_) {
    if (have_doc_ && sent_ < doc_.size()) return true;
    if (have_doc_)
      for (auto& s : doc_) {
        ring_.push_back(s);
        if (ring_.size() > kRingSentences) ring_.pop_front();
      }
    load_document();
  }
  return false;
}

void Packer::append(const std::vector<Piece>& pieces, int8_t type, Instance& out) const {
  int32_t base = 0;
  for (int32_t w : out.word_ids) base = std::max(base, w + 1);
  for (const auto& p : pieces) {
    const int32_t first = p.s->words[p.begin];
    int32_t last = base;
    for (size_t j = p.begin; j < p.end; ++j) {
      out.input_ids.push_back(p.s->ids[j]);
      out.token_type_ids.push_back(type);
      last = base + (p.s->words[j] - first);
      out.word_ids.push_back(last);
    }
    base = last + 1;
  }
}

bool Packer::next(Instance& out) {
  out = Instance();
  bool ok = o_.pair_task == PairTask::none ? next_mlm(out) : next_pair(out);
  if (ok) ++index_;
  return ok;
}

bool Packer::next_mlm(Instance& out) {
  const size_t budget = static_cast<size_t>(o_.max_length - 2);
  const auto& v = tok_.vocab();
  out.input_ids.push_back(v.cls_id());
  out.token_type_ids.push_back(0);
  out.word_ids.push_back(-1);
  size_t n = 0;
  int64_t serial = -1;
  // Pieces are appended at once: the next document replaces the current one's sentences.
  while (n < budget && ensure_sentence()) {
    if (!o_.cross_documents && serial >= 0 && doc_serial_ != serial) break;
    serial = doc_serial_;
    const Sent& s = doc_[sent_];
    const size_t remaining = s.ids.size() - tok_off_;
    size_t take;
    if (n == 0 || o_.fill)
      take = std::min(remaining, budget - n);  // a sentence longer than the budget is split
    else if (remaining <= budget - n)
      take = remaining;
    else
      break;  // full sentences only: it starts the next sequence
    append({{&s, tok_off_, tok_off_ + take}}, 0, out);
    n += take;
    tokens_ += static_cast<int64_t>(take);
    tok_off_ += take;
    if (tok_off_ == s.ids.size()) {
      ++sent_;
      tok_off_ = 0;
    }
  }
  if (n == 0) return false;
  out.input_ids.push_back(v.sep_id());
  out.token_type_ids.push_back(0);
  out.word_ids.push_back(-1);
  return true;
}

bool Packer::next_pair(Instance& out) {
  if (!ensure_sentence()) return false;
  const size_t budget = static_cast<size_t>(o_.max_length - 3);
  std::mt19937_64 rng =
      data::masking_rng(o_.seed ^ kPairSalt, static_cast<uint64_t>(epoch_), static_cast<uint64_t>(index_));
  // A chunk of the current document: whole sentences up to the budget (a first sentence longer than it is
  // split). after[k]: the read position once pieces 0..k are used.
  std::vector<Piece> chunk;
  std::vector<std::pair<size_t, size_t>> after;
  size_t s = sent_, off = tok_off_, n = 0;
  while (s < doc_.size() && n < budget) {
    const size_t size = doc_[s].ids.size();
    size_t take = size - off;
    if (chunk.empty())
      take = std::min(take, budget);
    else if (n + take > budget)
      break;  // whole sentences: it starts the next pair
    chunk.push_back({&doc_[s], off, off + take});
    n += take;
    if (off + take < size) {
      off += take;
    } else {
      ++s;
      off = 0;
    }
    after.emplace_back(s, off);
  }
  size_t a_end = chunk.size() >= 2 ? 1 + static_cast<size_t>(rng() % (chunk.size() - 1)) : 1;
  std::vector<Piece> a(chunk.begin(), chunk.begin() + long(a_end)),
      b(chunk.begin() + long(a_end), chunk.end());
  size_t consumed = chunk.size();
  auto split_single = [&] {  // one piece: its halves
    Piece p = a[0];
    if (p.size() < 2) return;
    size_t mid = p.begin + p.size() / 2;
    a = {{p.s, p.begin, mid}};
    b = {{p.s, mid, p.end}};
  };
  int64_t label = 0;
  if (o_.pair_task == PairTask::nsp) {
    bool random = !ring_.empty() && (rng() & 1);
    if (random) {
      label = 1;
      consumed = a_end;  // the real continuation is used by the next sequence
      b.clear();
      const size_t want = budget > total(a) ? budget - total(a) : 1;
      for (size_t j = static_cast<size_t>(rng() % ring_.size()); j < ring_.size() && total(b) < want; ++j)
        b.push_back({&ring_[j], 0, ring_[j].ids.size()});
    } else if (chunk.size() == 1) {
      split_single();
    }
  } else {
    if (chunk.size() == 1) split_single();
    if (!b.empty() && (rng() & 1)) {
      std::swap(a, b);
      label = 1;
    }
  }
  while (total(a) + total(b) > budget) {  // trim the longer segment from its end
    if (total(a) > total(b))
      trim_to(a, total(a) - 1);
    else
      trim_to(b, total(b) - 1);
  }
  for (size_t k = 0; k < consumed; ++k) tokens_ += static_cast<int64_t>(chunk[k].size());
  std::tie(sent_, tok_off_) = after[consumed - 1];
  const auto& v = tok_.vocab();
  out.input_ids.push_back(v.cls_id());
  out.token_type_ids.push_back(0);
  out.word_ids.push_back(-1);
  append(a, 0, out);
  out.input_ids.push_back(v.sep_id());
  out.token_type_ids.push_back(0);
  out.word_ids.push_back(-1);
  append(b, 1, out);
  out.input_ids.push_back(v.sep_id());
  out.token_type_ids.push_back(1);
  out.word_ids.push_back(-1);
  out.pair_label = label;
  return true;
}

std::string Packer::state() const {
  nlohmann::json ring = nlohmann::json::array();
  for (const auto& s : ring_) ring.push_back({{"i", s.ids}, {"w", s.words}});
  nlohmann::json j = {{"epoch", epoch_},           {"index", index_},       {"tokens", tokens_},
                      {"have_doc", have_doc_},     {"end", corpus_end_},    {"file", doc_pos_.file},
                      {"offset", doc_pos_.offset}, {"line", doc_pos_.line}, {"sent", sent_},
                      {"tok", tok_off_},           {"serial", doc_serial_}, {"ring", ring}};
  if (!doc_pos_.parts.empty()) {  // interleaved files: each one's position and the draws made
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& p : doc_pos_.parts) parts.push_back({p.file, p.offset, p.line});
    j["parts"] = parts;
    j["draws"] = doc_pos_.draws;
  }
  return j.dump();
}

void Packer::restore(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw DataError("the checkpoint's data cursor is not a pretraining stream state", "data_cursor",
                    "resume from a checkpoint written by app/pretrain");
  try {
    restore_json(j);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(std::string("the checkpoint's data cursor is incomplete: ") + e.what(), "data_cursor",
                    "resume from a checkpoint written by app/pretrain");
  }
}

void Packer::restore_json(const nlohmann::json& j) {
  if (j.at("file").get<int64_t>() > static_cast<int64_t>(corpus_.options().files.size()))
    throw DataError("the data changed since the checkpoint: it was in file " +
                        std::to_string(j.at("file").get<int64_t>() + 1) + ", there are " +
                        std::to_string(corpus_.options().files.size()),
                    "data.tables");
  restart(j.at("epoch").get<int64_t>());
  index_ = j.at("index").get<int64_t>();
  tokens_ = j.at("tokens").get<int64_t>();
  doc_serial_ = j.at("serial").get<int64_t>();
  for (const auto& r : j.at("ring")) {
    Sent s;
    s.ids = r.at("i").get<std::vector<int64_t>>();
    s.words = r.at("w").get<std::vector<int32_t>>();
    ring_.push_back(std::move(s));
  }
  corpus_end_ = j.at("end").get<bool>();
  if (j.at("have_doc").get<bool>()) {
    Position p{j.at("file").get<int64_t>(), j.at("offset").get<int64_t>(), j.at("line").get<int64_t>()};
    p.pass = epoch_;
    if (j.contains("parts")) {
      for (const auto& q : j.at("parts"))
        p.parts.push_back({q.at(0).get<int64_t>(), q.at(1).get<int64_t>(), q.at(2).get<int64_t>()});
      p.draws = j.at("draws").get<int64_t>();
    }
    corpus_.seek(p);
    const int64_t serial = doc_serial_;
    load_document();
    doc_serial_ = serial;
    if (!have_doc_)
      throw DataError("the data changed since the checkpoint: its document is gone", "data.tables");
    sent_ = j.at("sent").get<size_t>();
    tok_off_ = j.at("tok").get<size_t>();
    if (sent_ > doc_.size() || (sent_ < doc_.size() && tok_off_ >= doc_[sent_].ids.size()))
      throw DataError("the data changed since the checkpoint (the resumed document is shorter)",
                      "data.tables");
  } else if (corpus_end_) {
    Position end{static_cast<int64_t>(corpus_.options().files.size()), 0, 1};
    end.pass = epoch_;
    corpus_.seek(end);
  }  // else: no document read yet, the corpus is at its start (restart)
}

}  // namespace et::apps::pretrain
