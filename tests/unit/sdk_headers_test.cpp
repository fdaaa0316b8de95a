// sdk_headers_test.cpp: every public SDK header compiles on its own, without pulling in <torch/torch.h>.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "process.h"
#include "test_paths.h"

TEST_SUITE("unit.sdk_headers") {
  TEST_CASE("each header is self-contained and does not include torch/torch.h") {
    std::vector<std::string> flags;
    std::stringstream ss(ETHOST_TORCH_INCLUDE_FLAGS);
    std::string f;
    while (std::getline(ss, f, ';'))
      if (!f.empty()) flags.push_back(f);
    int checked = 0;
    for (auto& e : std::filesystem::recursive_directory_iterator(ETHOST_SDK_INCLUDE "/ethost")) {
      if (!e.is_regular_file()) continue;
      std::string path = e.path().string();
      if (e.path().extension() != ".h") continue;
      std::vector<std::string> argv{ETHOST_CXX_COMPILER, "-std=c++17", "-fsyntax-only", "-H", "-D_GLIBCXX_USE_CXX11_ABI=1",
                                    "-I" ETHOST_SDK_INCLUDE};
      argv.insert(argv.end(), flags.begin(), flags.end());
      argv.push_back("-x");
      argv.push_back("c++");
      argv.push_back(path);
      auto r = et::test::run_process(argv);
      INFO(path << "\n" << r.err.substr(0, 2000));
      CHECK(r.exit_code == 0);
      // -H prints every included header on stderr.
      CHECK_FALSE(et::test::contains(r.err, "torch/torch.h"));
      CHECK_FALSE(et::test::contains(r.err, "torch/all.h"));
      ++checked;
    }
    CHECK(checked >= 10);
  }
}
