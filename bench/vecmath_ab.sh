#!/bin/sh
# The float32 transcendental ops with SLEEF's AVX2 functions against libm's
# scalar loop (OPSCOPE_SCALAR_MATH=1), alternating the two in one run:
# `ops-debug profile` on a 64 MiB float32 tensor, median device time of 10
# calls, ROUNDS rounds; prints each side's median over the rounds, the
# speed-up, and the vector side's slowdown against the op's roofline bound.
#   bench/vecmath_ab.sh [BUILD_DIR] [ROUNDS]   (defaults: build, 3)
set -eu
BUILD=${1:-build}
ROUNDS=${2:-3}
OPS_DEBUG=$(cd "$BUILD" && pwd)/bin/ops-debug
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
printf '%-10s %12s %12s %9s %11s\n' op scalar sleef speed-up "vs bound"
for op in Exp Log Tanh Erf Sigmoid Softplus Elu Selu Gelu; do
  fill=normal
  [ "$op" = Log ] && fill=uniform
  : >"$DIR/scalar"
  : >"$DIR/sleef"
  r=0
  while [ "$r" -lt "$ROUNDS" ]; do
    for side in scalar sleef; do
      set -- profile --op "$op" --input-shapes "[16777216]" --fill "$fill" --iters 10 --warmup 2 --report "$DIR/r.json"
      if [ "$side" = scalar ]; then OPSCOPE_SCALAR_MATH=1 "$OPS_DEBUG" "$@" >/dev/null; else "$OPS_DEBUG" "$@" >/dev/null; fi
      python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["profile"]; print(p["device"]["median_us"], p["roofline"]["lower_bound_us"])' \
        "$DIR/r.json" >>"$DIR/$side"
    done
    r=$((r + 1))
  done
  python3 - "$op" "$DIR/scalar" "$DIR/sleef" <<'PY'
import statistics, sys
op, a, b = sys.argv[1:]
rows = lambda f: [tuple(map(float, l.split())) for l in open(f)]
s, v = rows(a), rows(b)
ms, mv = statistics.median(x[0] for x in s), statistics.median(x[0] for x in v)
bound = v[0][1]
print(f"{op:<10} {ms/1e3:10.2f}ms {mv/1e3:10.2f}ms {ms/mv:8.1f}x {mv/bound:10.2f}x")
PY
done
