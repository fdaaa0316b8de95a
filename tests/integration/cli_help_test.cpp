// cli_help_test.cpp: `ethost --help` advertises only what exists — every subcommand it shows answers
// `--help`, every --mode it shows is accepted, and nothing unimplemented (an `ethost serve` command) is
// listed.
#include <doctest/doctest.h>

#include <regex>
#include <set>
#include <sstream>

#include "process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::run_ethost;

namespace {

// The "Usage:" block of --help: the lines up to the first empty one.
std::string usage_block(const std::string& help) {
  auto end = help.find("\n\n");
  return help.substr(0, end);
}

// The words that follow `ethost ` and are not options: the subcommands the usage advertises.
std::set<std::string> subcommands(const std::string& usage) {
  std::set<std::string> out;
  std::regex re(R"(ethost ([a-z][a-z_-]*))");
  for (std::sregex_iterator it(usage.begin(), usage.end(), re), end; it != end; ++it) out.insert((*it)[1]);
  return out;
}

// The alternatives of `--mode a|b|c` in the usage.
std::vector<std::string> modes(const std::string& usage) {
  std::smatch m;
  std::vector<std::string> out;
  if (!std::regex_search(usage, m, std::regex(R"(--mode ([a-z|]+))"))) return out;
  std::istringstream is(m[1].str());
  for (std::string w; std::getline(is, w, '|');) out.push_back(w);
  return out;
}

}  // namespace

TEST_SUITE("integration.cli_help") {
  TEST_CASE("every subcommand --help shows exists and answers its own --help") {
    auto r = run_ethost({"--help"});
    REQUIRE(r.exit_code == 0);
    auto cmds = subcommands(usage_block(r.out));
    CHECK((cmds == std::set<std::string>{"doctor", "kg", "segment", "tokenize"}));
    for (auto& c : cmds) {
      CAPTURE(c);
      auto h = run_ethost({c, "--help"});
      CHECK(h.exit_code == 0);
      CHECK(!h.out.empty());
    }
    // Serving is a mode of an app (--mode serve), not a command of its own.
    CHECK(!contains(r.out, "ethost serve"));
    auto serve = run_ethost({"serve"});
    CHECK(serve.exit_code == 2);
  }

  TEST_CASE("every --mode --help shows is accepted, serve included") {
    auto r = run_ethost({"--help"});
    REQUIRE(r.exit_code == 0);
    auto ms = modes(usage_block(r.out));
    CHECK(ms == std::vector<std::string>{"train", "evaluate", "predict", "serve"});
    for (auto& m : ms) {
      CAPTURE(m);
      // The mode parses; the run then stops at the missing app (exit 3), not at the command line (exit 2).
      auto run = run_ethost(
          {"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "nope", "--mode", m});
      CHECK(run.exit_code == 3);
      CHECK(contains(run.err, "app 'nope': not found"));
    }
    // --mode serve reaches the server's dispatch: an app without the Predictor capability is refused by it.
    auto hello = run_ethost(
        {"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR, "--app", "hello", "--mode", "serve"});
    CHECK(hello.exit_code == 2);
    CHECK(contains(hello.err, "cannot be served: it does not offer the Predictor capability"));
    auto bad = run_ethost({"--app", "hello", "--mode", "nope"});
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, "use train, evaluate, predict or serve"));
  }
}
