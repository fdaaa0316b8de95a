// tokenize_cmd.cpp: `ethost tokenize` — WordPiece-tokenizes stdin lines and prints JSON (see docs/cli.md).
#include "cli_internal.h"
#include "ethost/error.h"

namespace et::host {

int cmd_tokenize(int, const char* const*) {
  throw UsageError("ethost tokenize is not available in this build", "command line");
}

}  // namespace et::host
