#!/usr/bin/env bash
# Builds ethost-bench and the plugins it loads (if needed), then runs it; arguments go to ethost-bench.
#   scripts/bench.sh                      # tiny + base, fp32 + bf16 (bf16 reduced when the CPU lacks fast bf16)
#   scripts/bench.sh --quick              # tiny only, few iterations (~1 min)
#   scripts/bench.sh --configs base --precision fp32 --iters 5 --json base.json
# Environment: ETHOST_BENCH_PRESET (CMake preset, default dev -> build/), or ETHOST_BENCH_BUILD_DIR (any build
# directory; configured as RelWithDebInfo with Ninja when it has no build.ninja yet).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(ethost-bench bert adamw)
if [ -n "${ETHOST_BENCH_BUILD_DIR:-}" ]; then
  bdir=$ETHOST_BENCH_BUILD_DIR
  [ -f "$bdir/build.ninja" ] || cmake -S . -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$bdir" --target "${targets[@]}"
else
  preset=${ETHOST_BENCH_PRESET:-dev}
  case "$preset" in
    dev) bdir=build ;;
    release) bdir=build-release ;;
    *) echo "scripts/bench.sh: preset '$preset' has no plugins (use dev or release)" >&2; exit 2 ;;
  esac
  ./scripts/build.sh "$preset" "${targets[@]}"
fi
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "scripts/bench.sh: /usr/bin/python3 cannot import torch (the baseline needs it): run scripts/install-deps.sh" >&2
  exit 2
fi
exec "$bdir/bin/ethost-bench" "$@"
