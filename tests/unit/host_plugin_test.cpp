// host_plugin_test.cpp: manifest parsing and the bounded ELF reader (garbage, truncated and real files).
#include <doctest/doctest.h>

#include <algorithm>

#include "ethost/error.h"
#include "plugin/elf_reader.h"
#include "plugin/manifest.h"
#include "process.h"
#include "test_paths.h"

using namespace et::host;

TEST_SUITE("unit.host") {
  TEST_CASE("manifest: components, config specs and defaults") {
    auto m = parse_manifest(R"(
[plugin]
id = "t.p"
version = "1.2.3"
[[provides]]
kind = "model"
name = "m"
description = "d"
[provides.config.hidden]
type = "int"
default = 64
min = 1
doc = "width"
[provides.config."sub.key"]
type = "string"
required = true
[build]
sdk_abi = "1.0"
torch = "1.13"
cxx11_abi = 1
compiler = "GNU 12"
)",
                            "p.so");
    CHECK(m.id == "t.p");
    REQUIRE(m.provides.size() == 1);
    auto& c = m.provides[0];
    CHECK(c.key() == "model/m");
    CHECK(c.version == "1.2.3");  // defaults to the plugin version
    REQUIRE(c.config.size() == 2);
    CHECK(c.config[0].key == "hidden");
    CHECK(c.config[0].min == 1.0);
    CHECK(c.config[1].required);
    CHECK(c.defaults.view().get_int("hidden") == 64);
    CHECK(c.defaults.view().where("hidden") == "defaults of model/m");
    CHECK(m.build.torch_minor == 13);
  }

  TEST_CASE("manifest services bring the SDK's keys with their defaults; the component's own entry wins") {
    auto m = parse_manifest(R"(
[plugin]
id = "t.s"
version = "1.0.0"
[[provides]]
kind = "app"
name = "s"
services = ["supervised"]
[provides.config."data.label_name"]
type = "string"
default = "tag"
[[provides]]
kind = "model"
name = "m"
services = ["transformer"]
)",
                            "s.so");
    const auto& app = m.provides[0];
    auto has = [](const et::host::ComponentDecl& d, const std::string& k) {
      return std::any_of(d.config.begin(), d.config.end(),
                         [&](const et::ConfigKeySpec& s) { return s.key == k; });
    };
    for (const char* k : {"data.tables", "data.reader", "model.name", "train.epoch_num",
                          "predict.output_schema", "eval.batch_size"})
      CHECK_MESSAGE(has(app, k), k);
    CHECK(app.defaults.view().get_string("data.label_name") == "tag");  // the app's own default
    CHECK(app.defaults.view().get_int("train.micro_batch_size") == 32);
    CHECK(app.defaults.view().where("train.micro_batch_size") == "defaults of the supervised service");
    CHECK(app.services == std::vector<std::string>{"supervised"});
    CHECK(has(m.provides[1], "hidden_size"));
    CHECK(m.provides[1].defaults.view().get_int("hidden_size") == 768);
    try {
      parse_manifest(
          "[plugin]\nid=\"x\"\nversion=\"1\"\n[[provides]]\nkind=\"app\"\nname=\"a\"\nservices=[\"serving\"]"
          "\n",
          "bad.so");
      FAIL("expected an error");
    } catch (const et::PluginError& e) {
      CHECK(et::test::contains(
          e.what(), "unknown SDK service 'serving' (known: predictor, supervised, trainer, transformer)"));
    }
  }

  TEST_CASE("manifest aliases: the same component under other names, marked as aliases") {
    auto m = parse_manifest(
        "[plugin]\nid=\"x\"\nversion=\"1\"\n[[provides]]\nkind=\"app\"\nname=\"pretrain\"\n"
        "aliases=[\"language_modeling\"]\ndescription=\"d\"\n[provides.config.k]\ntype=\"int\"\ndefault=3\n",
        "p.so");
    REQUIRE(m.provides.size() == 2);
    CHECK(m.provides[0].name == "pretrain");
    CHECK(m.provides[0].alias_of.empty());
    CHECK(m.provides[1].name == "language_modeling");
    CHECK(m.provides[1].alias_of == "app/pretrain");
    CHECK(m.provides[1].description == "alias of app/pretrain: d");
    REQUIRE(m.provides[1].config.size() == 1);
    CHECK(m.provides[1].defaults.view().get_int("k") == 3);
    CHECK_THROWS_AS(parse_manifest("[plugin]\nid=\"x\"\nversion=\"1\"\n[[provides]]\nkind=\"app\"\n"
                                   "name=\"a\"\naliases=[\"a\"]\n",
                                   "p.so"),
                    et::PluginError);
  }

  TEST_CASE("manifest errors are plugin errors naming the file") {
    auto err = [](const std::string& text) {
      try {
        parse_manifest(text, "bad.so");
      } catch (const et::PluginError& e) {
        return std::string(e.what());
      }
      return std::string("(no error)");
    };
    CHECK(et::test::contains(err("[plugin\n"), "bad.so: manifest: TOML syntax error"));
    CHECK(et::test::contains(err("[plugin]\nid=\"x\"\nversion=\"1\"\n"), "no [[provides]]"));
    CHECK(et::test::contains(
        err("[plugin]\nid=\"x\"\nversion=\"1\"\n[[provides]]\nkind=\"widget\"\nname=\"w\"\n"),
        "unknown component kind 'widget'"));
    CHECK(et::test::contains(err("[plugin]\nid=\"x\"\nversion=\"1\"\n[[provides]]\nkind=\"app\"\nname="
                                 "\"a\"\n[provides.config.k]\ntype=\"int32\"\n"),
                             "unknown type 'int32'"));
  }

  TEST_CASE("ELF reader: garbage, empty and truncated files are reported, not crashed on") {
    et::test::TempDir dir("elf");
    et::test::write_file(dir / "garbage.so", std::string(4096, '\x5a'));
    et::test::write_file(dir / "empty.so", "");
    std::string real = et::test::read_file(ETHOST_PLUGIN_DIR "/model_echo.so");
    et::test::write_file(dir / "trunc.so", real.substr(0, 200));
    auto g = read_elf(dir / "garbage.so");
    CHECK_FALSE(g.is_elf);
    CHECK(g.error == "not an ELF file");
    CHECK_FALSE(read_elf(dir / "empty.so").is_elf);
    auto t = read_elf(dir / "trunc.so");
    CHECK_FALSE(t.is_elf);
    CHECK(t.error == "corrupt ELF section header table");
    CHECK_FALSE(read_elf(dir / "does-not-exist.so").is_elf);
    // Flip bytes all over a real plugin: the reader must never crash.
    for (size_t step : {7u, 13u, 101u}) {
      std::string mutated = real;
      for (size_t i = 0; i < mutated.size(); i += step * 97) mutated[i] = char(mutated[i] ^ 0xff);
      et::test::write_file(dir / "mut.so", mutated);
      CHECK_NOTHROW(read_elf(dir / "mut.so"));
    }
  }

  TEST_CASE("ELF reader: a real plugin has its manifest, torch in DT_NEEDED, and the entry symbol") {
    auto e = read_elf(ETHOST_PLUGIN_DIR "/model_echo.so");
    REQUIRE(e.is_elf);
    REQUIRE(e.manifest);
    CHECK(et::test::contains(*e.manifest, "id = \"examples.echo\""));
    CHECK(et::test::contains(*e.manifest, "[build]"));
    CHECK(std::find(e.needed.begin(), e.needed.end(), "libethost_sdk.so.3") != e.needed.end());
    CHECK(e.dynamic_symbols == std::vector<std::string>{"ethost_plugin_v3"});
  }
}
