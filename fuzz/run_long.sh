#!/usr/bin/env bash
# The fuzz targets run long, for finding rather than for CI: SECONDS (default
# 600) per target, one after another; the corpus found grows across runs.
# Prints executions per target and the crashes found (build-asan/fuzz/crashes/).
#   fuzz/run_long.sh 3600
#   fuzz/run_long.sh 900 onnx npz
set -uo pipefail
cd "$(dirname "$0")"
seconds=${1:-600}
shift || true
./run.sh "$seconds" "$@"
status=$?
echo "crashes kept in build-asan/fuzz/crashes/: $(find ../build-asan/fuzz/crashes -type f 2>/dev/null | wc -l)"
exit $status
