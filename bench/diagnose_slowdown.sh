#!/usr/bin/env bash
# What ops-debug diagnose costs a run, side by side in one session: the same
# op instance under plain `ops-debug run`, under diagnose with sync points on
# (the default) and off, alternating the three, N rounds; medians of the
# wall time of each. Also prints the slowdown diagnose measures itself
# (diagnosis.json: the run over the run less what it added, an upper bound).
#
#   bench/diagnose_slowdown.sh [N=15] [--op ... flags of run]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-15}
shift || true
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--op Relu --input-shapes "[16,1024,1024]")
bin=build/bin/ops-debug
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
for ((i = 0; i < n; i++)); do
  t0=$(now); "$bin" run "${args[@]}" >/dev/null; t1=$(now)
  "$bin" diagnose --quiet-program --output-dir "$tmp/on" "${args[@]}" >/dev/null; t2=$(now)
  "$bin" diagnose --quiet-program --sync-points off --output-dir "$tmp/off" "${args[@]}" >/dev/null; t3=$(now)
  echo "$t0 $t1 $t2 $t3" >>"$tmp/times"
done
/usr/bin/python3 - "$tmp/times" "$tmp/on/diagnosis.json" "$tmp/off/diagnosis.json" <<'PY'
import json, statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
run = statistics.median(r[1] - r[0] for r in rows)
on = statistics.median(r[2] - r[1] for r in rows)
off = statistics.median(r[3] - r[2] for r in rows)
print(f"rounds {len(rows)}, medians of wall time (whole process, start-up included)")
print(f"  ops-debug run                      {run*1e3:8.1f} ms")
print(f"  ops-debug diagnose, sync points on  {on*1e3:8.1f} ms   {on/run:5.2f}x")
print(f"  ops-debug diagnose, sync points off {off*1e3:8.1f} ms   {off/run:5.2f}x")
for name, path in (("on", sys.argv[2]), ("off", sys.argv[3])):
    s = json.load(open(path))["slowdown"]
    print(f"  diagnose's own figure, sync {name:3}: {s['factor']:.3f}x (sync waits {s['sync_wait_ms']:.2f} ms, "
          f"tensor summaries {s['tensor_summaries_ms']:.2f} ms, recording {s['recording_ms']:.3f} ms of {s['run_ms']:.1f} ms)")
PY
