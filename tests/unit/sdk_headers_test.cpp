// sdk_headers_test.cpp: the public SDK headers compile without <torch/torch.h> — none of them pulls it in
// (checked per header by preprocessing), and all of them together compile in a TU that never includes it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "process.h"
#include "test_paths.h"

namespace {

std::vector<std::string> base_args() {
  std::vector<std::string> argv{ETHOST_CXX_COMPILER, "-std=c++17", "-D_GLIBCXX_USE_CXX11_ABI=1", "-I" ETHOST_SDK_INCLUDE};
  std::stringstream ss(ETHOST_TORCH_INCLUDE_FLAGS);
  std::string f;
  while (std::getline(ss, f, ';'))
    if (!f.empty()) argv.push_back(f);
  return argv;
}

std::vector<std::string> public_headers() {
  std::vector<std::string> out;
  for (auto& e : std::filesystem::recursive_directory_iterator(ETHOST_SDK_INCLUDE "/ethost"))
    if (e.is_regular_file() && e.path().extension() == ".h") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_SUITE("lint.sdk_headers") {
  TEST_CASE("no public header includes torch/torch.h (directly or indirectly)") {
    auto headers = public_headers();
    CHECK(headers.size() >= 20);
    for (auto& h : headers) {
      auto argv = base_args();
      argv.insert(argv.end(), {"-E", "-H", "-o", "/dev/null", "-x", "c++", h});
      auto r = et::test::run_process(argv);
      INFO(h << "\n" << r.err.substr(0, 2000));
      CHECK(r.exit_code == 0);
      CHECK_FALSE(et::test::contains(r.err, "torch/torch.h"));
      CHECK_FALSE(et::test::contains(r.err, "torch/all.h"));
    }
  }

  TEST_CASE("all public headers compile together without torch/torch.h") {
    et::test::TempDir dir("hdr");
    std::string tu;
    for (auto& h : public_headers()) tu += "#include \"" + h + "\"\n";
    tu += "#ifdef TORCH_API_INCLUDE_EXTENSION_H\n#error torch extension header leaked\n#endif\nint main() { return 0; }\n";
    et::test::write_file(dir / "all.cpp", tu);
    auto argv = base_args();
    argv.insert(argv.end(), {"-fsyntax-only", dir / "all.cpp"});
    auto r = et::test::run_process(argv);
    INFO(r.err.substr(0, 4000));
    CHECK(r.exit_code == 0);
  }
}
