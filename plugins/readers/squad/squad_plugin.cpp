// squad_plugin.cpp: reader/squad — SQuAD v1 / CMRC2018 JSON files as one row per question, with EasyNLP's
// MRC column names (qas_id, title_text, context_text, question_text, answer_text, start_position_text) and
// every reference answer (answers, a JSON array of {text, answer_start}).
#include <ethost/sdk.h>

#include <fstream>
#include <nlohmann/json.hpp>

namespace et::readers::squad {

const std::vector<std::string> kColumns = {
    "qas_id", "title_text", "context_text", "question_text", "answer_text", "start_position_text", "answers"};

class SquadReader final : public et::Reader {
 public:
  explicit SquadReader(const et::ConfigView& c) : bad_(c.get_bool("strict")) {
    for (const auto& name : kColumns) columns_.push_back({name, "str", 1});
  }

  void open(const std::vector<std::string>& files, int shard, int shards) override {
    for (auto& f : files) {
      std::ifstream probe(f);
      if (!probe) throw et::DataError("cannot open input table", f, "check data.tables");
    }
    files_ = files;
    shard_ = shard;
    shards_ = std::max(1, shards);
    file_idx_ = 0;
    record_ = 0;
    rows_.clear();
    next_row_ = 0;
  }

  std::vector<et::data::Column> columns() const override { return columns_; }
  et::data::BadRows& bad_rows() override { return bad_; }
  int64_t rows_read() const override { return read_; }

  bool next(et::Row& row) override {
    while (next_row_ >= rows_.size()) {
      if (file_idx_ >= files_.size()) return false;
      load(files_[file_idx_++]);
    }
    row = std::move(rows_[next_row_++]);
    ++read_;
    return true;
  }

 private:
  // A SQuAD file is one JSON document: it is parsed whole (CMRC2018's train set is 7 MB), then handed out
  // question by question. The file's structure must be right; a bad question is a bad row.
  void load(const std::string& file) {
    rows_.clear();
    next_row_ = 0;
    std::ifstream in(file, std::ios::binary);
    if (!in) throw et::DataError("cannot open input table", file);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded())
      throw et::DataError("not a JSON document", file,
                          "data.reader squad reads SQuAD / CMRC2018 JSON; use jsonl for JSON lines");
    if (!j.is_object() || !j.contains("data") || !j["data"].is_array())
      throw et::DataError("not SQuAD-style JSON: no top-level \"data\" array", file,
                          "expected {\"data\": [{\"paragraphs\": [{\"context\", \"qas\"}]}]}");
    int64_t q = 0;  // the question's 1-based number in the file: the row's "line"
    for (size_t a = 0; a < j["data"].size(); ++a) {
      const auto& article = j["data"][a];
      const std::string where = "data[" + std::to_string(a) + "]";
      if (!article.is_object() || !article.contains("paragraphs") || !article["paragraphs"].is_array())
        throw et::DataError(where + " has no \"paragraphs\" array", file);
      std::string title = article.value("title", std::string());
      for (size_t p = 0; p < article["paragraphs"].size(); ++p) {
        const auto& para = article["paragraphs"][p];
        const std::string pw = where + ".paragraphs[" + std::to_string(p) + "]";
        if (!para.is_object() || !para.contains("context") || !para["context"].is_string() ||
            !para.contains("qas") || !para["qas"].is_array())
          throw et::DataError(pw + " needs a \"context\" string and a \"qas\" array", file);
        const std::string context = para["context"].get<std::string>();
        for (const auto& qa : para["qas"]) {
          ++q;
          if ((record_++ % shards_) != shard_) continue;
          et::Row row;
          row.file = file;
          row.line = q;
          std::string why = question_row(qa, title, context, row.values);
          if (why.empty()) why = utf8_check(row.values);
          if (!why.empty()) {
            bad_.report(file, q, pw + ": " + why);
            continue;
          }
          rows_.push_back(std::move(row));
        }
      }
    }
  }

  // The cells of one question; "" or why it is bad.
  static std::string question_row(const nlohmann::json& qa, const std::string& title,
                                  const std::string& context, std::vector<std::string>& values) {
    if (!qa.is_object()) return "a qas entry is not an object";
    if (!qa.contains("id") || !(qa["id"].is_string() || qa["id"].is_number_integer()))
      return "a question has no \"id\"";
    std::string id =
        qa["id"].is_string() ? qa["id"].get<std::string>() : std::to_string(qa["id"].get<int64_t>());
    if (!qa.contains("question") || !qa["question"].is_string())
      return "question " + id + " has no \"question\" text";
    nlohmann::json answers = nlohmann::json::array();
    if (qa.contains("answers")) {
      if (!qa["answers"].is_array()) return "question " + id + ": \"answers\" is not an array";
      for (const auto& ans : qa["answers"]) {
        if (!ans.is_object() || !ans.contains("text") || !ans["text"].is_string())
          return "question " + id + ": an answer has no \"text\"";
        int64_t start = -1;
        if (ans.contains("answer_start") && ans["answer_start"].is_number_integer())
          start = ans["answer_start"].get<int64_t>();
        answers.push_back({{"text", ans["text"].get<std::string>()}, {"answer_start", start}});
      }
    }
    std::string first_text = answers.empty() ? "" : answers[0]["text"].get<std::string>();
    std::string first_start =
        answers.empty() ? "" : std::to_string(answers[0]["answer_start"].get<int64_t>());
    values = {id, title, context, qa["question"].get<std::string>(), first_text, first_start, answers.dump()};
    return "";
  }

  static std::string utf8_check(const std::vector<std::string>& values) {
    for (size_t i = 0; i < values.size(); ++i)
      if (!et::data::valid_utf8(values[i])) return kColumns[i] + " is not valid UTF-8";
    return "";
  }

  std::vector<et::data::Column> columns_;
  et::data::BadRows bad_;
  std::vector<std::string> files_;
  size_t file_idx_ = 0;
  int64_t record_ = 0, read_ = 0;
  int shard_ = 0, shards_ = 1;
  std::vector<et::Row> rows_;
  size_t next_row_ = 0;
};

}  // namespace et::readers::squad

ETHOST_PLUGIN(reg) {
  reg.add_reader("squad", [](const et::ConfigView& cfg, et::Context&) {
    return std::make_unique<et::readers::squad::SquadReader>(cfg);
  });
}
