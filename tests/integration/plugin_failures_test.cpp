// plugin_failures_test.cpp: every broken-plugin case of the contract gives a one-line message naming the file
// and the cause, exit code 3 when it blocks the run, no crash — and unaffected plugins keep working.
#include <doctest/doctest.h>

#include <filesystem>

#include "process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::run_ethost;

namespace {
std::vector<std::string> with_fixtures(std::vector<std::string> extra) {
  std::vector<std::string> a{"--no-default-plugins", "--plugin-dir", ETHOST_FIXTURE_PLUGINS, "--plugin-dir",
                             ETHOST_PLUGIN_DIR};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::string fixture(const std::string& name) {
  return std::string(ETHOST_FIXTURE_PLUGINS) + "/" + name + ".so";
}

// Runs --app <app> and checks: exit 3, one line on stderr naming the file, containing `cause`.
void expect_blocked(const std::string& app, const std::string& file, const std::string& cause) {
  auto r = run_ethost(with_fixtures({"--app", app}));
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK(contains(r.err, file));
  CHECK(contains(r.err, cause));
  CHECK(et::test::count_lines(r.err) == 1);
}
}  // namespace

TEST_SUITE("integration.plugin_failures") {
  TEST_CASE("--list with every broken fixture present still exits 0 and reports each") {
    auto r = run_ethost(with_fixtures({"--list"}));
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "good_fixture"));
    CHECK(contains(r.out, "incompatible: built for SDK ABI 4.0, host supports 3.0"));
    CHECK(contains(r.out, "incompatible: built for SDK ABI 3.9"));
    CHECK(contains(r.out, "incompatible: built against toolkit 2.0"));
    CHECK(contains(r.out, "incompatible: built for LibTorch 2.1, host has 1.13"));
    CHECK(contains(r.out, "incompatible: missing entry symbol ethost_plugin_v3"));
    CHECK(contains(r.out, "incompatible: needs libtorch.so.2.1"));
    CHECK(contains(r.out, "duplicate: provided by both"));
    CHECK(contains(r.out, "other .so file(s) skipped"));
    auto v = run_ethost(with_fixtures({"--list", "--verbose"}));
    CHECK(contains(v.out, "not_a_plugin.so: no .ethost.manifest section"));
  }

  TEST_CASE("unaffected plugins keep working next to broken ones") {
    auto r = run_ethost(with_fixtures({"--app", "good_fixture"}));
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "fixture good_fixture ran"));
    r = run_ethost(with_fixtures({"--app", "hello"}));
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "output: 0 1 2 3"));
  }

  TEST_CASE("wrong SDK ABI major") {
    expect_blocked("bad_abi_major", fixture("bad_abi_major"), "built for SDK ABI 4.0");
  }
  TEST_CASE("newer SDK minor than the host") {
    expect_blocked("newer_minor", fixture("newer_minor"), "built for SDK ABI 3.9, host supports 3.0");
  }
  TEST_CASE("another toolkit major than the host's") {
    expect_blocked(
        "newer_toolkit", fixture("newer_toolkit"),
        "built against toolkit 2.0, host has toolkit 1.1: rebuild the plugin against this host's SDK");
  }
  TEST_CASE("different LibTorch major.minor") {
    expect_blocked("wrong_torch", fixture("wrong_torch"), "built for LibTorch 2.1, host has 1.13");
    expect_blocked("second_torch", fixture("second_torch"), "needs libtorch.so.2.1, host has LibTorch 1.13");
  }
  TEST_CASE("missing entry symbol") {
    expect_blocked("no_entry", fixture("no_entry"), "missing entry symbol ethost_plugin_v3");
  }
  TEST_CASE("unresolved symbol at load, demangled") {
    expect_blocked("unresolved", fixture("unresolved"),
                   "undefined symbol: et_fixture::missing_function(int)");
  }
  TEST_CASE("two plugins with the same kind/name in one directory: both named, neither used") {
    auto r = run_ethost(with_fixtures({"--app", "dup"}));
    CHECK(r.exit_code == 3);
    CHECK(contains(r.err, fixture("dup_a")));
    CHECK(contains(r.err, fixture("dup_b")));
    CHECK(contains(r.err, "neither is used"));
  }
  TEST_CASE("register_components throws") {
    expect_blocked("throws", fixture("throws"),
                   "fixtures.throws failed to initialise: fixture refuses to register: boom");
  }
  TEST_CASE("registered components differ from the manifest") {
    expect_blocked("mismatch", fixture("mismatch"), "differ from the manifest");
  }
  TEST_CASE("a plugin crashing (SIGSEGV) during registration is attributed to its file") {
    expect_blocked("segv", fixture("segv"), "plugin crashed (SIGSEGV)");
    auto r = run_ethost(with_fixtures({"--check-plugins"}));
    CHECK(r.exit_code == 3);
    CHECK(contains(r.out, fixture("segv") + ": failed: "));
    CHECK(contains(r.out, fixture("good_fixture") + ": ok"));
    CHECK(contains(r.out, fixture("throws") + ": failed: "));
  }

  TEST_CASE("a LibTorch error inside Model::forward or App::run names the component (exit 3)") {
    const std::vector<std::string> base{"--no-default-plugins", "--plugin-dir",
                                        ETHOST_FIXTURE_PLUGINS "/torch_throws", "--app", "torch_throws"};
    auto r = run_ethost(base);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 3);
    CHECK(contains(r.err,
                   "ethost: error: model/torch_throws: forward failed: mat1 and mat2 shapes cannot be "
                   "multiplied (2x3 and 2x3)"));
    CHECK_FALSE(contains(r.err, "Exception raised from"));  // c10's C++ backtrace is left out
    CHECK_FALSE(contains(r.err, "internal error"));
    auto args = base;
    args.insert(args.end(), {"--set", "fail_in=\"app\""});
    r = run_ethost(args);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 3);
    CHECK(contains(r.err, "ethost: error: app/torch_throws: shape '[3]' is invalid for input of size 2"));
    CHECK_FALSE(contains(r.err, "Exception raised from"));
  }

  TEST_CASE("a missing required component is named before anything runs") {
    auto r = run_ethost(with_fixtures({"--app", "needs_missing"}));
    CHECK(r.exit_code == 3);
    CHECK(contains(r.err, "app/needs_missing needs model 'nonexistent': not found"));
  }

  TEST_CASE("same kind/name across tiers: the first tier wins, the other is shadowed") {
    auto r = run_ethost({"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--plugin-dir",
                         ETHOST_FIXTURE_PLUGINS_TIER2, "--list"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "shadowed by " ETHOST_PLUGIN_DIR "/model_echo.so"));
    r = run_ethost({"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--plugin-dir",
                    ETHOST_FIXTURE_PLUGINS_TIER2, "--app", "hello"});
    CHECK(contains(r.out, "output: 0 1 2 3"));
    // Reverse the tiers: now the fixture's echo (input + 100) wins.
    r = run_ethost({"--no-default-plugins", "--plugin-dir", ETHOST_FIXTURE_PLUGINS_TIER2, "--plugin-dir",
                    ETHOST_PLUGIN_DIR, "--app", "hello"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "output: 100 101 102 103"));
  }

  TEST_CASE("a random non-plugin .so and garbage bytes named x.so are skipped; --list exits 0") {
    et::test::TempDir dir("junk");
    et::test::write_file(dir / "x.so", "this is not an ELF file at all \x01\x02\x03");
    std::filesystem::copy_file(fixture("not_a_plugin"), dir / "random.so");
    auto r = run_ethost({"--no-default-plugins", "--plugin-dir", dir.path(), "--plugin-dir",
                         ETHOST_PLUGIN_DIR, "--list", "--verbose"});
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "skipped " + dir / "x.so" + ": not an ELF file"));
    CHECK(contains(r.out, "skipped " + dir / "random.so" + ": no .ethost.manifest section"));
    CHECK(contains(r.out, "hello"));
    r = run_ethost({"--no-default-plugins", "--plugin-dir", dir.path(), "--plugin-dir", ETHOST_PLUGIN_DIR,
                    "--app", "hello"});
    CHECK(r.exit_code == 0);
  }

  TEST_CASE("an in-tree plugin exports only its entry point") {
    for (auto& p : std::filesystem::directory_iterator(ETHOST_PLUGIN_DIR)) {
      if (p.path().extension() != ".so") continue;
      auto r = et::test::run_process({"nm", "-D", "--defined-only", p.path().string()});
      REQUIRE(r.exit_code == 0);
      INFO(p.path().string() << ":\n" << r.out);
      std::stringstream ss(r.out);
      std::string addr, type, name;
      std::vector<std::string> names;
      while (ss >> addr >> type >> name) names.push_back(name);
      CHECK(names == std::vector<std::string>{"ethost_plugin_v3"});
    }
  }
}
