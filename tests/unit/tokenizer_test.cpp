// tokenizer_test.cpp: et::text::Tokenizer vs HF BertTokenizer 4.30.2 references, offsets and errors (in
// process: unit.tokenizer), and the `ethost tokenize` CLI (integration.tokenizer).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "ethost/error.h"
#include "ethost/text/tokenizer.h"
#include "process.h"
#include "test_paths.h"

using et::text::Encoding;
using et::text::Tokenizer;
using et::text::TokenizerOptions;
using et::text::Vocab;
using nlohmann::json;
using Offsets = std::vector<std::pair<int64_t, int64_t>>;
using Strings = std::vector<std::string>;

namespace {

const std::string kDir = ETHOST_FIXTURES_DIR "/tokenizer/";
const std::string kZhVocab = kDir + "bert-base-chinese-vocab.txt";
const std::string kEnVocab = kDir + "bert-base-uncased-vocab.txt";

std::vector<json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

const Tokenizer& zh() {
  static const Tokenizer t = Tokenizer::from_vocab_file(kZhVocab);
  return t;
}
const Tokenizer& en() {
  static const Tokenizer t = Tokenizer::from_vocab_file(kEnVocab);
  return t;
}

// The reference tokens with [CLS]/[SEP]. For pairs the reference lists the tokens before truncation: keep as
// many as its input_ids hold (its first [SEP] ends the first part).
Strings with_specials(const json& tokens, const std::vector<int64_t>& ids) {
  Strings out{"[CLS]"};
  if (!tokens.empty() && tokens[0].is_array()) {  // a pair: [[a...], [b...]]
    const std::size_t la = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), 102) - ids.begin()) - 1;
    const std::size_t lb = ids.size() - la - 3;
    REQUIRE((la <= tokens[0].size() && lb <= tokens[1].size()));
    for (std::size_t i = 0; i < la; ++i) out.push_back(tokens[0][i].get<std::string>());
    out.push_back("[SEP]");
    for (std::size_t i = 0; i < lb; ++i) out.push_back(tokens[1][i].get<std::string>());
  } else {
    for (auto& t : tokens) out.push_back(t.get<std::string>());
  }
  out.push_back("[SEP]");
  return out;
}

// The unpadded fields of `got` (tokens, ids, types, mask) equal the reference case; padding, if any, is
// [PAD]/0/0.
void check_case(const json& ref, const Strings& tokens, const std::vector<int64_t>& ids,
                const std::vector<int64_t>& types, const std::vector<int64_t>& mask,
                std::size_t padded_to = 0) {
  const auto ref_ids = ref["input_ids"].get<std::vector<int64_t>>();
  const std::size_t n = ref_ids.size();
  REQUIRE(ids.size() == std::max(n, padded_to));
  REQUIRE(tokens.size() == ids.size());
  CHECK(Strings(tokens.begin(), tokens.begin() + n) == with_specials(ref["tokens"], ref_ids));
  CHECK(std::vector<int64_t>(ids.begin(), ids.begin() + n) == ref_ids);
  CHECK(std::vector<int64_t>(types.begin(), types.begin() + n) ==
        ref["token_type_ids"].get<std::vector<int64_t>>());
  CHECK(std::vector<int64_t>(mask.begin(), mask.begin() + n) ==
        ref["attention_mask"].get<std::vector<int64_t>>());
  for (std::size_t i = n; i < ids.size(); ++i) {
    CHECK(tokens[i] == "[PAD]");
    CHECK(ids[i] == 0);
    CHECK(types[i] == 0);
    CHECK(mask[i] == 0);
  }
}

void check_encoding(const json& ref, const Encoding& e, std::size_t padded_to = 0) {
  check_case(ref, e.tokens, e.input_ids, e.token_type_ids, e.attention_mask, padded_to);
  REQUIRE(e.offsets.size() == e.input_ids.size());
  CHECK(e.offsets.front() == std::pair<int64_t, int64_t>(0, 0));
  CHECK_FALSE(e.invalid_utf8);
}

void check_cli_output(const std::vector<json>& refs, const et::test::ProcResult& r,
                      std::size_t padded_to = 0) {
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  std::istringstream out(r.out);
  std::size_t i = 0;
  for (std::string line; std::getline(out, line); ++i) {
    REQUIRE(i < refs.size());
    INFO("case " << i + 1 << ": " << line);
    json j = json::parse(line);
    check_case(refs[i], j["tokens"].get<Strings>(), j["input_ids"].get<std::vector<int64_t>>(),
               j["token_type_ids"].get<std::vector<int64_t>>(),
               j["attention_mask"].get<std::vector<int64_t>>(), padded_to);
    CHECK(j["offsets"].size() == j["input_ids"].size());
  }
  CHECK(i == refs.size());
}

