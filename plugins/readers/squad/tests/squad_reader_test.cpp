// squad_reader_test.cpp: reader/squad — SQuAD / CMRC2018 JSON as one row per question with EasyNLP's MRC
// columns, every answer kept, bad questions counted with their number, broken files refused, sharding.
#include <torch/torch.h>  // before doctest: LibTorch's glog CHECK must not replace doctest's

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "ethost/error.h"
#include "ethost/reader.h"
#include "plugin_host.h"
#include "process.h"
#include "test_paths.h"

namespace squad_reader {

std::vector<et::Row> read_all(et::Reader& r) {
  std::vector<et::Row> rows;
  et::Row row;
  while (r.next(row)) rows.push_back(row);
  return rows;
}

const char* kFile = R"({"version": "v1", "data": [
 {"title": "T1", "paragraphs": [{"context": "猫在桌上。", "qas": [
   {"id": "Q1", "question": "猫在哪？", "answers": [{"text": "桌上", "answer_start": 2}, {"text": "在桌上", "answer_start": 1}]},
   {"id": "Q2", "answers": []},
   {"id": 7, "question": "谁？"}]}]},
 {"title": "T2", "paragraphs": [{"context": "Tom runs.", "qas": [
   {"id": "Q3", "question": "Who runs?", "answers": [{"text": "Tom", "answer_start": 0}]}]}]}]})";

}  // namespace squad_reader

TEST_SUITE("plugin.readers") {
  using namespace squad_reader;
  TEST_CASE("squad: one row per question, EasyNLP's columns, all answers as JSON, bad questions counted") {
    et::test::TempDir dir("squad");
    et::test::write_file(dir / "a.json", kFile);
    auto r = et::test::plugin_host().reader("squad", "");
    r->open({dir / "a.json"});
    std::vector<std::string> names;
    for (auto& c : r->columns()) names.push_back(c.name);
    CHECK(names == std::vector<std::string>{"qas_id", "title_text", "context_text", "question_text",
                                            "answer_text", "start_position_text", "answers"});
    auto rows = read_all(*r);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].values[0] == "Q1");
    CHECK(rows[0].values[1] == "T1");
    CHECK(rows[0].values[2] == "猫在桌上。");
    CHECK(rows[0].values[4] == "桌上");
    CHECK(rows[0].values[5] == "2");
    auto answers = nlohmann::json::parse(rows[0].values[6]);
    REQUIRE(answers.size() == 2);
    CHECK(answers[1]["text"] == "在桌上");
    CHECK(answers[1]["answer_start"] == 1);
    CHECK(rows[1].values[0] == "7");  // numeric ids as text
    CHECK(rows[1].values[4].empty());
    CHECK(rows[1].values[6] == "[]");
    CHECK(rows[1].line == 3);  // the question's number in the file
    CHECK(rows[2].values[3] == "Who runs?");
    CHECK(r->bad_rows().count() == 1);
    CHECK(et::test::contains(r->bad_rows().examples().at(0),
                             "a.json:2: data[0].paragraphs[0]: question Q2 has no"));
  }

  TEST_CASE("squad: a file that is not SQuAD JSON is a data error; sharding splits the questions") {
    et::test::TempDir dir("squad_bad");
    et::test::write_file(dir / "lines.json", "{\"a\": 1}\n{\"b\": 2}\n");
    et::test::write_file(dir / "nodata.json", "{\"version\": 1}");
    auto r = et::test::plugin_host().reader("squad", "");
    r->open({dir / "lines.json"});
    et::Row row;
    CHECK_THROWS_WITH_AS(r->next(row), doctest::Contains("not a JSON document"), et::DataError);
    r->open({dir / "nodata.json"});
    CHECK_THROWS_WITH_AS(r->next(row), doctest::Contains("no top-level \"data\" array"), et::DataError);
    et::test::write_file(dir / "a.json", kFile);
    auto s = et::test::plugin_host().reader("squad", "");
    s->open({dir / "a.json"}, 1, 2);
    auto rows = read_all(*s);
    REQUIRE(rows.size() == 1);  // questions 2 (bad) and 4 of 4
    CHECK(rows[0].values[0] == "Q3");
    CHECK(s->bad_rows().count() == 1);
  }
}
