// conll_reader_test.cpp: reader/conll — sentences as rows, CRLF, -DOCSTART-, field-count errors with the
// sentence's line, strict mode, sharding by sentence, and the bundled People's Daily dev file.
#include <torch/torch.h>  // before doctest: LibTorch's glog CHECK must not replace doctest's

#include <doctest/doctest.h>

#include "ethost/error.h"
#include "ethost/reader.h"
#include "plugin_host.h"
#include "process.h"
#include "test_paths.h"

namespace conll_reader_test {

std::vector<et::Row> read_sentences(et::Reader& r) {
  std::vector<et::Row> rows;
  et::Row row;
  while (r.next(row)) rows.push_back(row);
  return rows;
}

const char* kSchema = "input_schema = \"content:str:1,label:str:1\"\n";

}  // namespace conll_reader_test

TEST_SUITE("plugin.readers.conll") {
  using namespace conll_reader_test;
  TEST_CASE("sentences become rows of space-joined columns; CRLF, DOCSTART, no final blank line") {
    et::test::TempDir dir("conll");
    et::test::write_file(dir / "a.txt",
                         "-DOCSTART- O\n\n海 O\r\n钓 O\r\n厦 B-LOC\n门\tI-LOC\n\n\n\n我 O\n爱  O\n");
    auto r = et::test::plugin_host().reader("conll", kSchema);
    r->open({dir / "a.txt"});
    auto rows = read_sentences(*r);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].values == std::vector<std::string>{"海 钓 厦 门", "O O B-LOC I-LOC"});
    CHECK(rows[0].line == 3);
    CHECK(rows[1].values == std::vector<std::string>{"我 爱", "O O"});
    CHECK(rows[1].line == 10);
    CHECK(r->bad_rows().count() == 0);
    CHECK(r->rows_read() == 2);
  }

  TEST_CASE("a line with the wrong field count skips its sentence, counted at the sentence's first line") {
    et::test::TempDir dir("conll_bad");
    et::test::write_file(dir / "a.txt", "a O\nb O\n\nc O\nd\ne O\n\nf B-X\n");
    auto r = et::test::plugin_host().reader("conll", kSchema);
    r->open({dir / "a.txt"});
    auto rows = read_sentences(*r);
    REQUIRE(rows.size() == 2);
    CHECK(rows[1].values[0] == "f");
    REQUIRE(r->bad_rows().count() == 1);
    CHECK(r->bad_rows().examples()[0] ==
          dir / "a.txt" + ":4: sentence starting here: line 5 has 1 field(s), input_schema names 2");

    auto strict = et::test::plugin_host().reader("conll", std::string(kSchema) + "strict = true\n");
    strict->open({dir / "a.txt"});
    et::Row row;
    CHECK(strict->next(row));
    CHECK_THROWS_AS(strict->next(row), et::DataError);
  }

  TEST_CASE("a delimiter keeps spaces inside a field; sharding gives every sentence to one rank") {
    et::test::TempDir dir("conll_shard");
    std::string text;
    for (int i = 0; i < 10; ++i) text += "w" + std::to_string(i) + " x|O\n\n";
    et::test::write_file(dir / "a.txt", text);
    std::vector<std::string> seen;
    for (int s = 0; s < 3; ++s) {
      auto r = et::test::plugin_host().reader("conll", std::string(kSchema) + "delimiter = \"|\"\n");
      r->open({dir / "a.txt"}, s, 3);
      for (auto& row : read_sentences(*r)) seen.push_back(row.values[0]);
    }
    CHECK(seen.size() == 10);
    std::sort(seen.begin(), seen.end());
    CHECK(seen[0] == "w0 x");
  }

  TEST_CASE("the bundled People's Daily dev file: 2,318 sentences, no bad rows") {
    auto r = et::test::plugin_host().reader("conll", kSchema);
    r->open({ETHOST_SOURCE_DIR "/data/ner/peoples_daily/example.dev"});
    auto rows = read_sentences(*r);
    CHECK(rows.size() == 2318);
    CHECK(r->bad_rows().count() == 0);
  }
}
