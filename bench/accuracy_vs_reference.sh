#!/usr/bin/env bash
# The accuracy run of a ResNet-18-class model against its double-precision
# reference run alone: `inspector-cli accuracy` runs the framework graph on
# the ops' references (the golden), the compiled graph, and every node alone
# again; the issue's bar is the whole command within 3x the golden chain.
# Each of RUNS runs reports its golden time (accuracy.json time_ms.golden);
# the whole command is timed around it. Medians, and their ratio.
#
#   bench/accuracy_vs_reference.sh [SIZE=112] [RUNS=3]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-112}
runs=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 bench/make_resnet18.py "$work/resnet18.onnx" "$size"
for i in $(seq "$runs"); do
  start=$(date +%s%N)
  build/bin/inspector-cli accuracy "$work/resnet18.onnx" --output-dir "$work/acc" --top 0 >/dev/null
  end=$(date +%s%N)
  /usr/bin/python3 -c "import json,sys; t=json.load(open('$work/acc/accuracy.json'))['time_ms']; print(t['golden'], $(( (end - start) / 1000 )) / 1000)"
done | /usr/bin/python3 -c "
import statistics, sys
rows = [tuple(map(float, line.split())) for line in sys.stdin]
golden, whole = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
print(f'resnet18-class at {$size}x{$size}, {len(rows)} runs: golden chain {golden:.0f} ms, whole accuracy command {whole:.0f} ms, ratio {whole / golden:.2f}x')
"
