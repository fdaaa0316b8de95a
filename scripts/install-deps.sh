#!/usr/bin/env bash
# Installs ethost's build and test dependencies from Debian's apt (idempotent: only what is missing).
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libgloo-dev libopenblas0-openmp
  libboost-dev libboost-program-options-dev
  libtbb-dev libtomlplusplus-dev libspdlog-dev libfmt-dev doctest-dev
  nlohmann-json3-dev libutf8proc-dev libstb-dev
  libfaiss-dev
  python3-torch python3-torchvision python3-jieba iproute2 binutils file
  universal-ctags
)
if [ "${ETHOST_WITH_BENCH_DEPS:-0}" = 1 ]; then PKGS+=(libjemalloc2 wrk); fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#PKGS[@]} packages present"
fi

# The pthread OpenBLAS variant fights LibTorch's OpenMP threads; make sure the OpenMP one is the active BLAS.
for alt in libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu; do
  target=$(update-alternatives --list "$alt" 2>/dev/null | grep openblas-openmp | head -1 || true)
  if [ -n "$target" ]; then $SUDO update-alternatives --set "$alt" "$target" >/dev/null; fi
done
