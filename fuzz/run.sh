#!/usr/bin/env bash
# Runs every fuzz target of build-asan/ (or those named) for SECONDS each, as
# many at once as there are cores (FUZZ_JOBS): each target gets a core of its
# own for its SECONDS, as it would one after another, in a fraction of the
# wall time. From the seeds of make_corpus.sh plus what earlier runs found
# (build-asan/fuzz/found/<target>/, kept between runs). Prints executions per
# target; a crash, leak, timeout or out-of-memory input is left in
# build-asan/fuzz/crashes/<target>/ and its path printed, and the script then
# exits 1 after the other targets have run.
#   fuzz/run.sh 20                  # what test.sh does
#   fuzz/run.sh 600 onnx http       # two targets, ten minutes each
#   FUZZ_RUNS=1000000 fuzz/run.sh 3600 onnx   # a million inputs, or an hour
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
# One target's run; its verdict line goes to build-asan/fuzz/<target>.result
# (and, failed, a "1" to .failed), printed in order once all have run.
fuzz_one() {
  local t=$1
  local found=build-asan/fuzz/found/$t crashes=build-asan/fuzz/crashes/$t
  local result=build-asan/fuzz/$t.result log=build-asan/fuzz/$t.log
  mkdir -p "$found" "$crashes"
  rm -f "$result" "build-asan/fuzz/$t.failed"
  local dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  # FUZZ_SEED fixes libFuzzer's mutations (test.sh's 1): the same inputs in
  # the same order on every run, as far as the time allows.
  [ -n "${FUZZ_SEED:-}" ] && dict+=(-seed="$FUZZ_SEED")
  # FUZZ_RUNS: stop after that many inputs, if SECONDS have not passed first.
  [ -n "${FUZZ_RUNS:-}" ] && dict+=(-runs="$FUZZ_RUNS")
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: what a parser may use.
  "$bin/${t}_fuzzer" "$found" "build-asan/fuzz/corpus/$t" "${dict[@]}" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" >"$log" 2>&1
  local rc=$?
  local execs artifact
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  execs=${execs:-0}
  echo "$execs" >"build-asan/fuzz/$t.execs"
  artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  if ((rc != 0)) || [ -n "$artifact" ]; then
    echo 1 >"build-asan/fuzz/$t.failed"
    {
      echo "fuzz $t: FAILED after $execs executions (rc $rc): reproducer ${artifact:-none written}; log $log"
      grep -m1 -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:" "$log" | sed 's/^/  /'
      echo "  rerun: $bin/${t}_fuzzer ${artifact:-<input>}"
    } >"$result"
  else
    echo "fuzz $t: $execs executions in ${seconds}s, no crash" >"$result"
  fi
}

jobs=${FUZZ_JOBS:-$(nproc)}
running=0
for t in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait
status=0
total=0
for t in "${targets[@]}"; do
  cat "build-asan/fuzz/$t.result" 2>/dev/null || { echo "fuzz $t: no result (the run was killed)"; status=1; }
  [ -f "build-asan/fuzz/$t.failed" ] && status=1
  total=$((total + $(cat "build-asan/fuzz/$t.execs" 2>/dev/null || echo 0)))
done
echo "fuzz: $total executions over ${#targets[@]} targets, $jobs at a time"
exit $status
