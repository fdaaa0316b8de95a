// jsonl_reader_test.cpp: reader/jsonl (objects as JSON text) — FewCLUE lines, numbers and lists as text,
// object fields as compact JSON, missing fields and non-JSON lines counted as bad rows.
#include <torch/torch.h>  // before doctest: LibTorch's glog CHECK must not replace doctest's

#include <doctest/doctest.h>

#include "ethost/reader.h"
#include "plugin_host.h"
#include "process.h"
#include "test_paths.h"

namespace {

std::vector<et::Row> read_jsonl_rows(et::Reader& r) {
  std::vector<et::Row> rows;
  et::Row row;
  while (r.next(row)) rows.push_back(row);
  return rows;
}

}  // namespace

TEST_SUITE("plugin.readers.jsonl") {
  TEST_CASE("jsonl: FewCLUE lines, numbers and lists as text, missing fields and non-JSON counted") {
    et::test::TempDir dir("jsonl");
    et::test::write_file(
        dir / "a.json",
        "{\"label\": 108, \"sentence\": \"上课\", \"ids\": [1, 2]}\n\n{\"sentence\": \"无标签\"}\nnot json\n"
        "{\"label\": \"101\", \"sentence\": \"新闻\", \"ids\": [3, 4]}\n");
    auto r =
        et::test::plugin_host().reader("jsonl", "input_schema = \"sentence:str:1,label:str:1,ids:int:2\"\n");
    r->open({dir / "a.json"});
    auto rows = read_jsonl_rows(*r);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].values == std::vector<std::string>{"上课", "108", "1,2"});
    CHECK(rows[1].line == 5);
    CHECK(r->bad_rows().count() == 2);
    CHECK(r->bad_rows().examples()[0] == dir / "a.json" + ":3: field 'label' is missing");
    CHECK(r->bad_rows().examples()[1] == dir / "a.json" + ":4: not a JSON object");
  }

  TEST_CASE(
      "jsonl: an object field is its compact JSON text (CLUENER spans); a list of objects is a bad row") {
    et::test::TempDir dir("jsonl_obj");
    et::test::write_file(dir / "a.json",
                         "{\"text\": \"彭小军认为\", \"label\": {\"name\": {\"彭小军\": [[0, 2]]}}}\n"
                         "{\"text\": \"x\", \"label\": [{\"a\": 1}]}\n");
    auto r = et::test::plugin_host().reader("jsonl", "input_schema = \"text:str:1,label:str:1\"\n");
    r->open({dir / "a.json"});
    auto rows = read_jsonl_rows(*r);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].values == std::vector<std::string>{"彭小军认为", "{\"name\":{\"彭小军\":[[0,2]]}}"});
    CHECK(r->bad_rows().count() == 1);
  }

  TEST_CASE("jsonl: the bundled FewCLUE TNEWS file reads without bad rows") {
    auto r = et::test::plugin_host().reader("jsonl", "input_schema = \"sentence:str:1,label:str:1\"\n");
    r->open({ETHOST_SOURCE_DIR "/data/fewclue/tnews/dev_few_all.json"});
    auto rows = read_jsonl_rows(*r);
    CHECK(rows.size() > 1000);
    CHECK(r->bad_rows().count() == 0);
  }
}
