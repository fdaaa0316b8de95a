#!/usr/bin/env bash
# The README's quickstart: installs dependencies, builds, lists the plugins and runs the quickstart app.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh dev
./build/bin/ethost --list
./build/bin/ethost --app hello --config configs/hello/hello.toml
