#!/usr/bin/env bash
# Runs every fuzz target of build-asan/ (or those named) for SECONDS each, one
# after another, from the seeds of make_corpus.sh plus what earlier runs found
# (build-asan/fuzz/found/<target>/, kept between runs). Prints executions per
# target; a crash, leak, timeout or out-of-memory input is left in
# build-asan/fuzz/crashes/<target>/ and its path printed, and the script then
# exits 1 after the other targets have run.
#   fuzz/run.sh 20                  # what test.sh does
#   fuzz/run.sh 600 onnx http       # two targets, ten minutes each
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
shift || true
bin=build-asan/bin
ls "$bin"/*_fuzzer >/dev/null 2>&1 || { echo "fuzz/run.sh: no fuzz target in $bin/ (clang builds them into build-asan/): run ./setup.sh first" >&2; exit 2; }
targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in "$bin"/*_fuzzer; do targets+=("$(basename "$f" _fuzzer)"); done
fi
mkdir -p build-asan/fuzz
fuzz/make_corpus.sh build-asan/fuzz/corpus >/dev/null
# Leaks count: a parser that leaks on bad input leaks in a long-running serve.
export ASAN_OPTIONS=${FUZZ_ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${FUZZ_UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
total=0
for t in "${targets[@]}"; do
  found=build-asan/fuzz/found/$t crashes=build-asan/fuzz/crashes/$t
  mkdir -p "$found" "$crashes"
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  # FUZZ_SEED fixes libFuzzer's mutations (test.sh's 1): the same inputs in
  # the same order on every run, as far as the time allows.
  [ -n "${FUZZ_SEED:-}" ] && dict+=(-seed="$FUZZ_SEED")
  log=build-asan/fuzz/$t.log
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: what a parser may use.
  "$bin/${t}_fuzzer" "$found" "build-asan/fuzz/corpus/$t" "${dict[@]}" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  execs=${execs:-0}
  total=$((total + execs))
  artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  if ((rc != 0)) || [ -n "$artifact" ]; then
    status=1
    echo "fuzz $t: FAILED after $execs executions (rc $rc): reproducer ${artifact:-none written}; log $log"
    grep -m1 -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:" "$log" | sed 's/^/  /'
    echo "  rerun: $bin/${t}_fuzzer ${artifact:-<input>}"
  else
    echo "fuzz $t: $execs executions in ${seconds}s, no crash"
  fi
done
echo "fuzz: $total executions over ${#targets[@]} targets"
exit $status
