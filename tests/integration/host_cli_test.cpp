// host_cli_test.cpp: the ethost binary end to end — listing, describing, config resolution and its errors.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::run_ethost;

namespace {
// Hermetic: only the in-tree plugins.
std::vector<std::string> base(std::vector<std::string> extra) {
  std::vector<std::string> a{"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}
}  // namespace

TEST_SUITE("integration.host") {
  TEST_CASE("--version names the host, SDK ABI, LibTorch and build type") {
    auto r = run_ethost({"--version"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "ethost 0.1.0"));
    CHECK(contains(r.out, "SDK ABI 3.0"));
    CHECK(contains(r.out, "toolkit 1.1"));
    CHECK(contains(r.out, "LibTorch 1.13"));
    CHECK(contains(r.out, "build "));
  }

  TEST_CASE("--list shows in-tree plugins with versions; --json is valid JSON") {
    auto r = run_ethost(base({"--list"}));
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "KIND"));
    CHECK(contains(r.out, "STATUS"));
    CHECK(contains(r.out, "hello"));
    CHECK(contains(r.out, "examples.echo"));
    auto j = run_ethost(base({"--list", "--json"}));
    REQUIRE(j.exit_code == 0);
    auto doc = nlohmann::json::parse(j.out);
    bool hello = false;
    for (auto& c : doc["components"])
      if (c["kind"] == "app" && c["name"] == "hello") {
        hello = true;
        CHECK(c["version"] == "1.0.0");
        CHECK(c["status"] == "ok");
      }
    CHECK(hello);
  }

