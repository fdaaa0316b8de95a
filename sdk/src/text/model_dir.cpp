// model_dir.cpp: Tokenizer::from_model_dir / save — vocab.txt plus the HF tokenizer_config.json keys BERT
// uses.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ethost/error.h"
#include "ethost/io/state_dict.h"
#include "ethost/text/tokenizer.h"

namespace et::text {
namespace {

bool get_bool(const nlohmann::json& j, const char* key, bool def, const std::string& file) {
  if (!j.contains(key) || j[key].is_null()) return def;
  if (!j[key].is_boolean()) throw ConfigError(std::string("'") + key + "' must be true or false", file);
  return j[key].get<bool>();
}

}  // namespace

Tokenizer Tokenizer::from_model_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw ConfigError("model directory does not exist", dir);
  TokenizerOptions o;
  const std::string cfg = (fs::path(dir) / "tokenizer_config.json").string();
  if (fs::exists(cfg)) {
    std::ifstream in(cfg);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError(std::string("invalid JSON: ") + e.what(), cfg);
    }
    if (!j.is_object()) throw ConfigError("expected a JSON object", cfg);
    o.do_lower_case = get_bool(j, "do_lower_case", true, cfg);
    o.tokenize_chinese_chars = get_bool(j, "tokenize_chinese_chars", true, cfg);
    if (j.contains("strip_accents") && !j["strip_accents"].is_null())
      o.strip_accents = get_bool(j, "strip_accents", false, cfg);
    if (j.contains("model_max_length") && j["model_max_length"].is_number()) {
      // HF writes int(1e30) for "no limit".
      const double m = j["model_max_length"].get<double>();
      o.model_max_length = m > 0 && m < 1e9 ? static_cast<int64_t>(m) : 0;
    }
    if (j.contains("never_split") && j["never_split"].is_array())
      for (auto& s : j["never_split"])
        if (s.is_string()) o.never_split.push_back(s.get<std::string>());
  }
  return Tokenizer(Vocab::from_file((fs::path(dir) / "vocab.txt").string()), std::move(o));
}

void Tokenizer::save(const std::string& dir) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw DataError("cannot create the tokenizer directory: " + ec.message(), dir);
  const Vocab& v = vocab();
  std::string text;
  for (size_t i = 0; i < v.size(); ++i) text += v.token(static_cast<int64_t>(i)) + "\n";
  io::write_file_atomic(dir + "/vocab.txt", text);
  const TokenizerOptions& o = options();
  nlohmann::json tc = {
      {"tokenizer_class", "BertTokenizer"},
      {"do_lower_case", o.do_lower_case},
      {"tokenize_chinese_chars", o.tokenize_chinese_chars},
      {"strip_accents", o.strip_accents ? nlohmann::json(*o.strip_accents) : nlohmann::json(nullptr)}};
  if (int64_t m = o.max_length > 0 ? o.max_length : o.model_max_length; m > 0) tc["model_max_length"] = m;
  if (!o.never_split.empty()) tc["never_split"] = o.never_split;
  io::write_file_atomic(dir + "/tokenizer_config.json", tc.dump(2) + "\n");
}

}  // namespace et::text
