#!/usr/bin/env bash
# graphviz `dot` beside opscope's layout on the same graphs: the synthetic
# models of N nodes (examples/models/make_synthetic.py), their framework
# layer as the graph view draws it (the same nodes and edges, the same
# scopes as nested clusters, boxes of the same size). The two sides alternate,
# ROUNDS rounds (default 3); medians. dot runs with a TIMEOUT (default 600 s).
#   bench/layout_vs_dot.sh [N ...]        (default: 1000 2000 5000 10000)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
rounds=${ROUNDS:-3}
limit=${TIMEOUT:-600}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v dot >/dev/null || { echo "layout_vs_dot: graphviz's dot is missing (setup.sh installs graphviz)" >&2; exit 2; }

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

printf '%-8s %-8s %-10s %14s %14s %8s\n' nodes drawn clusters "opscope s" "dot s" ratio
for n in ${@:-1000 2000 5000 10000}; do
  model=$work/m$n.onnx
  /usr/bin/python3 examples/models/make_synthetic.py "$n" "$model" >/dev/null
  "$build/bin/inspector-cli" run "$model" --output-dir "$work/run$n" >/dev/null
  read -r drawn clusters < <(/usr/bin/python3 bench/graph_json_to_dot.py "$work/run$n/graph.json" "$work/g$n.dot")
  ours=() theirs=()
  for ((r = 0; r < rounds; ++r)); do
    s=$(OPSCOPE_LAYOUT_MODEL=$model "$build/bin/layout_benchmark" --benchmark_filter=BM_Layout_Model \
        --benchmark_repetitions=1 --benchmark_min_time=0.01 --benchmark_format=json 2>/dev/null |
        /usr/bin/python3 -c 'import json,sys; b=json.load(sys.stdin)["benchmarks"][0]; print(b["real_time"] / 1e3)')
    ours+=("$s")
    t0=$(date +%s.%N)
    if timeout "$limit" dot -Tplain "$work/g$n.dot" -o /dev/null; then
      theirs+=("$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { print a - b }')")
    else
      theirs+=(">$limit"); break
    fi
  done
  o=$(printf '%s\n' "${ours[@]}" | median)
  if [[ "${theirs[*]}" == *">"* ]]; then d=">$limit"; ratio="-"
  else d=$(printf '%s\n' "${theirs[@]}" | median); ratio=$(awk -v a="$d" -v b="$o" 'BEGIN { printf "%.0fx", a / b }'); fi
  printf '%-8s %-8s %-10s %14.3f %14s %8s\n' "$n" "$drawn" "$clusters" "$o" "$d" "$ratio"
done