  TEST_CASE("--describe app/hello shows every key with type and default") {
    auto r = run_ethost(base({"--describe", "app/hello"}));
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "app/hello 1.0.0"));
    CHECK(contains(r.out, "requires: model"));
    CHECK(contains(r.out, "greeting"));
    CHECK(contains(r.out, "'hello'"));
    CHECK(contains(r.out, "repeat      int"));
    CHECK(contains(r.out, "[1, 100]"));
    CHECK(contains(r.out, "component(model)"));
    auto bad = run_ethost(base({"--describe", "app/nope"}));
    CHECK(bad.exit_code == 3);
    CHECK(contains(bad.err, "app 'nope': not found"));
    CHECK(contains(bad.err, "available: "));  // sorted names: other apps may come before hello
    CHECK(contains(bad.err.substr(bad.err.find("available: ")), "hello"));
  }

  TEST_CASE("--app hello runs, creating model/echo through the context") {
    auto r = run_ethost(
        base({"--app", "hello", "--set", "model.scale=2", "--set", "greeting=hi", "--threads", "2"}));
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "hi from app/hello (mode train)"));
    CHECK(contains(r.out, "output: 0 2 4 6"));
    CHECK(contains(r.err, "threads: LibTorch intra-op 2"));
    CHECK(contains(r.err, "resolved config"));
  }

  TEST_CASE("config order: defaults <- file <- flags, shown by --dump-config") {
    et::test::TempDir dir("cfg");
    et::test::write_file(dir / "run.toml", "greeting = \"from-file\"\nrepeat = 3\n[model]\nscale = 5.0\n");
    auto r = run_ethost(
        base({"--app", "hello", "--config", dir / "run.toml", "--set", "repeat=4", "--dump-config"}));
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "greeting = 'from-file'"));
    CHECK(contains(r.out, "repeat = 4"));
    CHECK(contains(r.out, "scale = 5.0"));
    CHECK(contains(r.out, "name = 'echo'"));
    CHECK(contains(r.out, "threads = 0"));
  }

  TEST_CASE("config errors: one line naming file, key (and line), exit code 2") {
    et::test::TempDir dir("cfgerr");
    auto one_line = [](const std::string& s) { return et::test::count_lines(s) == 1; };
    et::test::write_file(dir / "unknown.toml", "greeting = \"x\"\nrepat = 2\n");
    auto r = run_ethost(base({"--app", "hello", "--config", dir / "unknown.toml"}));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "unknown.toml:2"));
    CHECK(contains(r.err, "unknown config key 'repat'"));
    CHECK(contains(r.err, "did you mean 'repeat'"));
    CHECK(one_line(r.err));

    et::test::write_file(dir / "type.toml", "repeat = \"many\"\n");
    r = run_ethost(base({"--app", "hello", "--config", dir / "type.toml"}));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "type.toml:1"));
    CHECK(contains(r.err, "'repeat' must be an integer"));
    CHECK(one_line(r.err));

    et::test::write_file(dir / "syntax.toml", "greeting = \"x\"\nrepeat = = 2\n");
    r = run_ethost(base({"--app", "hello", "--config", dir / "syntax.toml"}));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "syntax.toml:2:"));
    CHECK(contains(r.err, "TOML syntax error"));
    CHECK(one_line(r.err));

    r = run_ethost(base({"--app", "hello", "--set", "model.scale=big"}));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "'model.scale' must be a number"));
    CHECK(contains(r.err, "--set model.scale"));

    r = run_ethost(base({"--app", "hello", "--set", "model.scal=1"}));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "unknown config key 'model.scal' for model/echo"));

    r = run_ethost(base({"--app", "hello", "--set", "repeat=1000"}));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "out of range [1, 100]"));

    r = run_ethost(base({"--app", "hello", "--config", dir / "missing.toml"}));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "missing.toml: cannot open config file"));

    r = run_ethost(base({"--app", "hello", "--set", "model.name=nosuch"}));
    CHECK(r.exit_code == 3);
    CHECK(contains(r.err, "app/hello needs model 'nosuch': not found"));
    CHECK(contains(r.err, "available: "));
    CHECK(contains(r.err, "echo"));
  }

  TEST_CASE("a required key that is missing is named") {
    // Required keys come from manifests; app/hello has none, so use the good fixture's --set path instead.
    auto r = run_ethost(
        base({"--app", "hello", "--user_defined_parameters", "greeting=yo scale=3", "--dump-config"}));
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "greeting = 'yo'"));
    CHECK(contains(r.out, "scale = 3"));
    r = run_ethost(base({"--app", "hello", "--user_defined_parameters", "colour=blue"}));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "unknown parameter 'colour'"));
  }

  TEST_CASE("EasyNLP flag spellings map to config keys") {
    auto r = run_ethost(base({"--app", "hello", "--tables", "a.tsv,b.tsv"}));
    CHECK(r.exit_code == 2);  // app/hello has no data section: the mapped key is named
    CHECK(contains(r.err, "unknown config key 'data.tables'"));
    CHECK(contains(r.err, "--tables"));
  }

  TEST_CASE("usage errors exit 2") {
    auto r = run_ethost({"--bogus"});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "unrecognised option '--bogus'"));
    r = run_ethost(base({"--app", "hello", "--mode", "dance"}));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "unknown --mode 'dance'"));
    r = run_ethost(base({"--app", "hello", "--set", "noequals"}));
    CHECK(r.exit_code == 2);
    // --nproc_per_node 0 used to run one process silently.
    for (const char* n : {"0", "-2"}) {
      r = run_ethost(base({"--nproc_per_node", n, "--app", "hello"}));
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, std::string("--nproc_per_node must be >= 1, got ") + n));
    }
  }

  TEST_CASE("search path: ETHOST_PLUGIN_PATH and <exe dir>/plugins") {
    auto r = run_ethost({"--no-default-plugins", "--list"}, {{"ETHOST_PLUGIN_PATH", ETHOST_PLUGIN_DIR}});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "hello"));
    r = run_ethost({"--list"});  // default tiers include <exe dir>/plugins
    CHECK(contains(r.out, "hello"));
    r = run_ethost({"--no-default-plugins", "--list"});
    CHECK_FALSE(contains(r.out, "hello"));
  }
}
