#!/usr/bin/env bash
# Configures and builds the minimal tree (-DOPSCOPE_MINIMAL=ON, cmake/minimal.cmake):
# what a GPU machine with only the CUDA toolkit, g++, CMake and ninja builds.
#
#   tests/gpu/build_minimal.sh BUILD_DIR              # from the carried minimal_deps/, optimised (run_on_gpu.sh)
#   tests/gpu/build_minimal.sh --check BUILD_DIR      # this machine, as that one would see it (ctest: minimal_build_test)
#
# --check gathers the dependencies afresh into BUILD_DIR/deps (gather_deps.sh),
# hides every package under /usr and / from CMake's find_* calls (ONNX,
# protobuf, OpenBLAS, SLEEF, libdw, libunwind, libclang, zlib, gtest are all
# there; Debian's /lib is /usr/lib, so "/" finds their CMake configs too),
# and compiles at -O0 with no debug information: it asks whether the tree
# builds, as cheaply as that can be asked (unity batches, only the targets
# whose code differs from the full build). The compiler cannot be kept from
# /usr/include; the minimal tree's left_out_headers/ (an #error for each header
# of a left-out package, searched first) and -Wl,--no-undefined on its shared
# libraries stand in for that. Other flags: --all (every target, with --check),
# --jobs N (default: all cores), --deps DIR (default minimal_deps/). Exit: cmake's or ninja's.
set -euo pipefail
cd "$(dirname "$0")/../.."
check=0
all=0
jobs=$(nproc)
deps=$PWD/minimal_deps
while [ $# -gt 1 ]; do
  case "$1" in
    --check) check=1; shift ;;
    --all) all=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    --deps) deps=$(realpath -m "$2"); shift 2 ;;
    *) echo "build_minimal: unknown flag $1 (--check, --jobs N, --deps DIR)" >&2; exit 2 ;;
  esac
done
[ $# -eq 1 ] || { echo "build_minimal: give the build folder: build_minimal.sh [--check] BUILD_DIR" >&2; exit 2; }
build=$(realpath -m "$1")

args=(-G Ninja -DOPSCOPE_MINIMAL=ON -DOPSCOPE_UNITY=ON)
if ((check)); then
  deps=$build/deps
  tests/gpu/gather_deps.sh "$deps" >/dev/null
  # ccache stays usable (a warm CI run hits), named because /usr is hidden.
  ccache=$(command -v ccache || true)
  args+=(-DCMAKE_BUILD_TYPE=None -DOPSCOPE_OPT=-O0 -DOPSCOPE_DEBUG_INFO=full
         "-DCMAKE_IGNORE_PREFIX_PATH=/usr;/" "-DCMAKE_SYSTEM_IGNORE_PREFIX_PATH=/usr;/"
         ${ccache:+-DCCACHE_PROGRAM=$ccache})
else
  args+=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
fi
mkdir -p "$build"
cmake -S . -B "$build" "${args[@]}" -DOPSCOPE_MINIMAL_DEPS="$deps" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
# --check builds what differs from the full build: the library with its
# stand-ins, ops-debug, and a gtest program over GoogleTest's own sources.
# The examples and the PTX checks are the full build's code unchanged.
targets=()
((check && !all)) && targets=(opscope ops-debug device_conformance_test)
ninja -C "$build" -j"$jobs" "${targets[@]}"
