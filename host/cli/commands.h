// commands.h: the host's commands (--list, --describe, --version, --check-plugins, --app runs).
#pragma once

#include "options.h"

namespace et::host {

// Runs the command selected by argv and returns the process exit code. Throws et::Error on failure.
int run_host(int argc, const char* const* argv);

}  // namespace et::host