Offsets offsets_of(const Encoding& e) { return Offsets(e.offsets.begin() + 1, e.offsets.end() - 1); }
Strings tokens_of(const Encoding& e) { return Strings(e.tokens.begin() + 1, e.tokens.end() - 1); }

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const et::ConfigError& e) {
    CHECK(e.exit_code() == 2);
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_SUITE("unit.tokenizer") {
  TEST_CASE("single texts match HF BertTokenizer 4.30.2 (zh and en-uncased vocabs)") {
    const std::pair<const char*, const Tokenizer*> files[] = {{"tok_cases.zh.jsonl", &zh()},
                                                              {"tok_cases.en_uncased.jsonl", &en()}};
    for (auto [file, tok] : files) {
      auto refs = read_jsonl(kDir + file);
      CHECK(refs.size() == 30);
      for (auto& ref : refs) {
        INFO(file << ": " << ref["text"].get<std::string>());
        check_encoding(ref, tok->encode(ref["text"].get<std::string>()));
        // The words before WordPiece are HF's basic_tokens, except that HF's tokenize() lower-cases one
        // character at a time (so a final capital sigma becomes σ, not ς as BasicTokenizer alone would give).
        auto basic = ref["basic_tokens"].get<Strings>();
        if (ref["text"].get<std::string>().find("ΣΊΣΥΦΟΣ") != std::string::npos) basic.back() = "σισυφοσ";
        CHECK(tok->basic_tokenize(ref["text"].get<std::string>()) == basic);
      }
    }
  }

  TEST_CASE("pairs at max_length 64 match HF (longest_first truncation), with and without padding") {
    auto refs = read_jsonl(kDir + "tok_pairs_zh.max64.jsonl");
    CHECK(refs.size() == 50);
    TokenizerOptions o;
    o.max_length = 64;
    o.pad_to_max_length = false;
    Tokenizer exact(zh().vocab(), o);
    o.pad_to_max_length = true;
    Tokenizer padded(zh().vocab(), o);
    for (auto& ref : refs) {
      const auto a = ref["text_a"].get<std::string>(), b = ref["text_b"].get<std::string>();
      INFO(a << " | " << b);
      check_encoding(ref, exact.encode(a, b));
      check_encoding(ref, padded.encode(a, b), 64);
    }
  }

  TEST_CASE("offsets are code points of the original text") {
    auto e = zh().encode("我爱Beijing 2022年");
    CHECK(tokens_of(e) == Strings{"我", "爱", "be", "##i", "##jing", "2022", "年"});
    CHECK(offsets_of(e) == Offsets{{0, 1}, {1, 2}, {2, 4}, {4, 5}, {5, 9}, {10, 14}, {14, 15}});
    CHECK(e.offsets.back() == std::pair<int64_t, int64_t>(0, 0));
    e = en().encode("Café RÉSUMÉ İstanbul");  // lower-casing and accent stripping keep the original positions
    CHECK(tokens_of(e) == Strings{"cafe", "resume", "istanbul"});
    CHECK(offsets_of(e) == Offsets{{0, 4}, {5, 11}, {12, 20}});
    e = en().encode("Cafe\u0301 x");  // NFC merges e + U+0301: the token covers both code points
    CHECK(offsets_of(e) == Offsets{{0, 5}, {6, 7}});
    e = en().encode("unaffable 😎 ok, fine");
    CHECK(tokens_of(e) == Strings{"una", "##ffa", "##ble", "[UNK]", "ok", ",", "fine"});
    CHECK(offsets_of(e) == Offsets{{0, 3}, {3, 6}, {6, 9}, {10, 11}, {12, 14}, {14, 15}, {16, 20}});
    e = zh().encode("a [MASK] b[SEP]c");  // special tokens written in the text stay whole
    CHECK(tokens_of(e) == Strings{"a", "[MASK]", "b", "[SEP]", "c"});
    CHECK(offsets_of(e) == Offsets{{0, 1}, {2, 8}, {9, 10}, {10, 15}, {15, 16}});
    e = zh().encode("ab", "我们");  // each part of a pair counts from its own start
    CHECK(e.offsets == Offsets{{0, 0}, {0, 2}, {0, 0}, {0, 1}, {1, 2}, {0, 0}});
    CHECK(e.token_type_ids == std::vector<int64_t>{0, 0, 0, 1, 1, 1});
  }

  TEST_CASE("invalid UTF-8 becomes U+FFFD, is dropped like HF does, and is reported") {
    auto e = en().encode(
        "ab\xff"
        "cd");
    CHECK(e.invalid_utf8);
    CHECK(e.invalid_utf8_count == 1);
    CHECK(tokens_of(e) == Strings{"abc", "##d"});
    CHECK(offsets_of(e) == Offsets{{0, 4}, {4, 5}});  // the replacement character keeps its place
    // Truncated, surrogate and overlong sequences: one replacement per maximal ill-formed subsequence.
    e = en().encode("\xe4\xb8 x \xed\xa0\x80 \xc0\xaf");
    CHECK(e.invalid_utf8_count == 6);
    CHECK(tokens_of(e) == Strings{"x"});
    CHECK_FALSE(en().encode("ok").invalid_utf8);
    std::mt19937 rng(7);
    for (int i = 0; i < 2000; ++i) {  // random bytes never crash and always give valid ids
      std::string s(rng() % 40, '\0');
      for (auto& c : s) c = static_cast<char>(rng() % 256);
      auto r = zh().encode(s, s);
      for (auto id : r.input_ids) CHECK((id >= 0 && id < 21128));
    }
  }

  TEST_CASE("words over 100 code points become [UNK]; the count is taken after normalisation") {
    CHECK(tokens_of(en().encode(std::string(100, 'a'))) != Strings{"[UNK]"});
    auto e = en().encode("x " + std::string(101, 'a') + " y");
    CHECK(tokens_of(e) == Strings{"x", "[UNK]", "y"});
    CHECK(offsets_of(e)[1] == std::pair<int64_t, int64_t>(2, 103));
    std::string decomposed;
    for (int i = 0; i < 60; ++i) decomposed += "e\u0301";  // 120 code points, 60 after NFC + accent stripping
    CHECK(tokens_of(en().encode(decomposed)) != Strings{"[UNK]"});
  }

  TEST_CASE("vocab loading: U+2028 is a token, CRLF lines, missing specials, unreadable files") {
    const Vocab& v = zh().vocab();
    CHECK(v.size() == 21128);
    CHECK(v.find("\u2028") == 343);
    CHECK(v.find("##\u2028") == 13502);
    CHECK(v.token(101) == "[CLS]");
    CHECK((v.cls_id() == 101 && v.sep_id() == 102 && v.unk_id() == 100 && v.pad_id() == 0 &&
           v.mask_id() == 103));
    et::test::TempDir dir("tokenizer");
    et::test::write_file(dir / "crlf.txt", "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nhello\r\n");
    auto crlf = Vocab::from_file(dir / "crlf.txt");  // Python text mode reads \r\n as a line end
    CHECK(crlf.find("hello") == 4);
    CHECK(crlf.mask_id() == crlf.unk_id());
    et::test::write_file(dir / "no_unk.txt", "[PAD]\n[CLS]\n[SEP]\n[MASK]\nhello\n");
    std::string e = error_of([&] { Vocab::from_file(dir / "no_unk.txt"); });
    CHECK(et::test::contains(e, dir / "no_unk.txt"));
    CHECK(et::test::contains(e, "[UNK]"));
    e = error_of([&] { Tokenizer t{Vocab()}; });
    CHECK(et::test::contains(e, "[UNK]"));
    e = error_of([&] { Vocab::from_file(dir / "missing.txt"); });
    CHECK(et::test::contains(e, dir / "missing.txt"));
  }

  TEST_CASE("from_model_dir reads tokenizer_config.json; options change casing and never_split") {
    et::test::TempDir dir("tokenizer");
    et::test::write_file(dir / "vocab.txt", et::test::read_file(kEnVocab));
    et::test::write_file(dir / "tokenizer_config.json",
                         R"({"do_lower_case": false, "strip_accents": true, "model_max_length": 128,
                             "tokenize_chinese_chars": true, "never_split": ["Hello"]})");
    auto t = Tokenizer::from_model_dir(dir.path());
    CHECK_FALSE(t.options().do_lower_case);
    CHECK(t.options().strip_accents == std::optional<bool>(true));
    CHECK(t.options().model_max_length == 128);
    auto e = t.encode(
        "Hello Café");  // cased: "Hello" is kept whole (not in the vocab: [UNK] id), accents stripped
    CHECK(tokens_of(e) == Strings{"Hello", "[UNK]"});
    CHECK(e.input_ids[1] == 100);
    et::test::write_file(dir / "tokenizer_config.json", "{not json");
    CHECK(et::test::contains(error_of([&] { Tokenizer::from_model_dir(dir.path()); }),
                             "tokenizer_config.json"));
    TokenizerOptions o;
    o.max_length = 6;
    auto s = Tokenizer(en().vocab(), o).encode("one two three four five");
    CHECK(s.tokens == Strings{"[CLS]", "one", "two", "three", "four", "[SEP]"});
  }

  TEST_CASE("batch encoding (oneTBB) equals serial encoding") {
    std::vector<std::string> texts;
    std::vector<std::pair<std::string, std::string>> pairs;
    for (int rep = 0; rep < 20; ++rep) {
      for (auto& r : read_jsonl(kDir + "tok_cases.zh.jsonl")) texts.push_back(r["text"].get<std::string>());
      for (auto& r : read_jsonl(kDir + "tok_pairs_zh.max64.jsonl"))
        pairs.emplace_back(r["text_a"].get<std::string>(), r["text_b"].get<std::string>());
    }
    TokenizerOptions o;
    o.max_length = 32;
    Tokenizer t(zh().vocab(), o);
    auto same = [](const Encoding& a, const Encoding& b) {
      return a.tokens == b.tokens && a.input_ids == b.input_ids && a.token_type_ids == b.token_type_ids &&
             a.attention_mask == b.attention_mask && a.offsets == b.offsets &&
             a.invalid_utf8 == b.invalid_utf8;
    };
    auto batch = t.encode_batch(texts);
    REQUIRE(batch.size() == texts.size());
    for (std::size_t i = 0; i < texts.size(); ++i) CHECK(same(batch[i], t.encode(texts[i])));
    auto pbatch = t.encode_batch(pairs);
    REQUIRE(pbatch.size() == pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i)
      CHECK(same(pbatch[i], t.encode(pairs[i].first, pairs[i].second)));
  }
}

