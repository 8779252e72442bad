#!/bin/sh
# ops-debug compare against numpy computing the same numbers (abs diff,
# allclose, max/argmax, mean, RMSE, cosine, histogram by decade) on the same
# two seeded float32 .npy files, side by side: median of 3 runs each and peak RSS.
#   bench/compare_vs_numpy.sh [BUILD_DIR] [ELEMENTS]     (defaults: build, 67108864)
set -eu
BUILD=${1:-build}
N=${2:-67108864}
OPS_DEBUG=$(cd "$BUILD" && pwd)/bin/ops-debug
PY=/usr/bin/python3
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

$PY - "$DIR" "$N" <<'PYEOF'
import sys, numpy as np
d, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(42)
e = rng.standard_normal(n, dtype=np.float32)
a = e + rng.standard_normal(n, dtype=np.float32) * np.float32(1e-6)
a[::9973] += np.float32(1e-2)  # some real mismatches
np.save(d + "/expected.npy", e)
np.save(d + "/actual.npy", a)
PYEOF

cat > "$DIR/numpy_compare.py" <<'PYEOF'
import sys, numpy as np
e = np.load(sys.argv[1]); a = np.load(sys.argv[2])
atol = rtol = 1e-5
diff = np.abs(a.astype(np.float64) - e)
ok = diff <= atol + rtol * np.abs(e)
allclose = bool(ok.all())
mismatched = int(ok.size - np.count_nonzero(ok))
i = int(np.argmax(diff)); max_abs = float(diff[i])
nz = e != 0
rel = diff[nz] / np.abs(e[nz]); j = int(np.argmax(rel)); max_rel = float(rel[j])
mean = float(diff.mean()); rmse = float(np.sqrt(np.mean(diff * diff)))
a64 = a.astype(np.float64); e64 = e.astype(np.float64)
cos = float(np.dot(a64, e64) / (np.linalg.norm(a64) * np.linalg.norm(e64)))
ae = np.abs(e[nz]).astype(np.float64)
dec = np.floor(np.log10(ae)).astype(np.int64)
hist = np.bincount(dec - dec.min())
nan = (int(np.isnan(a).sum()), int(np.isnan(e).sum())); inf = (int(np.isinf(a).sum()), int(np.isinf(e).sum()))
print(mismatched, max_abs, i, max_rel, mean, rmse, cos, allclose, nan, inf, len(hist))
PYEOF

$PY - "$OPS_DEBUG" "$DIR" <<'PYEOF'
import os, resource, statistics, subprocess, sys, time
ops_debug, d = sys.argv[1], sys.argv[2]
files = [d + "/expected.npy", d + "/actual.npy"]
def timed(cmd):
    times, peak = [], 0
    for _ in range(3):
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1)
            os.execv(cmd[0], cmd)
        _, status, usage = os.wait4(pid, 0)
        times.append(time.perf_counter() - t0)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1): sys.exit(f"{cmd} exited {code}")
        peak = max(peak, usage.ru_maxrss)  # KiB
    return statistics.median(times), peak / 1024
inputs_mib = sum(os.path.getsize(f) for f in files) / 2**20
ours, ours_rss = timed([ops_debug, "compare"] + files)
theirs, theirs_rss = timed(["/usr/bin/python3", d + "/numpy_compare.py"] + files)
print(f"inputs           2 x {inputs_mib / 2:.0f} MiB float32")
print(f"ops-debug compare  median {ours:.3f} s   peak RSS {ours_rss:.0f} MiB ({ours_rss / inputs_mib:.2f}x inputs)")
print(f"numpy              median {theirs:.3f} s   peak RSS {theirs_rss:.0f} MiB")
print(f"speedup          {theirs / ours:.2f}x")
PYEOF
