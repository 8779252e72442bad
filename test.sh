#!/usr/bin/env bash
# Runs every test: the whole ctest suite of build/ (unit, conformance, CLI,
# end-to-end), then the unit tests again under ASan + UBSan from build-asan/.
set -euo pipefail
cd "$(dirname "$0")"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=0
echo "== tests (build/)"
ctest --test-dir build --output-on-failure -j2 || status=1
echo "== unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
ctest --test-dir build-asan --output-on-failure -R '^unit_tests$' || status=1
exit $status