TEST_SUITE("integration.tokenizer") {
  TEST_CASE("ethost tokenize reproduces every reference file (one run per file)") {
    const std::pair<const char*, std::string> files[] = {{"tok_cases.zh.jsonl", kZhVocab},
                                                         {"tok_cases.en_uncased.jsonl", kEnVocab}};
    for (auto& [file, vocab] : files) {
      auto refs = read_jsonl(kDir + file);
      std::string in;
      for (auto& r : refs) in += r["text"].get<std::string>() + "\n";
      INFO(file);
      check_cli_output(refs, et::test::run_ethost({"tokenize", "--vocab", vocab}, {}, in));
    }
    auto refs = read_jsonl(kDir + "tok_pairs_zh.max64.jsonl");
    auto r = et::test::run_ethost({"tokenize", "--vocab", kZhVocab, "--pair", "--max_length", "64"}, {},
                                  et::test::read_file(kDir + "tok_pairs_zh.tsv"));
    check_cli_output(refs, r, 64);
  }

  TEST_CASE("ethost tokenize: a vocabulary without [UNK] exits 2 and says so") {
    et::test::TempDir dir("tokenizer_cli");
    et::test::write_file(dir / "no_unk.txt", "[PAD]\n[CLS]\n[SEP]\n[MASK]\nhello\n");
    auto r = et::test::run_ethost({"tokenize", "--vocab", dir / "no_unk.txt"}, {}, "hello\n");
    CHECK(r.exit_code == 2);
    CHECK(et::test::contains(r.err, "[UNK]"));
  }

  TEST_CASE("ethost tokenize: usage errors exit 2, a pair line without a tab exits 4") {
    CHECK(et::test::run_ethost({"tokenize", "--vocab", kZhVocab, "--bogus"}).exit_code == 2);
    CHECK(et::test::run_ethost({"tokenize"}).exit_code == 2);
    CHECK(et::test::run_ethost({"tokenize", "--vocab", kZhVocab, "--max_length", "-3"}).exit_code == 2);
    auto r = et::test::run_ethost({"tokenize", "--vocab", kZhVocab, "--pair"}, {}, "a\tb\nno tab here\n");
    CHECK(r.exit_code == 4);
    CHECK(et::test::contains(r.err, "line 2"));
    r = et::test::run_ethost({"tokenize", "--vocab", kEnVocab, "--cased"}, {}, "Hello \"x\"\n");
    CHECK(r.exit_code == 0);
    CHECK(json::parse(r.out)["tokens"] == json::array({"[CLS]", "[UNK]", "\"", "x", "\"", "[SEP]"}));
  }
}
