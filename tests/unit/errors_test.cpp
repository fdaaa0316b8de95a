// errors_test.cpp: the error hierarchy — messages, exit codes, and catching across the SDK boundary.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "ethost/error.h"
#include "ethost/log.h"
#include "ethost/toolkit_version.h"
#include "ethost/version.h"
#include "test_paths.h"

TEST_SUITE("unit.errors") {
  TEST_CASE("message composition: where, what, hint") {
    et::ConfigError e("bad value", "x.toml:3", "use a number");
    CHECK(std::string(e.what()) == "x.toml:3: bad value (hint: use a number)");
    CHECK(e.bare_what() == "bad value");
    CHECK(et::Error("plain").what() == std::string("plain"));
  }

  TEST_CASE("each class maps to its documented exit code") {
    CHECK(et::Error("x").exit_code() == 1);
    CHECK(et::ConfigError("x").exit_code() == 2);
    CHECK(et::UsageError("x").exit_code() == 2);
    CHECK(et::PluginError("x").exit_code() == 3);
    CHECK(et::DataError("x").exit_code() == 4);
    CHECK(et::Interrupted(SIGINT).exit_code() == 130);
    CHECK(et::Interrupted(SIGTERM).exit_code() == 143);
    CHECK(et::exit_code_of(std::runtime_error("x")) == 1);
    CHECK(et::exit_code_of(et::DataError("x")) == 4);
  }

  TEST_CASE("host, SDK and plugins throw a proper class, never a plain et::Error (exit 1 reads as a bug)") {
    // Errors a user can cause take ConfigError / UsageError / DataError / PluginError / DistError; real bugs
    // InternalError or ET_CHECK. A plain et::Error(...) gave exit 1 with no class to tell them apart.
    const std::regex plain(R"(throw\s+(::)?(et::)?Error\s*[({])");
    std::vector<std::string> found;
    for (const char* tree : {"host", "sdk", "plugins"}) {
      for (auto& e :
           std::filesystem::recursive_directory_iterator(std::string(ETHOST_SOURCE_DIR) + "/" + tree)) {
        const auto ext = e.path().extension();
        if (ext != ".cpp" && ext != ".h") continue;
        if (e.path().string().find("/tests/") != std::string::npos) continue;
        std::ifstream in(e.path());
        std::stringstream text;
        text << in.rdbuf();
        const std::string s = text.str();
        for (std::sregex_iterator m(s.begin(), s.end(), plain), end; m != end; ++m)
          found.push_back(e.path().string() + " at offset " + std::to_string(m->position()));
      }
    }
    std::string list;
    for (auto& f : found) list += f + "\n";
    CHECK_MESSAGE(found.empty(), list);
  }

  TEST_CASE("errors are catchable as et::Error and std::exception") {
    CHECK_THROWS_AS(throw et::PluginError("x"), et::Error);
    CHECK_THROWS_AS(throw et::DataError("x"), std::exception);
    CHECK_THROWS_WITH_AS(ET_CHECK(1 == 2, "math"), doctest::Contains("check failed: 1 == 2: math"),
                         et::InternalError);
  }

  TEST_CASE("log levels parse, and unknown ones are a usage error") {
    CHECK(et::log::parse_level("debug") == et::log::Level::debug);
    CHECK_THROWS_AS(et::log::parse_level("loud"), et::UsageError);
    auto old = et::log::level();
    et::log::set_level(et::log::Level::warn);
    CHECK_FALSE(et::log::get("test").enabled(et::log::Level::info));
    CHECK(et::log::get("test").enabled(et::log::Level::error));
    et::log::set_level(old);
  }

  TEST_CASE("ABI compatibility rule") {
    et::AbiStamp host{1, 2, 1, 13, 1};
    CHECK(et::abi_incompatibility({1, 2, 1, 13, 1}, host).empty());
    CHECK(et::abi_incompatibility({1, 0, 1, 13, 1}, host).empty());
    CHECK(et::abi_incompatibility({2, 0, 1, 13, 1}, host).find("SDK ABI 2.0") != std::string::npos);
    CHECK(et::abi_incompatibility({1, 3, 1, 13, 1}, host).find("SDK ABI 1.3") != std::string::npos);
    CHECK(et::abi_incompatibility({1, 0, 2, 1, 1}, host).find("LibTorch 2.1, host has 1.13") !=
          std::string::npos);
    CHECK(et::abi_incompatibility({1, 0, 1, 13, 0}, host).find("_GLIBCXX_USE_CXX11_ABI=0") !=
          std::string::npos);
    // The toolkit's rule: same major, minor not newer; a plugin that does not link it (-1) always passes.
    CHECK(et::toolkit_incompatibility(-1, -1, 1, 0).empty());
    CHECK(et::toolkit_incompatibility(1, 0, 1, 2).empty());
    CHECK(et::toolkit_incompatibility(1, 3, 1, 2).find("toolkit 1.3, host has toolkit 1.2") !=
          std::string::npos);
    CHECK(et::toolkit_incompatibility(2, 0, 1, 2).find("built against toolkit 2.0") != std::string::npos);
    auto h = et::host_abi_stamp();
    CHECK(h.abi_major == ET_SDK_ABI_MAJOR);
    CHECK(h.torch_major == 1);
    CHECK(h.torch_minor == 13);
  }
}
