#!/usr/bin/env bash
# What `inspector-cli accuracy` holds of a deep CNN: a ResNet-101-class
# export (bench/make_resnet101.py) at batch 1, every intermediate tensor of
# the golden chain (float64) and of the compiled run kept in memory. Prints
# the command's peak RSS (/usr/bin/time -v), its wall time and the sum of
# the graph's activations, so the peak can be read against what it holds.
# With KEEP_BYTES (64M, 0, ...) the run holds that much in memory and spills
# the rest (--keep-bytes).
#
#   bench/accuracy_memory.sh [SIZE=224] [KEEP_BYTES]
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-224}
keep=${2:+--keep-bytes $2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 bench/make_resnet101.py "$work/resnet101.onnx" "$size"
/usr/bin/time -v build/bin/inspector-cli accuracy "$work/resnet101.onnx" --output-dir "$work/acc" --top 1 $keep \
  > "$work/out.txt" 2> "$work/time.txt" || true
grep -E "^(verdict|nodes|time|memory) " "$work/out.txt"
/usr/bin/python3 - "$work" "$size" ${2:-} <<'PY'
import json, re, sys
import onnx
from onnx import shape_inference
work, size = sys.argv[1], sys.argv[2]
m = shape_inference.infer_shapes(onnx.load(f"{work}/resnet101.onnx"))
inits = {i.name for i in m.graph.initializer}
floats = 0
for v in list(m.graph.value_info) + list(m.graph.output):
    dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
    if v.name not in inits and dims and all(dims):
        n = 1
        for d in dims: n *= d
        floats += n
weights = sum(int(__import__('numpy').prod(i.dims)) for i in m.graph.initializer)
text = open(f"{work}/time.txt").read()
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)) / 1024
wall = re.search(r"Elapsed \(wall clock\) time.*: (\S+)", text).group(1)
keep = sys.argv[3] if len(sys.argv) > 3 else ""
print(f"resnet101-class at {size}x{size}{', --keep-bytes ' + keep if keep else ''}, {len(m.graph.node)} ONNX nodes: activations {floats * 4 / 2**20:.0f} MiB as float32 "
      f"({floats * 8 / 2**20:.0f} MiB as the golden's float64), weights {weights * 4 / 2**20:.0f} MiB; "
      f"accuracy peak RSS {rss:.0f} MiB, wall {wall}")
PY
