#!/usr/bin/env bash
# The GPU checks that need only the CUDA toolkit, for a machine that has a GPU
# and nothing else of opscope's dependencies (the device machine a task may be
# lent: nvcc, CMake and ninja, no Debian -dev packages). From the repository
# root:  bash tests/gpu/run_on_gpu.sh [OUT_DIR]
# It builds tests/gpu/ptx_kernels_check with g++ against the CUDA runtime and
# runs it: every PTX kernel opscope ships, loaded as the cuda device loads it,
# checked against the host, and the calibration's copy and FMA rates. The
# log goes to OUT_DIR/ptx_kernels_check.log as well. Exit: the check's.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-${OUT:-/tmp}}
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
g++ -std=c++20 -O2 -Isrc -Itests -Iexamples/my_ops -I"$cuda/include" tests/gpu/ptx_kernels_check.cc \
  -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" -lcudart -o "$out/ptx_kernels_check"
"$out/ptx_kernels_check" 2>&1 | tee "$out/ptx_kernels_check.log"
exit "${PIPESTATUS[0]}"
