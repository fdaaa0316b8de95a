// readers_test.cpp: reader/tsv (TSV and quoted CSV) — schemas, multiple files, headers, bad rows with
// file:line, strict mode, sharding. reader/jsonl's tests are in plugins/readers/jsonl/tests.
#include <torch/torch.h>  // before doctest: LibTorch's glog CHECK must not replace doctest's

#include <doctest/doctest.h>

#include "ethost/error.h"
#include "ethost/reader.h"
#include "plugin_host.h"
#include "process.h"
#include "test_paths.h"

namespace {

std::vector<et::Row> read_all(et::Reader& r) {
  std::vector<et::Row> rows;
  et::Row row;
  while (r.next(row)) rows.push_back(row);
  return rows;
}

}  // namespace

TEST_SUITE("plugin.readers") {
  TEST_CASE("tsv: columns by schema, several files, header skipping, bad rows counted with file:line") {
    et::test::TempDir dir("tsv");
    et::test::write_file(dir / "a.tsv", "text\tlabel\tscore\nhello\tpos\t1.5\nbad row\nworld\tneg\tx\n");
    et::test::write_file(dir / "b.tsv", "text\tlabel\tscore\n\tneg\t2\nend\tpos\t3e-1\r\n");
    auto r = et::test::plugin_host().reader(
        "tsv", "input_schema = \"text:str:1,label:str:1,score:float:1\"\nskip_first_line = true\n");
    r->open({dir / "a.tsv", dir / "b.tsv"});
    auto rows = read_all(*r);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].values == std::vector<std::string>{"hello", "pos", "1.5"});
    CHECK(rows[0].line == 2);
    CHECK(rows[1].values[0].empty());
    CHECK(rows[1].file == dir / "b.tsv");
    CHECK(rows[2].values[2] == "3e-1");  // \r stripped
    CHECK(r->bad_rows().count() == 2);
    auto ex = r->bad_rows().examples();
    CHECK(ex[0] == dir / "a.tsv" + ":3: expected 3 columns, got 1");
    CHECK(ex[1] == dir / "a.tsv" + ":4: column 'score' value 'x' is not a number");
    CHECK(r->rows_read() == 3);
  }

  TEST_CASE("tsv: strict mode stops at the first bad row; a missing file is a data error") {
    et::test::TempDir dir("tsvs");
    et::test::write_file(dir / "a.tsv", "ok\t1\nbroken\n");
    auto r = et::test::plugin_host().reader("tsv", "input_schema = \"t:str:1,n:int:1\"\nstrict = true\n");
    r->open({dir / "a.tsv"});
    et::Row row;
    CHECK(r->next(row));
    CHECK_THROWS_WITH_AS(r->next(row), doctest::Contains("a.tsv:2: bad row: expected 2 columns"),
                         et::DataError);
    CHECK_THROWS_WITH_AS(r->open({dir / "nope.tsv"}), doctest::Contains("nope.tsv: cannot open input table"),
                         et::DataError);
  }

  TEST_CASE("csv: quoted fields with delimiters, doubled quotes and newlines") {
    et::test::TempDir dir("csv");
    et::test::write_file(dir / "a.csv",
                         "\"a, b\",1\n\"say \"\"hi\"\"\",2\n\"two\nlines\",3\nplain,4\n\"open,5\n");
    auto r = et::test::plugin_host().reader(
        "tsv", "input_schema = \"text:str:1,n:int:1\"\ndelimiter = \",\"\nquote = '\"'\n");
    r->open({dir / "a.csv"});
    auto rows = read_all(*r);
    REQUIRE(rows.size() == 4);
    CHECK(rows[0].values[0] == "a, b");
    CHECK(rows[1].values[0] == "say \"hi\"");
    CHECK(rows[2].values[0] == "two\nlines");
    CHECK(rows[3].line == 5);
    CHECK(r->bad_rows().count() == 1);
    CHECK(r->bad_rows().examples()[0].find(":6: unterminated quoted field") != std::string::npos);
  }

  TEST_CASE("sharding: every row goes to exactly one shard") {
    et::test::TempDir dir("shard");
    std::string text;
    for (int i = 0; i < 25; ++i) text += "t" + std::to_string(i) + "\t" + std::to_string(i) + "\n";
    et::test::write_file(dir / "a.tsv", text);
    std::vector<std::string> seen;
    for (int s = 0; s < 3; ++s) {
      auto r = et::test::plugin_host().reader("tsv", "input_schema = \"t:str:1,n:int:1\"\n");
      r->open({dir / "a.tsv"}, s, 3);
      for (auto& row : read_all(*r)) {
        CHECK(std::stoi(row.values[1]) % 3 == s);
        seen.push_back(row.values[0]);
      }
    }
    CHECK(seen.size() == 25);
  }
}
