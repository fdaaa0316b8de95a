#!/usr/bin/env bash
# Reruns the HF parity suites under every OpenBLAS core this CPU can run (not in CI: it sets OPENBLAS_CORETYPE for
# the test processes on purpose). Usage: scripts/parity-cores.sh [build dir, default build]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tests="$build/bin/ethost_tests"
[ -x "$tests" ] || { echo "parity-cores: $tests not built (scripts/build.sh dev)" >&2; exit 2; }
suites="plugin.bert,shared.bert,unit.nn_toolkit,unit.kernels,integration.bench_parity"
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { [[ " $flags " == *" $1 "* ]]; }
cores=(Prescott)
has sse4_2 && cores+=(Nehalem)
has avx && cores+=(Sandybridge)
has avx2 && has fma && cores+=(Haswell Zen)
has avx512f && has avx512bw && has avx512vl && has avx512dq && cores+=(SkylakeX)
has avx512_bf16 && cores+=(Cooperlake)
echo "parity-cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); suites $suites"
printf '%-12s %-12s %-8s %s\n' "asked" "OpenBLAS ran" "result" "seconds"
fail=0
for core in "${cores[@]}"; do
  start=$(date +%s.%N)
  log=$(mktemp)
  OPENBLAS_CORETYPE=$core OPENBLAS_VERBOSE=2 ETHOST_BLAS_AUTOCORRECT=0 \
    "$tests" --test-suite="$suites" --no-version >"$log" 2>&1
  rc=$?
  ran=$(grep -m1 -o 'Core: [A-Za-z0-9_]*' "$log" | cut -d' ' -f2)
  secs=$(awk "BEGIN{print $(date +%s.%N) - $start}")
  result=$([ $rc -eq 0 ] && echo pass || echo "FAIL($rc)")
  [ $rc -eq 0 ] || { fail=1; tail -20 "$log"; }
  printf '%-12s %-12s %-8s %.1f  %s\n' "$core" "${ran:-?}" "$result" "$secs" "$(grep -m1 -E '^\[doctest\] test cases' "$log")"
  rm -f "$log"
done
exit $fail
