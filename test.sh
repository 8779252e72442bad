#!/usr/bin/env bash
# Runs every test: first brings each build folder up to date (a no-op right
# after setup.sh, so a test never runs a stale binary), then the whole ctest
# suite of build/ (unit, conformance, CLI, end-to-end, golden files), the same
# suite under ASan + UBSan from build-asan/, and the tests of the concurrent
# parts (cpu device, recorder, dispatcher, runtime executor) under TSan from
# build-tsan/; last, every fuzz target of build-asan/ for FUZZ_SECONDS (20)
# each (fuzz/run.sh), a crash failing the run with its reproducer's path.
set -euo pipefail
cd "$(dirname "$0")"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp}

dirs=(build build-asan build-tsan)
for dir in "${dirs[@]}"; do
  if [ ! -f "$dir/build.ninja" ]; then
    echo "test.sh: $dir/ is not configured: run ./setup.sh first" >&2
    exit 2
  fi
  echo "== bringing $dir/ up to date"
  ninja -C "$dir" -j"$(nproc)" || { echo "test.sh: building $dir/ failed" >&2; exit 1; }
done

# Tests that hold a run against its roofline calibrate the cpu on first use.
# One calibration into a cache of the build's own, before ctest runs anything
# in parallel, serves them all (ASan's too: the cache key is the machine's),
# so no two calibrations compete and none measures under another test's load.
# Measured afresh each time (3 s): a cache kept from a run under load would
# give every roof in the suite's output that load's figures.
export XDG_CACHE_HOME=$PWD/build/test-cache
echo "== calibrating the cpu once for the tests (cache: build/test-cache)"
build/bin/ops-debug calibrate --refresh

status=0
echo "== tests (build/)"
ctest --test-dir build --output-on-failure -j2 || status=1
echo "== tests under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
ctest --test-dir build-asan --output-on-failure -j2 || status=1
echo "== tests of the concurrent parts under ThreadSanitizer (build-tsan/)"
ctest --test-dir build-tsan --output-on-failure -j2 || status=1
echo "== fuzz targets, ${FUZZ_SECONDS:-20} s each (build-asan/bin/*_fuzzer)"
FUZZ_SEED=${FUZZ_SEED:-1} fuzz/run.sh "${FUZZ_SECONDS:-20}" || status=1
exit $status
