// config_test.cpp: et::Config / ConfigView — parsing, origins, typed getters, overrides and schema validation.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>

#include "ethost/config.h"
#include "ethost/error.h"
#include "process.h"

using et::Config;
using et::ConfigError;
using et::ConfigKeySpec;

namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

ConfigKeySpec spec(const std::string& key, const std::string& type, bool required = false) {
  ConfigKeySpec s;
  s.key = key;
  s.type = type;
  s.required = required;
  return s;
}

}  // namespace

TEST_SUITE("unit.config") {
  TEST_CASE("typed getters read values and remember the file line") {
    auto c = Config::from_string("a = 1\n[train]\nlr = 2e-5\nname = \"x\"\nflag = true\nids = [1, 2]\n", "run.toml");
    auto v = c.view();
    CHECK(v.get_int("a") == 1);
    CHECK(v.get_double("train.lr") == doctest::Approx(2e-5));
    CHECK(v.get_double("a") == 1.0);  // integers are numbers
    CHECK(v.get_string("train.name") == "x");
    CHECK(v.get_bool("train.flag"));
    CHECK(v.get_int_list("train.ids") == std::vector<int64_t>{1, 2});
    CHECK(v.where("train.lr") == "run.toml:3");
    CHECK(v.sub("train").get_string("name") == "x");
    CHECK(v.sub("train").where("name") == "run.toml:4");
    CHECK(v.keys() == std::vector<std::string>{"a", "train"});
    CHECK(v.get_int("missing", 7) == 7);
  }

  TEST_CASE("wrong type and missing keys name the key and where it came from") {
    auto c = Config::from_string("[train]\nmax_steps = \"ten\"\n", "q.toml");
    std::string e = error_of([&] { c.view().get_int("train.max_steps"); });
    CHECK(e.find("q.toml:2") != std::string::npos);
    CHECK(e.find("train.max_steps") != std::string::npos);
    CHECK(e.find("integer") != std::string::npos);
    e = error_of([&] { c.view().get_string("data.tables"); });
    CHECK(e.find("missing required config key 'data.tables'") != std::string::npos);
  }

  TEST_CASE("TOML syntax errors report file, line and column with exit code 2") {
    try {
      Config::from_string("a = 1\nb = = 2\n", "bad.toml");
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).rfind("bad.toml:2:", 0) == 0);
      CHECK(e.exit_code() == 2);
    }
  }

  TEST_CASE("set_from_text parses TOML values and falls back to strings") {
    Config c;
    c.set_from_text("train.max_steps", "20", "--set");
    c.set_from_text("optimizer.lr", "1e-5", "--set");
    c.set_from_text("data.tables", "a.tsv,b.tsv", "--tables");
    c.set_from_text("x.flag", "true", "--set");
    c.set_from_text("x.day", "2024-01-01", "--set");
    auto v = c.view();
    CHECK(v.get_int("train.max_steps") == 20);
    CHECK(v.get_double("optimizer.lr") == doctest::Approx(1e-5));
    CHECK(v.get_string_list("data.tables") == std::vector<std::string>{"a.tsv", "b.tsv"});
    CHECK(v.get_bool("x.flag"));
    CHECK(v.get_string("x.day") == "2024-01-01");
    CHECK(v.where("data.tables") == "--tables");
  }

  TEST_CASE("merge order: defaults <- file <- flags") {
    Config defaults;
    defaults.set_from_text("a", "1", "defaults");
    defaults.set_from_text("b", "1", "defaults");
    defaults.set_from_text("c", "1", "defaults");
    auto file = Config::from_string("b = 2\nc = 2\n", "f.toml");
    Config flags;
    flags.set_from_text("c", "3", "--set");
    Config cfg;
    cfg.merge_from(defaults);
    cfg.merge_from(file);
    cfg.merge_from(flags);
    auto v = cfg.view();
    CHECK(v.get_int("a") == 1);
    CHECK(v.get_int("b") == 2);
    CHECK(v.get_int("c") == 3);
    CHECK(v.where("b") == "f.toml:1");
    Config more;
    more.set_from_text("a", "9", "x");
    cfg.merge_defaults(more);
    CHECK(cfg.view().get_int("a") == 1);  // merge_defaults never overrides
  }

  TEST_CASE("views stay stable when the config changes later (copy on write)") {
    Config c;
    c.set_from_text("a", "1", "x");
    auto v = c.view();
    c.set_from_text("a", "2", "x");
    CHECK(v.get_int("a") == 1);
    CHECK(c.view().get_int("a") == 2);
  }

  TEST_CASE("validation: unknown keys list the known ones and suggest a close match") {
    auto c = Config::from_string("greting = \"hi\"\n", "h.toml");
    std::vector<ConfigKeySpec> specs = {spec("greeting", "string"), spec("repeat", "int")};
    std::string e = error_of([&] { et::validate_config(c.view(), specs, {}, "app/hello"); });
    CHECK(e.find("unknown config key 'greting' for app/hello") != std::string::npos);
    CHECK(e.find("h.toml:1") != std::string::npos);
    CHECK(e.find("did you mean 'greeting'") != std::string::npos);
    CHECK(e.find("known keys: greeting, repeat") != std::string::npos);
  }

  TEST_CASE("validation: types, ranges, choices, required keys, owned sections") {
    std::vector<ConfigKeySpec> specs = {spec("n", "int"), spec("mode", "string"), spec("req", "string", true),
                                        spec("lst", "string_list")};
    specs[0].min = 1;
    specs[0].max = 10;
    specs[1].choices = {"a", "b"};
    auto ok = Config::from_string("n = 3\nmode = \"a\"\nreq = \"x\"\nlst = \"p,q\"\n[model]\nanything = 1\n", "v.toml");
    CHECK_NOTHROW(et::validate_config(ok.view(), specs, {"model"}, "app/t"));
    auto bad_type = Config::from_string("n = \"3\"\nreq = \"x\"\n", "v.toml");
    CHECK(error_of([&] { et::validate_config(bad_type.view(), specs, {}, "app/t"); }).find("must be an integer") !=
          std::string::npos);
    auto bad_range = Config::from_string("n = 30\nreq = \"x\"\n", "v.toml");
    CHECK(error_of([&] { et::validate_config(bad_range.view(), specs, {}, "app/t"); }).find("out of range [1, 10]") !=
          std::string::npos);
    auto bad_choice = Config::from_string("mode = \"c\"\nreq = \"x\"\n", "v.toml");
    CHECK(error_of([&] { et::validate_config(bad_choice.view(), specs, {}, "app/t"); }).find("not one of: a, b") !=
          std::string::npos);
    auto missing = Config::from_string("n = 2\n", "v.toml");
    CHECK(error_of([&] { et::validate_config(missing.view(), specs, {}, "app/t"); })
              .find("missing required config key 'req'") != std::string::npos);
    auto unowned = Config::from_string("req = \"x\"\n[model]\nanything = 1\n", "v.toml");
    CHECK(error_of([&] { et::validate_config(unowned.view(), specs, {}, "app/t"); })
              .find("unknown config key 'model.anything'") != std::string::npos);
  }

  TEST_CASE("to_toml and to_json render values") {
    auto c = Config::from_string("[s]\nx = 1\ny = \"q\\\"z\"\n", "r.toml");
    CHECK(c.view().to_json("s") == R"({"x":1,"y":"q\"z"})");
    CHECK(c.view().to_json("s.y") == R"("q\"z")");
    CHECK(c.to_toml().find("[s]") != std::string::npos);
    CHECK(c.leaf_keys() == std::vector<std::string>{"s.x", "s.y"});
  }

  TEST_CASE("relative paths in a config file resolve against its folder; --set values do not") {
    namespace fs = std::filesystem;
    et::test::TempDir tmp("config_paths");
    fs::create_directories(tmp / "conf");
    et::test::write_file(tmp / "labels.txt", "a\nb\n");
    et::test::write_file(
        tmp / "conf/c.toml",
        "[data]\ntables = [\"../t/train.tsv\", \"/abs/dev.tsv\"]\nvocab_file = \"v.txt\"\n"
        "labels = [\"../labels.txt\"]\nnames = [\"pos\"]\nother = \"x/y\"\n"
        "commas = \"a.tsv, ../b.tsv\"\nwrong = 3\n[train]\ncheckpoint_dir = \"../runs/x\"\n");
    // The config file named by a relative path, as `--config conf/c.toml` run from tmp would.
    const std::string file = fs::relative(tmp / "conf/c.toml").string();
    Config c = Config::from_file(file);
    CHECK(c.view().source_file() == file);
    c.set_from_text("data.flag_path", "\"from/cwd\"", "--set");
    std::vector<ConfigKeySpec> specs = {
        spec("data.tables", "path_list"),    spec("data.vocab_file", "path"),
        spec("data.labels", "list_or_file"), spec("data.names", "list_or_file"),
        spec("data.other", "string"),        spec("data.commas", "path_list"),
        spec("data.wrong", "path"),          spec("data.flag_path", "path"),
        spec("checkpoint_dir", "path")};
    et::resolve_config_paths(c, specs);
    et::resolve_config_paths(c, {spec("checkpoint_dir", "path")}, "train");
    const fs::path folder = fs::path(file).parent_path();
    auto at = [&](const std::string& p) { return (folder / p).lexically_normal().string(); };
    auto v = c.view();
    CHECK(v.get_string_list("data.tables") == std::vector<std::string>{at("../t/train.tsv"), "/abs/dev.tsv"});
    CHECK(v.get_string("data.vocab_file") == at("v.txt"));
    CHECK(v.get_string_list("data.labels") == std::vector<std::string>{at("../labels.txt")});
    CHECK(v.get_string_list("data.names") == std::vector<std::string>{"pos"});  // labels, not a file
    CHECK(v.get_string("data.other") == "x/y");                                 // not a path key
    CHECK(v.get_string_list("data.commas") == std::vector<std::string>{at("a.tsv"), at("../b.tsv")});
    CHECK(v.get_int("data.wrong") == 3);  // left for validate_config to report
    CHECK(v.get_string("data.flag_path") == "from/cwd");
    CHECK(v.get_string("train.checkpoint_dir") == at("../runs/x"));
    CHECK(v.where("data.vocab_file") == file + ":3");  // the origin is kept for messages
    // Kept through merges (the host merges plugin defaults <- file <- flags).
    Config merged;
    merged.merge_from(Config::from_file(file));
    CHECK(merged.view().source_file() == file);
    CHECK(Config::from_string("x = 1", "s").view().source_file().empty());
  }

  TEST_CASE("path types validate like strings and string lists") {
    auto c = Config::from_string("p = \"a\"\nl = [\"a\", \"b\"]\nn = 1\n", "t.toml");
    CHECK_NOTHROW(et::validate_config(c.view(), {spec("p", "path"), spec("l", "path_list"), spec("n", "int")},
                                      {}, "app/x"));
    CHECK_NOTHROW(et::validate_config(
        c.view(), {spec("p", "list_or_file"), spec("l", "list_or_file"), spec("n", "int")}, {}, "app/x"));
    CHECK(error_of([&] {
            et::validate_config(c.view(), {spec("p", "path"), spec("l", "path"), spec("n", "int")}, {},
                                "app/x");
          }).find("config key 'l' must be a path (a string)") != std::string::npos);
  }
}
