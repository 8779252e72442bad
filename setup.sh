#!/usr/bin/env bash
# Installs every dependency from Debian's packages, then builds opscope three
# times: build/ (optimised, with tools, tests, benchmarks), build-asan/ (the
# library, tools, plugins and every test under AddressSanitizer +
# UndefinedBehaviorSanitizer) and build-tsan/ (the tests of the concurrent
# parts, under ThreadSanitizer). build-asan/ is clang's and also holds the
# libFuzzer targets of fuzz/. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev nlohmann-json3-dev libcli11-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libopenblas-dev libsleef-dev zlib1g-dev libjemalloc-dev
  libdw-dev libunwind-dev libclang-dev
  clang-14 libclang-rt-14-dev
  python3-numpy python3-onnx python3-torch python3-torchvision graphviz
  python3-dev pybind11-dev python3-pytest python3-pandas
  chromium
)
# The web UI's browser test runs on node (tests/web); Debian's node if there is none.
command -v npm >/dev/null || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# playwright-core for the web UI test, at the locked version; again only when the lock file changed.
lock_sum=$(sha256sum tests/web/package-lock.json | cut -d' ' -f1)
if [ "$(cat tests/web/node_modules/.opscope-lock-sha256 2>/dev/null)" != "$lock_sum" ]; then
  echo "setup: npm ci in tests/web"
  npm ci --prefix tests/web --no-audit --no-fund --loglevel=error >/dev/null
  echo "$lock_sum" >tests/web/node_modules/.opscope-lock-sha256
fi

# onnxruntime's CPU build (onnxruntime-node) for tools/ort/run_ort.js, which
# inspector-cli import-ort's tests and bench/ run models under; its install
# script only fetches GPU builds from elsewhere, so it is skipped.
lock_sum=$(sha256sum tools/ort/package-lock.json | cut -d' ' -f1)
if [ "$(cat tools/ort/node_modules/.opscope-lock-sha256 2>/dev/null)" != "$lock_sum" ]; then
  echo "setup: npm ci in tools/ort"
  npm ci --prefix tools/ort --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
  echo "$lock_sum" >tools/ort/node_modules/.opscope-lock-sha256
fi

jobs=$(nproc)
# Every tree is a unity build (cmake/unity_batches.cmake joins up to 8
# sources of a target into one, with paths a second clone shares): the heavy
# headers (CLI11, nlohmann/json, fmt, gtest) are then parsed and their inline
# code generated once per batch, not once per file. Eight files of
# graph/run/ took g++ -O2 67 s one by one and 25 s as one unit; the
# sanitizer trees built in half the time (docs/testing.md, "CI time"). What
# it costs: a .cc that forgets an include can compile in its batch until the
# batches change, and a rebuild after one edit recompiles the edited file's
# batch. `cmake -S . -B mybuild -G Ninja` (OPSCOPE_UNITY off) builds one
# object per file for a developer who wants either back.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPSCOPE_UNITY=ON >/dev/null
ninja -C build -j"$jobs"
# clang makes the ASan tree: with libFuzzer's coverage in the same objects,
# it holds the fuzz targets of fuzz/ too (docs/fuzzing.md), at the cost
# of their links alone. A tree configured by another compiler starts afresh.
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:.*clang' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
CC=clang-14 CXX=clang++-14 cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOPSCOPE_SANITIZE=ON \
  -DOPSCOPE_BUILD_BENCH=OFF -DCMAKE_UNITY_BUILD=OFF -DOPSCOPE_UNITY=ON >/dev/null
ninja -C build-asan -j"$jobs"
# Only what the ThreadSanitizer run needs: see OPSCOPE_SANITIZE=thread in CMakeLists.txt.
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOPSCOPE_SANITIZE=thread \
  -DOPSCOPE_BUILD_BENCH=OFF -DOPSCOPE_BUILD_TOOLS=OFF -DCMAKE_UNITY_BUILD=OFF -DOPSCOPE_UNITY=ON >/dev/null
ninja -C build-tsan -j"$jobs"
# The tools on PATH (root installs into /usr/local/bin; others get a hint).
if [ -w /usr/local/bin ]; then
  for tool in ops-debug inspector-cli; do
    [ -x "build/bin/$tool" ] && ln -sf "$PWD/build/bin/$tool" "/usr/local/bin/$tool"
  done
  echo "setup: ops-debug and inspector-cli are on PATH (/usr/local/bin)"
else
  echo "setup: add $PWD/build/bin to PATH to use ops-debug and inspector-cli"
fi
