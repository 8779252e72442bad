#!/usr/bin/env bash
# Installs every dependency from Debian's packages, then builds opscope twice:
# build/ (optimised, with tools, tests, benchmarks) and build-asan/ (unit tests
# under AddressSanitizer + UndefinedBehaviorSanitizer). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

packages=(
  build-essential cmake ninja-build pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev nlohmann-json3-dev libcli11-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libopenblas-dev zlib1g-dev
  python3-numpy python3-onnx
)
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

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j"$jobs"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOPSCOPE_SANITIZE=ON \
  -DOPSCOPE_BUILD_BENCH=OFF -DOPSCOPE_BUILD_TOOLS=OFF >/dev/null
ninja -C build-asan -j"$jobs" opscope_unit_tests

# The tools on PATH (root installs into /usr/local/bin; others get a hint).
if [ -w /usr/local/bin ]; then
  for tool in ops-debug inspector-cli; do
    [ -x "build/bin/$tool" ] && ln -sf "$PWD/build/bin/$tool" "/usr/local/bin/$tool"
  done
  echo "setup: ops-debug and inspector-cli are on PATH (/usr/local/bin)"
else
  echo "setup: add $PWD/build/bin to PATH to use ops-debug and inspector-cli"
fi
