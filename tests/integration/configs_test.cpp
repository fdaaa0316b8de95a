// configs_test.cpp: every shipped config under configs/ resolves and validates (--dump-config exits 0), its
// relative paths written relative to its own folder.
#include <doctest/doctest.h>

#include <filesystem>

#include "process.h"
#include "test_paths.h"

TEST_SUITE("integration.configs") {
  TEST_CASE("every config in configs/ is valid for its app") {
    int checked = 0;
    for (auto& e : std::filesystem::recursive_directory_iterator(ETHOST_SOURCE_DIR "/configs")) {
      if (e.path().extension() != ".toml") continue;
      // The folder names the app, unless the file's first line says "# app: <name>" (configs/fewclue/).
      std::string app = e.path().parent_path().filename().string();
      if (std::string first = et::test::read_file(e.path().string()).substr(0, 200);
          first.rfind("# app: ", 0) == 0)
        app = first.substr(7, first.find_first_of(" \n", 7) - 7);
#ifdef ETHOST_CORE_ONLY
      if (app != "hello") continue;  // the sanitizer build has only the SDK, host and example plugins
#endif
      auto r = et::test::run_ethost({"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", app,
                                     "--config", e.path().string(), "--dump-config"});
      INFO(e.path().string() << ": " << r.err);
      CHECK(r.exit_code == 0);
      // Its relative paths resolve against its folder: one that was not written relative to it would now
      // point inside configs/ (e.g. configs/text_classify/data/...).
      CHECK(r.out.find(ETHOST_SOURCE_DIR "/configs/") == std::string::npos);
      ++checked;
    }
#ifdef ETHOST_CORE_ONLY
    CHECK(checked >= 1);
#else
    CHECK(checked >= 7);
#endif
  }
}
