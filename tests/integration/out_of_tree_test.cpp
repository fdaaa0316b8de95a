// out_of_tree_test.cpp: installs the SDK into a prefix, builds examples/out_of_tree_plugin against it with its own
// CMake project, and runs it with the installed host via --plugin-dir (no host rebuild or relink).
#include <doctest/doctest.h>

#include <filesystem>

#include "process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::run_process;

TEST_SUITE("integration.out_of_tree") {
  TEST_CASE("a plugin built against the installed SDK runs in the installed host") {
    et::test::TempDir dir("oot");
    std::string prefix = dir / "prefix", build = dir / "build";
    auto inst = run_process({"cmake", "--install", ETHOST_BINARY_DIR, "--prefix", prefix}, {}, {}, 300);
    INFO(inst.out << inst.err);
    REQUIRE(inst.exit_code == 0);
    REQUIRE(std::filesystem::exists(prefix + "/lib/cmake/ethost_sdk/ethost_sdkConfig.cmake"));
    REQUIRE(std::filesystem::exists(prefix + "/include/ethost/sdk.h"));

    auto conf = run_process({"cmake", "-S", ETHOST_SOURCE_DIR "/examples/out_of_tree_plugin", "-B", build, "-G",
                             "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=" + prefix},
                            {}, {}, 300);
    INFO(conf.out << conf.err);
    REQUIRE(conf.exit_code == 0);
    auto make = run_process({"cmake", "--build", build}, {}, {}, 600);
    INFO(make.out << make.err);
    REQUIRE(make.exit_code == 0);

    std::string host = prefix + "/bin/ethost";
    auto list = run_process({host, "--plugin-dir", build, "--list"}, {{"ETHOST_PLUGIN_PATH", ""}});
    INFO(list.out << list.err);
    CHECK(list.exit_code == 0);
    CHECK(contains(list.out, "oot_hello"));
    CHECK(contains(list.out, prefix + "/lib/ethost/plugins/echo.so"));  // the installed tier
    auto run = run_process({host, "--plugin-dir", build, "--app", "oot_hello", "--set", "factor=2"},
                           {{"ETHOST_PLUGIN_PATH", ""}});
    INFO(run.out << run.err);
    CHECK(run.exit_code == 0);
    CHECK(contains(run.out, "oot_hello: echo says 6"));
    auto nm = run_process({"nm", "-D", "--defined-only", build + "/oot_hello.so"});
    CHECK(contains(nm.out, "ethost_plugin_v1"));
    CHECK(et::test::count_lines(nm.out) == 1);
  }
}
