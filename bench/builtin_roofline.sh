#!/bin/sh
# Every built-in elementwise and normalisation kernel held against its
# roofline on this machine: `ops-debug profile` on a 64 MiB float32 tensor
# (past a real last-level cache), its median against the lower bound of its
# cost model at the calibrated peaks. Prints one row per op; docs/speed.md's
# table is this script's output.
#   bench/builtin_roofline.sh [BUILD_DIR] [ELEMENTS] [ITERS]   (defaults: build, 16777216, 10)
set -eu
BUILD=${1:-build}
N=${2:-16777216}
ITERS=${3:-10}
OPS_DEBUG=$(cd "$BUILD" && pwd)/bin/ops-debug
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
S="[$N]"
C=64
NCHW="[16,$C,128,$((N / (16 * C * 128)))]"
ROWS="[$((N / 1024)),1024]"
# op | input shapes | dtypes | attrs | fill
cat >"$DIR/ops" <<LIST
Abs|$S|||normal
Neg|$S|||normal
Exp|$S|||normal
Log|$S|||uniform
Sqrt|$S|||uniform
Erf|$S|||normal
Relu|$S|||normal
LeakyRelu|$S|||normal
Elu|$S|||normal
Selu|$S|||normal
Sigmoid|$S|||normal
HardSigmoid|$S|||normal
Softplus|$S|||normal
Tanh|$S|||normal
Gelu|$S|||normal
Clip|$S||min=-0.5,max=0.5|normal
Cast|$S||to=10|normal
Identity|$S|||normal
Not|$S|bool||int
Add|$S;$S|||normal
Sub|$S;$S|||normal
Mul|$S;$S|||normal
Div|$S;$S|||uniform
Pow|$S;$S|||uniform
Max|$S;$S|||normal
Min|$S;$S|||normal
Mean|$S;$S|||normal
Sum|$S;$S|||normal
PRelu|$S;$S|||normal
Equal|$S;$S|||int
Greater|$S;$S|||normal
Less|$S;$S|||normal
And|$S;$S|bool,bool||int
Where|$S;$S;$S|bool,float32,float32||normal
BatchNormalization|$NCHW;[$C];[$C];[$C];[$C]|||uniform
InstanceNormalization|$NCHW;[$C];[$C]|||uniform
LayerNormalization|$ROWS;[1024];[1024]|||normal
LpNormalization|$ROWS|||normal
Softmax|$ROWS|||normal
LogSoftmax|$ROWS|||normal
LIST
printf '%-22s %12s %12s %9s %11s  %s\n' op median "lower bound" slowdown efficiency verdict
while IFS='|' read -r op shapes dtypes attrs fill; do
  set -- --op "$op" --input-shapes "$shapes" --fill "$fill" --iters "$ITERS" --warmup 2 --report "$DIR/r.json"
  [ -n "$dtypes" ] && set -- "$@" --dtype "$dtypes"
  [ -n "$attrs" ] && set -- "$@" --attrs "$attrs"
  if ! "$OPS_DEBUG" profile "$@" >"$DIR/out" 2>&1; then
    printf '%-22s %s\n' "$op" "profile failed: $(tail -1 "$DIR/out")"
    continue
  fi
  python3 - "$op" "$DIR/r.json" <<'PY'
import json, sys
op, path = sys.argv[1], sys.argv[2]
p = json.load(open(path))["profile"]
r = p["roofline"]
med = p["device"]["median_us"]
if not r["has_cost_model"]:
    print(f"{op:<22} {med/1e3:10.3f}ms {'-':>12} {'-':>9} {'-':>11}  no cost model")
    sys.exit()
s = r["slowdown"] or 0
verdict = "within 2x" if s <= 2 else "OVER 2x"
print(f"{op:<22} {med/1e3:10.3f}ms {r['lower_bound_us']/1e3:10.3f}ms {s:8.2f}x {100*(r['efficiency'] or 0):10.1f}%  {verdict} ({r['bound']}-bound)")
PY
done <"$DIR/ops"
