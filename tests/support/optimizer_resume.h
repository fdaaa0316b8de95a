// optimizer_resume.h: the resume checks every optimizer plugin built on et::train::OptimizerBase shares — a
// saved state continues bit-identically; a state of another shape or a missing tensor is refused with a data
// error naming the parameter and the plugin, and nothing is changed.
// The checks are defined in optimizer_resume.cpp (a LibTorch TU on the shared PCH), so the plugins' test
// files that call them stay light.
#pragma once

#include <string>

namespace et::test {

// Three steps, save, restore into a fresh run, three more: the same weights as an uninterrupted run.
void check_exact_resume(const std::string& optimizer_name);

// A wider model's state, then one missing a tensor: both refused, the optimizer's state left as it was.
void check_refuses_bad_state(const std::string& optimizer_name);

}  // namespace et::test
