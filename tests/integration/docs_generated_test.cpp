// docs_generated_test.cpp: the key tables in the docs are generated, not copied — `ethost --describe
// --format markdown` prints them, scripts/gen-docs.sh puts them between markers, and --check fails when one
// is stale.
#include <doctest/doctest.h>

#include "process.h"
#include "test_paths.h"

using et::test::contains;
using et::test::run_ethost;

namespace {

std::vector<std::string> base(std::vector<std::string> extra) {
  std::vector<std::string> a{"--no-default-plugins", "--plugin-dir", ETHOST_PLUGIN_DIR};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

et::test::ProcResult gen_docs(std::vector<std::string> args) {
  args.insert(args.begin(), {"bash", ETHOST_SOURCE_DIR "/scripts/gen-docs.sh"});
  return et::test::run_process(args, {{"ETHOST", ETHOST_EXE}, {"ETHOST_PLUGIN_DIR", ETHOST_PLUGIN_DIR}});
}

const char* const kHelloTable =
    "| key | type | default | meaning |\n"
    "|---|---|---|---|\n"
    "| `greeting` | string | `'hello'` | the word printed first |\n"
    "| `model.name` | component(model) | `'echo'` | the model created with ctx.create&lt;Model> |\n"
    "| `repeat` | int | `1` | how many times the greeting is printed; range [1, 100] |\n";

}  // namespace

TEST_SUITE("integration.docs_generated") {
  TEST_CASE("--describe --format markdown prints the keys as a Markdown table") {
    auto r = run_ethost(base({"--describe", "app/hello", "--format", "markdown"}));
    CHECK(r.exit_code == 0);
    CHECK(r.out == kHelloTable);
#ifndef ETHOST_CORE_ONLY  // the sanitizer build has only app/hello and model/echo
    auto tsv = run_ethost(base({"--describe", "reader/tsv", "--format", "markdown"}));
    CHECK(tsv.exit_code == 0);
    CHECK(contains(tsv.out, "| `input_schema` | string | (required) |"));
    CHECK(contains(tsv.out, "| `delimiter` | string | `\"\\t\"` |"));  // the tab, visible
#endif
    auto section =
        run_ethost(base({"--describe", "app/hello", "--section", "model", "--format", "markdown"}));
    CHECK(section.exit_code == 0);
    CHECK(et::test::count_lines(section.out) == 3);
    CHECK(contains(section.out, "`model.name`"));
  }

  TEST_CASE("--format and --section: bad values are usage errors (exit 2)") {
    auto fmt = run_ethost(base({"--describe", "app/hello", "--format", "html"}));
    CHECK(fmt.exit_code == 2);
    CHECK(contains(fmt.err, "unknown --format 'html'"));
    auto alone = run_ethost(base({"--list", "--format", "markdown"}));
    CHECK(alone.exit_code == 2);
    CHECK(contains(alone.err, "--format applies to --describe only"));
    auto none = run_ethost(base({"--describe", "app/hello", "--section", "nope"}));
    CHECK(none.exit_code == 2);
    CHECK(contains(none.err, "app/hello has no keys in section 'nope'"));
  }

#ifndef ETHOST_CORE_ONLY  // the docs describe every in-tree plugin
  TEST_CASE("the repository's generated blocks are up to date (scripts/gen-docs.sh --check)") {
    auto r = gen_docs({"--check"});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.empty());
  }
#endif

  TEST_CASE("a stale block fails --check, naming the file; gen-docs.sh rewrites it") {
    et::test::TempDir dir("gendocs");
    std::string md = dir / "page.md";
    et::test::write_file(md,
                         "# page\n<!-- generated: ethost --describe app/hello --format markdown -->\n"
                         "| old | table |\n<!-- end generated -->\ntext after\n");
    auto stale = gen_docs({"--check", md});
    CHECK(stale.exit_code == 1);
    CHECK(contains(stale.out, "stale: "));
    CHECK(contains(stale.out, "page.md (run scripts/gen-docs.sh to regenerate it)"));
    CHECK(contains(et::test::read_file(md), "| old | table |"));  // --check never writes
    auto fix = gen_docs({md});
    CHECK(fix.exit_code == 0);
    CHECK(et::test::read_file(md) ==
          std::string("# page\n<!-- generated: ethost --describe app/hello --format markdown -->\n\n") +
              kHelloTable + "\n<!-- end generated -->\ntext after\n");
    CHECK(gen_docs({"--check", md}).exit_code == 0);
  }

  TEST_CASE("malformed blocks and failing commands stop gen-docs.sh with the file and line") {
    et::test::TempDir dir("gendocs-bad");
    std::string open = dir / "open.md", other = dir / "other.md", fails = dir / "fails.md";
    et::test::write_file(open, "<!-- generated: ethost --describe app/hello --format markdown -->\nrest\n");
    et::test::write_file(other, "x\n<!-- generated: rm -rf / -->\n<!-- end generated -->\n");
    et::test::write_file(fails,
                         "<!-- generated: ethost --describe app/nope --format markdown -->\n"
                         "<!-- end generated -->\n");
    auto r1 = gen_docs({"--check", open});
    CHECK(r1.exit_code == 2);
    CHECK(contains(r1.err, "has no <!-- end generated --> line"));
    auto r2 = gen_docs({"--check", other});
    CHECK(r2.exit_code == 2);
    CHECK(contains(r2.err, other + ":2: only 'ethost ...' commands are generated"));
    auto r3 = gen_docs({"--check", fails});
    CHECK(r3.exit_code == 3);
    CHECK(contains(r3.err, fails + ":1: 'ethost --describe app/nope --format markdown' failed"));
    CHECK(contains(r3.err, "app 'nope': not found"));
  }
}
