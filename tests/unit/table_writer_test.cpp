// table_writer_test.cpp: et::io::TableWriter — header, per-column escaping, other delimiters, row checks and
// write errors naming the file.
#include <doctest/doctest.h>

#include "ethost/error.h"
#include "ethost/io/table_writer.h"
#include "process.h"

using et::io::CellEscape;
using et::io::TableWriter;

TEST_SUITE("unit.table_writer") {
  TEST_CASE("a header and rows; raw columns as they are, text columns with tabs and line breaks as spaces") {
    et::test::TempDir dir("tw");
    TableWriter w(dir / "out.tsv", {{"predictions", CellEscape::none}, {"text", CellEscape::spaces}}, {true});
    w.write_row({"0.25,0.75", "a\tb\nc\r\n"});
    w.write_row({"[1,2]", ""});
    w.close();
    CHECK(w.rows() == 2);
    CHECK(et::test::read_file(dir / "out.tsv") == "predictions\ttext\n0.25,0.75\ta b c  \n[1,2]\t\n");
  }

  TEST_CASE("no header by default; no columns gives empty lines; another delimiter is escaped too") {
    et::test::TempDir dir("tw2");
    {
      TableWriter w(dir / "a.tsv", {{"x", CellEscape::none}});
      w.write_row({"1"});
      w.close();
    }
    CHECK(et::test::read_file(dir / "a.tsv") == "1\n");
    {
      TableWriter w(dir / "b.csv", {{"a"}, {"b"}}, {true, ','});
      w.write_row({"x,y", "z"});
      w.close();
    }
    CHECK(et::test::read_file(dir / "b.csv") == "a,b\nx y,z\n");
    CHECK(TableWriter::escape("a\tb", CellEscape::none) == "a\tb");
    CHECK(TableWriter::escape("a\tb;c", CellEscape::spaces, ';') == "a b c");
  }

  TEST_CASE("a row with another number of cells is an internal error; an unwritable file a data error") {
    et::test::TempDir dir("tw3");
    TableWriter w(dir / "a.tsv", {{"x"}, {"y"}});
    CHECK_THROWS_AS(w.write_row({"only one"}), et::InternalError);
    et::io::TableWriterOptions o;
    o.what = "the predictions";
    o.shown_as = "final.tsv";
    CHECK_THROWS_WITH_AS(TableWriter(dir / "no/such/dir/a.tsv", {{"x"}}, o),
                         doctest::Contains("final.tsv: cannot write the predictions"), et::DataError);
  }
}
