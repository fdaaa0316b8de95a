// segmenter_test.cpp: et::text::Segmenter against jieba 0.42.1 (HMM off) — the 300 oracle sentences, edge
// cases cut by Debian's jieba (mixed scripts, CRLF, non-BMP, ties on a small dictionary), add_word, and bad
// dictionaries.
#include "ethost/text/segmenter.h"

#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ethost/error.h"
#include "process.h"
#include "test_paths.h"

namespace {

using Words = std::vector<std::string>;

const et::text::Segmenter& jieba_dict() {
  static const et::text::Segmenter seg =
      et::text::Segmenter::from_file(et::text::Segmenter::default_dict_path());
  return seg;
}

std::string join(const Words& w) {
  std::string s;
  for (auto& x : w) s += (s.empty() ? "" : "|") + x;
  return s;
}

}  // namespace

TEST_SUITE("unit.segmenter") {
  TEST_CASE("the 300 oracle sentences are cut exactly as jieba cut(HMM=False)") {
    const auto& seg = jieba_dict();
    CHECK(seg.size() > 340000);
    std::ifstream in(ETHOST_SOURCE_DIR "/data/segmenter/jieba_cut_oracle.jsonl");
    REQUIRE(in);
    int n = 0, same = 0;
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      const std::string text = j["text"];
      const Words want = j["cut_hmm_false"].get<Words>();
      const Words got = seg.cut(text);
      ++n;
      if (got == want) {
        ++same;
      } else if (n - same <= 3) {
        CAPTURE(text);
        CHECK(join(got) == join(want));
      }
      std::string concat;
      for (auto& w : got) concat += w;
      CHECK(concat == text);
    }
    CHECK(n == 300);
    CHECK(same == 300);
  }

  TEST_CASE("edge cases, as Debian's jieba 0.42.1 cuts them (HMM off)") {
    const auto& seg = jieba_dict();
    const std::vector<std::pair<std::string, Words>> cases = {
        {"iPhone12发布了，售价5999元。", {"iPhone12", "发布", "了", "，", "售价", "5999", "元", "。"}},
        {"C++程序设计\r\n第2版", {"C++", "程序设计", "\r\n", "第", "2", "版"}},
        {"3.14%的人 喜欢\t吃苹果😀！",
         {"3", ".", "14", "%", "的", "人", " ", "喜欢", "\t", "吃", "苹果", "😀", "！"}},
        {"南京市长江大桥", {"南京市", "长江大桥"}},
        {"我来到北京清华大学", {"我", "来到", "北京", "清华大学"}},
        {"ABC abc 123", {"ABC", " ", "abc", " ", "123"}},
        {"他说：“你好—世界”", {"他", "说", "：", "“", "你好", "—", "世界", "”"}},
        {"結合成分子時", {"結", "合成", "分子", "時"}},
        {"", {}},
        {"  ", {" ", " "}},
        {"e-mail_地址#1&2", {"e", "-", "mail", "_", "地址", "#", "1", "&", "2"}},
    };
    for (auto& [text, want] : cases) {
      CAPTURE(text);
      CHECK(join(seg.cut(text)) == join(want));
    }
    // Invalid UTF-8 (Python cannot decode it): every bad byte is its own token, nothing is lost.
    const std::string bad = "中国\xff\xfe人";
    CHECK(seg.cut(bad) == Words{"中国", "\xff", "\xfe", "人"});
  }

  TEST_CASE("a small dictionary: routes, ties and add_word match jieba.Tokenizer(dictionary=...)") {
    et::test::TempDir dir("seg_small");
    et::test::write_file(dir / "d.txt", "南京 10\n南京市 5\n市长 8\n长江 20\n长江大桥 3\n大桥 6\n江 2\n");
    auto seg = et::text::Segmenter::from_file(dir / "d.txt");
    CHECK(seg.size() == 7);
    CHECK(seg.total() == 54);
    CHECK(seg.contains("长江大桥"));
    CHECK_FALSE(seg.contains("长江大"));  // a prefix, not a word
    CHECK(join(seg.cut("南京市长江大桥")) == "南京市|长江大桥");
    CHECK(join(seg.cut("南京长江")) == "南京|长江");
    CHECK(join(seg.cut("市长江大桥梁")) == "市长|江|大桥|梁");
    seg.add_word("江大桥梁", 1000);  // jieba: FREQ[w] = 1000, total += 1000
    CHECK(seg.total() == 1054);
    CHECK(join(seg.cut("市长江大桥梁")) == "市长|江大桥梁");
    CHECK_THROWS_AS(seg.add_word("x", 0), et::ConfigError);
  }

  TEST_CASE("a malformed dictionary line is a data error naming the file and line") {
    et::test::TempDir dir("seg_bad");
    et::test::write_file(dir / "bad.txt", "南京 10\n长江\n");
    try {
      et::text::Segmenter::from_file(dir / "bad.txt");
      FAIL("accepted a line without a frequency");
    } catch (const et::DataError& e) {
      CHECK(std::string(e.what()).find("bad.txt:2") != std::string::npos);
      CHECK(std::string(e.what()).find("no frequency") != std::string::npos);
    }
    et::test::write_file(dir / "neg.txt", "南京 -3\n");
    CHECK_THROWS_AS(et::text::Segmenter::from_file(dir / "neg.txt"), et::DataError);
    CHECK_THROWS_AS(et::text::Segmenter::from_file(dir / "missing.txt"), et::DataError);
  }
}

TEST_SUITE("integration.host") {
  TEST_CASE("ethost segment prints one line of words per input line") {
    auto r = et::test::run_ethost({"segment"}, {},
                                  "我来到北京清华大学\r\n南京市长江大桥 iPhone12\n\n100\u00a0万\u3000元\n");
    CHECK(r.exit_code == 0);
    // Whitespace tokens (also U+00A0 and U+3000, as Python's isspace) are left out.
    CHECK(r.out == "我 来到 北京 清华大学\n南京市 长江大桥 iPhone12\n\n100 万 元\n");
    r = et::test::run_ethost({"segment", "--delimiter", "/", "--stats"}, {}, "我来到北京清华大学\n");
    CHECK(r.out == "我/来到/北京/清华大学\n");
    CHECK(r.err.find("MB/s") != std::string::npos);
    r = et::test::run_ethost({"segment", "--dict", "/nonexistent/dict.txt"}, {}, "x\n");
    CHECK(r.exit_code == 4);
    CHECK(r.err.find("/nonexistent/dict.txt") != std::string::npos);
  }
}
