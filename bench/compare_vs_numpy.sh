#!/bin/sh
# ops-debug compare against numpy computing the same numbers on the same two
# seeded float32 .npy files, side by side, each timed as a whole process
# (median of RUNS runs, peak RSS from wait4), then one untimed run of each to
# check that both report the same numbers.
#   bench/compare_vs_numpy.sh [BUILD_DIR] [ELEMENTS]     (defaults: build, 67108864; RUNS=3)
# numpy computes, in float64 as ops-debug does: |a-e|, the mixed-rule verdict
# (allclose, atol = rtol = 1e-5, NaN matching NaN and an infinity the same
# infinity), mismatch count, max/argmax of the abs and the rel error (rel over
# finite pairs with e != 0), mean abs err, RMSE and cosine over finite pairs,
# NaN and Inf counts per side, and the histogram by decade of |expected| with
# count, mismatches and summed error per bin. It does not compute what
# ops-debug adds beyond these (per-bin max, worst-K, per-dim counts, pattern,
# findings). The output fails (every 9973rd element is off): ops-debug is
# also timed with --no-findings, so the cost of the findings (maps, value
# bands, their histograms) shows as the ratio of the two.
set -eu
BUILD=${1:-build}
N=${2:-67108864}
RUNS=${RUNS:-3}
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
import json, sys, numpy as np
np.seterr(all="ignore")  # NaN and infinities are data here
e = np.load(sys.argv[1]); a = np.load(sys.argv[2])
atol = rtol = 1e-5
e64 = e.astype(np.float64); a64 = a.astype(np.float64)
nan_a, nan_e = int(np.isnan(a).sum()), int(np.isnan(e).sum())
inf_a, inf_e = int(np.isinf(a).sum()), int(np.isinf(e).sum())
all_finite = nan_a + nan_e + inf_a + inf_e == 0
diff = a64 - e64
err = np.abs(diff)
abs_e = np.abs(e64)
ok = err <= atol + rtol * abs_e
if not all_finite:
    ok |= (np.isnan(a64) & np.isnan(e64)) | (np.isinf(a64) & (a64 == e64))
mismatched = int(ok.size - np.count_nonzero(ok))
allclose = mismatched == 0
# A NaN error has no size; skip it as ops-debug does (finite data: no copy).
fin = None if all_finite else np.isfinite(a64) & np.isfinite(e64)
ranked = err if all_finite else np.where(np.isnan(err), -1.0, err)
i = int(np.argmax(ranked)); max_abs = float(err[i])
rel_ok = abs_e != 0 if all_finite else fin & (abs_e != 0)
rel = np.divide(err, abs_e, out=np.full_like(err, -1.0), where=rel_ok)
j = int(np.argmax(rel)); max_rel = float(rel[j])
fd, fe, fa, fea = (diff, err, a64, e64) if all_finite else (diff[fin], err[fin], a64[fin], e64[fin])
mean = float(fe.mean()); rmse = float(np.sqrt(np.dot(fd, fd) / fd.size))
cos = float(np.dot(fa, fea) / (np.sqrt(np.dot(fa, fa)) * np.sqrt(np.dot(fea, fea))))
# Histogram by decade of |expected|: 0, [1e(d),1e(d+1)), nan/inf.
fin_e = np.isfinite(e64) if not all_finite else None
nz = abs_e != 0 if all_finite else fin_e & (abs_e != 0)
every = bool(nz.all())  # no zero, no NaN or infinity in e: no copies
dec = np.floor(np.log10(abs_e if every else abs_e[nz])).astype(np.int64)
low = int(dec.min()) if dec.size else 0
dec -= low
bad_nz = ~ok if every else ~ok[nz]
counts = np.bincount(dec)
bad = np.bincount(dec[bad_nz], minlength=counts.size)
weights = err if all_finite else np.where(np.isfinite(a64), err, 0.0)
sums = np.bincount(dec, weights=weights if every else weights[nz])
hist = []
zero = ~nz if all_finite else fin_e & (abs_e == 0)
if not every and zero.any():
    hist.append({"bin": "0", "count": int(zero.sum()), "mismatched": int((~ok[zero]).sum())})
for k in np.nonzero(counts)[0]:
    d = int(k) + low
    hist.append({"bin": f"[1e{d},1e{d + 1})", "count": int(counts[k]), "mismatched": int(bad[k]),
                 "sum_abs_err": float(sums[k])})
if not all_finite and not fin_e.all():
    hist.append({"bin": "nan/inf", "count": int((~fin_e).sum()), "mismatched": int((~ok[~fin_e]).sum())})
