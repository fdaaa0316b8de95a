// line_file_reader_test.cpp: et::io::LineFileReader on a tiny in-test reader — CRLF, header lines, several
// files, sharding over files, bad rows counted with file:line or fatal in strict mode, multi-line records.
#include <doctest/doctest.h>

#include "ethost/error.h"
#include "ethost/io/line_file_reader.h"
#include "process.h"

namespace {

// "key=value" lines; a line without '=' is a bad row. With `grouped`, a record is the lines up to a blank
// line (values joined with '+').
class KvReader final : public et::io::LineFileReader {
 public:
  KvReader(bool header, bool strict, bool grouped = false)
      : LineFileReader({{"key", "str", 1}, {"value", "str", 1}}, header, strict), grouped_(grouped) {}

 protected:
  bool read_record(Record& r) override {
    if (!grouped_) return LineFileReader::read_record(r);
    std::string line;
    while (next_line(line)) {
      if (blank(line)) {
        if (!r.parts.empty()) return true;
        continue;
      }
      if (r.parts.empty()) r.line = line_number();
      r.parts.push_back(line);
    }
    return !r.parts.empty();
  }
  std::string parse(Record& r, std::vector<std::string>& values) override {
    std::string key, value;
    for (const auto& line : r.parts) {
      auto eq = line.find('=');
      if (eq == std::string::npos) return "no '=' in '" + line + "'";
      key += (key.empty() ? "" : "+") + line.substr(0, eq);
      value += (value.empty() ? "" : "+") + line.substr(eq + 1);
    }
    values = {key, value};
    return "";
  }

 private:
  bool grouped_;
};

std::vector<et::Row> read_all(et::Reader& r) {
  std::vector<et::Row> rows;
  et::Row row;
  while (r.next(row)) rows.push_back(row);
  return rows;
}

}  // namespace

TEST_SUITE("unit.line_file_reader") {
  TEST_CASE(
      "several files, header lines skipped per file, CRLF stripped, blank lines skipped, line numbers") {
    et::test::TempDir dir("lfr");
    et::test::write_file(dir / "a.txt", "key=value\r\na=1\r\n\r\n  \t\r\nb=2\r\n");
    et::test::write_file(dir / "b.txt", "key=value\nc=3");  // no newline at the end
    KvReader r(/*header=*/true, /*strict=*/false);
    r.open({dir / "a.txt", dir / "b.txt"});
    auto rows = read_all(r);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].values == std::vector<std::string>{"a", "1"});  // no '\r' left
    CHECK(rows[0].line == 2);
    CHECK(rows[0].file == dir / "a.txt");
    CHECK(rows[1].values == std::vector<std::string>{"b", "2"});
    CHECK(rows[1].line == 5);
    CHECK(rows[2].values == std::vector<std::string>{"c", "3"});
    CHECK(rows[2].file == dir / "b.txt");
    CHECK(rows[2].line == 2);
    CHECK(r.rows_read() == 3);
    CHECK(r.columns().size() == 2);
    CHECK(r.bad_rows().count() == 0);
  }

  TEST_CASE("without skip_first_line the first line is a record") {
    et::test::TempDir dir("lfr_nohdr");
    et::test::write_file(dir / "a.txt", "x=1\ny=2\n");
    KvReader r(false, false);
    r.open({dir / "a.txt"});
    CHECK(read_all(r).size() == 2);
  }

  TEST_CASE("bad rows are counted and reported with file:line, then skipped; strict makes the first fatal") {
    et::test::TempDir dir("lfr_bad");
    et::test::write_file(dir / "a.txt", "a=1\nbroken\nb=2\nalso broken\n");
    KvReader r(false, false);
    r.open({dir / "a.txt"});
    auto rows = read_all(r);
    CHECK(rows.size() == 2);
    CHECK(r.bad_rows().count() == 2);
    REQUIRE(r.bad_rows().examples().size() == 2);
    CHECK(r.bad_rows().examples()[0] == dir / "a.txt" + ":2: no '=' in 'broken'");
    CHECK(r.bad_rows().examples()[1] == dir / "a.txt" + ":4: no '=' in 'also broken'");

    KvReader strict(false, true);
    strict.open({dir / "a.txt"});
    et::Row row;
    CHECK(strict.next(row));
    CHECK_THROWS_WITH_AS(strict.next(row), doctest::Contains("a.txt:2: bad row: no '=' in 'broken'"),
                         et::DataError);
  }

  TEST_CASE("sharding: record k goes to shard k % n, counted over all files; bad rows only by their shard") {
    et::test::TempDir dir("lfr_shard");
    std::string a, b;
    for (int i = 0; i < 7; ++i) a += "a" + std::to_string(i) + "=" + std::to_string(i) + "\n";
    for (int i = 7; i < 12; ++i)
      b += (i == 9 ? std::string("bad") : "b" + std::to_string(i) + "=" + std::to_string(i)) + "\n";
    et::test::write_file(dir / "a.txt", a);
    et::test::write_file(dir / "b.txt", b);
    std::vector<int> seen;
    int64_t bad = 0;
    for (int s = 0; s < 3; ++s) {
      KvReader r(false, false);
      r.open({dir / "a.txt", dir / "b.txt"}, s, 3);
      for (auto& row : read_all(r)) {
        const int k = std::stoi(row.values[1]);
        CHECK(k % 3 == s);
        seen.push_back(k);
      }
      bad += r.bad_rows().count();
      if (s == 9 % 3) CHECK(r.bad_rows().count() == 1);
    }
    CHECK(seen.size() == 11);
    CHECK(bad == 1);
  }

  TEST_CASE("open: a missing file is a data error before anything is read; open again restarts") {
    et::test::TempDir dir("lfr_open");
    et::test::write_file(dir / "a.txt", "a=1\n");
    KvReader r(false, false);
    CHECK_THROWS_WITH_AS(r.open({dir / "a.txt", dir / "nope.txt"}),
                         doctest::Contains("nope.txt: cannot open input table"), et::DataError);
    r.open({dir / "a.txt"});
    CHECK(read_all(r).size() == 1);
    r.open({dir / "a.txt"});
    CHECK(read_all(r).size() == 1);
  }

  TEST_CASE("a reader's own framing: multi-line records, the last one ended by the end of the file") {
    et::test::TempDir dir("lfr_group");
    et::test::write_file(dir / "a.txt", "hdr\n\nx=1\ny=2\r\n\n\nz=3\nbad\n");
    et::test::write_file(dir / "b.txt", "hdr\nw=4\nv=5");
    KvReader r(/*header=*/true, false, /*grouped=*/true);
    r.open({dir / "a.txt", dir / "b.txt"});
    auto rows = read_all(r);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].values == std::vector<std::string>{"x+y", "1+2"});
    CHECK(rows[0].line == 3);
    CHECK(rows[1].values == std::vector<std::string>{"w+v", "4+5"});
    CHECK(rows[1].file == dir / "b.txt");
    CHECK(r.bad_rows().examples().at(0) == dir / "a.txt" + ":7: no '=' in 'bad'");
  }
}
