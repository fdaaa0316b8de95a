#!/usr/bin/env bash
# abi-check.sh: fails when a plugin-contract header changed its ABI (layout, vtable, enum) without an ABI version bump.
# Usage: scripts/abi-check.sh [--update] [--selftest] [--include DIR] [--baseline FILE.abi.xz]
#   (no option)  compare the contract headers with the committed baseline sdk/abi/contract.abi.xz (abidiff)
#   --update     regenerate the baseline and sdk/abi/contract.version after a deliberate, versioned change
#   --selftest   show that the check fails on a layout change without a bump and passes with one
# The baseline records the ABI of every namespace-scope type in the contract headers (sdk/abi/gen_probe.py lists
# them), as abidw (Debian's abigail-tools) sees it in a probe compiled with -g.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
include=$root/sdk/include
baseline=$root/sdk/abi/contract.abi.xz
version_file=$root/sdk/abi/contract.version
mode=check
while [ $# -gt 0 ]; do
  case $1 in
    --update) mode=update ;;
    --selftest) mode=selftest ;;
    --include) include=$2; shift ;;
    --baseline) baseline=$2; version_file=${2%.abi.xz}.version; shift ;;
    *) echo "abi-check: unknown option '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
  shift
done
for tool in abidw abidiff ctags g++ xz; do
  command -v $tool >/dev/null || { echo "abi-check: '$tool' not found: run scripts/install-deps.sh (abigail-tools, universal-ctags)" >&2; exit 3; }
done
py=/usr/bin/python3
[ -x $py ] || py=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Prints "MAJOR.MINOR" from version.h under $1.
header_version() {
  sed -n 's/^#define ET_SDK_ABI_\(MAJOR\|MINOR\) \([0-9]*\).*/\2/p' "$1/ethost/version.h" | paste -sd.
}

# Writes the ABI of the contract headers under $1 to $2.
dump_abi() {
  $py "$root/sdk/abi/gen_probe.py" "$1" "$tmp/probe.cpp"
  g++ -std=c++17 -g -O0 -fPIC -shared -fno-eliminate-unused-debug-types -I"$1" -I"$root/kernels/include" \
      -I/usr/include/torch/csrc/api/include "$tmp/probe.cpp" -o "$tmp/probe.so"
  abidw --no-show-locs --no-comp-dir-path --no-corpus-path "$tmp/probe.so" > "$2"
}

# Exit 0 when the headers under $1 match the baseline or carry a new version; 1 otherwise. With $2, that file is
# the headers' ABI dump already (the selftest reuses one: a version bump does not change the dump).
check() {
  local inc=$1 now want
  now=$(header_version "$inc")
  want=$(cat "$version_file")
  if [ -n "${2:-}" ]; then cp "$2" "$tmp/current.abi"; else dump_abi "$inc" "$tmp/current.abi"; fi
  xz -dc "$baseline" > "$tmp/baseline.abi"
  local rc=0
  abidiff "$tmp/baseline.abi" "$tmp/current.abi" > "$tmp/diff.txt" || rc=$?
  if [ $rc -eq 0 ]; then
    [ "$now" = "$want" ] && { echo "abi-check: contract ABI $now matches the baseline"; return 0; }
    echo "abi-check: version.h says $now but the baseline is $want with the same ABI: run scripts/abi-check.sh --update" >&2
    return 1
  fi
  if [ $((rc & 3)) -ne 0 ]; then echo "abi-check: abidiff failed (rc $rc):" >&2; cat "$tmp/diff.txt" >&2; return 3; fi
  if [ "$now" = "$want" ]; then
    echo "abi-check: the plugin contract's ABI changed but ET_SDK_ABI_MAJOR/MINOR is still $now." >&2
    echo "  Bump MAJOR for a layout/vtable change of an existing type, MINOR for additions (sdk/README.md, ABI rules)," >&2
    echo "  then run scripts/abi-check.sh --update and commit sdk/abi/. abidiff says:" >&2
    sed -n '1,60{s/^/  | /;p}' "$tmp/diff.txt" >&2
    return 1
  fi
  echo "abi-check: contract ABI changed and the version moved $want -> $now: run scripts/abi-check.sh --update to record it"
  return 0
}

case $mode in
  update)
    dump_abi "$include" "$tmp/current.abi"
    xz -9 -T1 -c "$tmp/current.abi" > "$baseline"
    header_version "$include" > "$version_file"
    echo "abi-check: baseline for ABI $(cat "$version_file") written to ${baseline#$root/}" ;;
  check) check "$include" ;;
  selftest)
    # A copy of the headers with one member added to a contract struct must fail; with a major bump it must pass.
    cp -r "$include" "$tmp/inc"
    sed -i 's/^  int cxx11_abi = -1;.*/&\n  int abi_selftest_extra = 0;/' "$tmp/inc/ethost/version.h"
    grep -q abi_selftest_extra "$tmp/inc/ethost/version.h" || { echo "abi-check selftest: could not edit AbiStamp" >&2; exit 1; }
    dump_abi "$tmp/inc" "$tmp/changed.abi"
    if check "$tmp/inc" "$tmp/changed.abi" > "$tmp/out1.txt" 2>&1; then
      echo "abi-check selftest: FAILED: a layout change without a version bump passed" >&2; cat "$tmp/out1.txt" >&2; exit 1
    fi
    grep -q "abi_selftest_extra" "$tmp/out1.txt" || { echo "abi-check selftest: the report does not name the change" >&2; cat "$tmp/out1.txt" >&2; exit 1; }
    major=$(sed -n 's/^#define ET_SDK_ABI_MAJOR \([0-9]*\).*/\1/p' "$tmp/inc/ethost/version.h")
    sed -i "s/^#define ET_SDK_ABI_MAJOR .*/#define ET_SDK_ABI_MAJOR $((major + 1))/" "$tmp/inc/ethost/version.h"
    if ! check "$tmp/inc" "$tmp/changed.abi" > "$tmp/out2.txt" 2>&1; then
      echo "abi-check selftest: FAILED: a bumped version was still refused" >&2; cat "$tmp/out2.txt" >&2; exit 1
    fi
    echo "abi-check selftest: passed (unbumped layout change refused, bumped one accepted)" ;;
esac
