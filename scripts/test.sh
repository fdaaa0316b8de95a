#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, and runs every test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh dev
ctest --preset dev "$@"