json.dump({"mismatched": mismatched, "allclose": allclose, "max_abs_err": max_abs, "max_abs_index": i,
           "max_rel_err": max_rel, "max_rel_index": j, "mean_abs_err": mean, "rmse": rmse, "cosine": cos,
           "nan": [nan_a, nan_e], "inf": [inf_a, inf_e], "histogram": hist}, sys.stdout)
PYEOF

$PY - "$OPS_DEBUG" "$DIR" "$RUNS" <<'PYEOF'
import json, math, os, statistics, subprocess, sys, time
ops_debug, d, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = [d + "/expected.npy", d + "/actual.npy"]
ours_cmd = [ops_debug, "compare"] + files
bare_cmd = ours_cmd + ["--no-findings"]
theirs_cmd = ["/usr/bin/python3", d + "/numpy_compare.py"] + files

def timed(cmd):
    """Seconds and peak RSS (MiB) of one run of cmd, stdout discarded."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1)
        os.execv(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1): sys.exit(f"{cmd} exited {code}")
    return seconds, usage.ru_maxrss / 1024  # ru_maxrss is in KiB

inputs_mib = sum(os.path.getsize(f) for f in files) / 2**20
# Alternate the two, so that a change in the machine's load hits both alike.
ours_t, ours_rss, theirs_t, theirs_rss, bare_t = [], 0, [], 0, []
for _ in range(runs):
    t, r = timed(ours_cmd); ours_t.append(t); ours_rss = max(ours_rss, r)
    t, r = timed(theirs_cmd); theirs_t.append(t); theirs_rss = max(theirs_rss, r)
    t, _ = timed(bare_cmd); bare_t.append(t)
ours, theirs, bare = statistics.median(ours_t), statistics.median(theirs_t), statistics.median(bare_t)
print(f"inputs           2 x {inputs_mib / 2:.0f} MiB float32, median of {runs} runs each")
print(f"ops-debug compare  median {ours:.3f} s   peak RSS {ours_rss:.0f} MiB ({ours_rss / inputs_mib:.2f}x inputs)")
print(f"numpy              median {theirs:.3f} s   peak RSS {theirs_rss:.0f} MiB ({theirs_rss / inputs_mib:.2f}x inputs)")
print(f"speedup          {theirs / ours:.2f}x")
print(f"findings         median {ours:.3f} s with, {bare:.3f} s with --no-findings: {ours / bare:.2f}x")

# The same numbers from both (untimed).
report = d + "/report.json"
subprocess.run(ours_cmd + ["--report", report], stdout=subprocess.DEVNULL, check=False)
c = json.load(open(report))["compare"]
n = json.loads(subprocess.run(theirs_cmd, stdout=subprocess.PIPE, check=True).stdout)
ours_hist = {b["abs_expected"]: b for b in c["histogram"]}
checks = [("mismatched", c["mismatched"], n["mismatched"], 0), ("allclose", c["passed"], n["allclose"], 0),
          ("max abs err", c["max_abs_err"], n["max_abs_err"], 0),
          ("argmax abs err", c["max_abs_at"]["flat_index"], n["max_abs_index"], 0),
          ("max rel err", c["max_rel_err"], n["max_rel_err"], 0),
          ("argmax rel err", c["max_rel_at"]["flat_index"], n["max_rel_index"], 0),
          ("mean abs err", c["mean_abs_err"], n["mean_abs_err"], 1e-9), ("rmse", c["rmse"], n["rmse"], 1e-9),
          ("cosine", c["cosine"], n["cosine"], 1e-12),
          ("NaN actual/expected", [c["nan"]["actual"], c["nan"]["expected"]], n["nan"], 0),
          ("Inf actual/expected", [c["inf"]["actual"], c["inf"]["expected"]], n["inf"], 0),
          ("histogram bins", sorted(ours_hist), sorted(b["bin"] for b in n["histogram"]), 0)]
for b in n["histogram"]:
    o = ours_hist.get(b["bin"], {})
    checks.append((f"bin {b['bin']} count/mismatched", [o.get("count"), o.get("mismatched")],
                   [b["count"], b["mismatched"]], 0))
    if "sum_abs_err" in b and o:
        checks.append((f"bin {b['bin']} summed err", o["mean_abs_err"] * o["count"], b["sum_abs_err"], 1e-9))
def same(x, y, rel):
    if rel == 0: return x == y
    return math.isclose(x, y, rel_tol=rel, abs_tol=1e-300)
bad = [f"{name}: ops-debug {x} numpy {y}" for name, x, y, rel in checks if not same(x, y, rel)]
for line in bad: print("DISAGREE  " + line)
print(f"results          {len(checks) - len(bad)} of {len(checks)} numbers agree")
sys.exit(1 if bad else 0)
PYEOF
