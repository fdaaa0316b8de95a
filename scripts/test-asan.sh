#!/usr/bin/env bash
# Builds the SDK, host and example plugins with ASan+UBSan and runs their unit and integration suites.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh asan
ctest --preset asan "$@"
