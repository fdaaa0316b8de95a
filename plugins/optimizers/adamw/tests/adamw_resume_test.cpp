// adamw_resume_test.cpp: optimizer/adamw on resume (state from et::train::OptimizerBase) — a saved state
// restores bit-identically; a state of another shape (another model) or a missing tensor is refused with a
// data error naming the parameter (the shared checks: tests/support/optimizer_resume.h).
#include <doctest/doctest.h>

#include "optimizer_resume.h"

TEST_SUITE("plugin.adamw") {
  TEST_CASE("resume: the saved state continues bit-identically") { et::test::check_exact_resume("adamw"); }

  TEST_CASE("resume: a state of another shape is refused, naming the parameter; nothing is changed") {
    et::test::check_refuses_bad_state("adamw");
  }
}
