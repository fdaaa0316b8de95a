// plugin_kinds_test.cpp: kind-qualified plugin files — an app and a model of the same name coexist, from one
// file or from two; in-tree plugins are listed as <kind>_<name>.so; a file named the old way (no kind) still
// loads.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::run_ethost;

namespace {

// The --list lines that mention `what`.
std::vector<std::string> lines_with(const std::string& out, const std::string& what) {
  std::vector<std::string> found;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (contains(line, what)) found.push_back(line);
  return found;
}

}  // namespace

TEST_SUITE("integration.plugin_kinds") {
  TEST_CASE("an app and a model of the same name from one plugin file") {
    const std::string dir = ETHOST_FIXTURE_PLUGINS "/twin";
    auto list = run_ethost({"--no-default-plugins", "--plugin-dir", dir, "--list"});
    INFO(list.out << list.err);
    REQUIRE(list.exit_code == 0);
    auto rows = lines_with(list.out, "app_twin.so");
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].rfind("app ", 0) == 0);
    CHECK(rows[1].rfind("model ", 0) == 0);
    for (auto& r : rows) CHECK(contains(r, " ok"));
    auto run = run_ethost({"--no-default-plugins", "--plugin-dir", dir, "--app", "twin"});
    INFO(run.out << run.err);
    CHECK(run.exit_code == 0);
    CHECK(contains(run.out, "fixture twin ran"));
    CHECK(contains(run.out, "twin model says 202"));
  }

  TEST_CASE("--list shows the in-tree plugins as kind-qualified files") {
    auto list = run_ethost({"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--list"});
    REQUIRE(list.exit_code == 0);
    for (const char* f : {"/app_hello.so", "/model_echo.so"})
      CHECK_MESSAGE(contains(list.out, ETHOST_PLUGIN_DIR + std::string(f)), f);
#ifndef ETHOST_CORE_ONLY
    for (const char* f : {"/app_text_classify.so", "/model_bert.so", "/optimizer_adamw.so", "/reader_tsv.so"})
      CHECK_MESSAGE(contains(list.out, ETHOST_PLUGIN_DIR + std::string(f)), f);
#endif
    for (auto& e : std::filesystem::directory_iterator(ETHOST_PLUGIN_DIR)) {
      std::string name = e.path().filename().string();
      if (e.path().extension() != ".so") continue;
      bool kinded = name.rfind("app_", 0) == 0 || name.rfind("model_", 0) == 0 ||
                    name.rfind("optimizer_", 0) == 0 || name.rfind("reader_", 0) == 0;
      CHECK_MESSAGE(kinded, name);
    }
  }

  TEST_CASE(
      "a plugin file named the old way (no kind) still loads: the manifest, not the file name, counts") {
    et::test::TempDir dir("legacy_name");
    std::filesystem::copy_file(ETHOST_PLUGIN_DIR "/model_echo.so", dir / "echo.so");
    auto list = run_ethost(
        {"--no-default-plugins", "--plugin-dir", dir.path(), "--plugin-dir", ETHOST_PLUGIN_DIR, "--list"});
    INFO(list.out);
    auto legacy =
        lines_with(list.out, dir / "echo.so  ");  // its FILE column (the other line says "shadowed by" it)
    REQUIRE(legacy.size() == 1);
    CHECK(legacy[0].rfind("model ", 0) == 0);
    CHECK(contains(legacy[0], " ok"));
    CHECK(contains(list.out, "shadowed by " + dir / "echo.so"));
    auto run = run_ethost({"--no-default-plugins", "--plugin-dir", dir.path(), "--plugin-dir",
                           ETHOST_PLUGIN_DIR, "--app", "hello", "--set", "model.scale=2"});
    INFO(run.err);
    CHECK(run.exit_code == 0);
    CHECK(contains(run.out, "output: 0 2 4 6"));
  }
}
