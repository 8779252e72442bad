#!/usr/bin/python3
"""opscope.compare from Python against the same engine called from C++ and
against numpy computing the same statistics, on two 16M-element float32
arrays in memory (1% of the elements off by 0.5, as
bench/compare_benchmark.cc's BM_Compare_F32_16M_OnePercentMismatched).
The Python and numpy sides alternate, RUNS times each; the C++ figure is
that benchmark's own median over as many repetitions. Medians and ratios.

    PYTHONPATH=build/python /usr/bin/python3 bench/compare_python.py [BUILD_DIR=build] [RUNS=7]

numpy computes, in float64 as the engine does: |a-e|, the mixed-rule verdict
(atol = rtol = 1e-5) and its count, max abs and max rel error with where,
mean abs error, RMSE, cosine, NaN and Inf counts per side, and the histogram
by decade of |expected| with counts and mismatches per bin; not the worst-K,
the per-dim counts, the pattern or the findings the engine adds.
"""
import json
import statistics
import subprocess
import sys
import time

import numpy as np

import opscope

build = sys.argv[1] if len(sys.argv) > 1 else "build"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
n = 16 << 20
rng = np.random.default_rng(1)
e = rng.standard_normal(n, dtype=np.float32)
a = e.copy()
a[::100] += np.float32(0.5)


def numpy_stats(a, e):
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    d = np.abs(a64 - e64)
    ae = np.abs(e64)
    bad = ~(d <= 1e-5 + 1e-5 * ae)
    rel = np.divide(d, ae, out=np.zeros_like(d), where=ae != 0)
    decade = np.floor(np.log10(np.where(ae > 0, ae, 1))).astype(np.int64)
    bins = np.unique(decade, return_counts=True)
    return {"mismatched": int(bad.sum()), "max_abs": float(d.max()), "at": int(d.argmax()), "max_rel": float(rel.max()),
            "rel_at": int(rel.argmax()), "mean": float(d.mean()), "rmse": float(np.sqrt((d * d).mean())),
            "cosine": float(a64 @ e64 / np.sqrt((a64 @ a64) * (e64 @ e64))),
            "nan": (int(np.isnan(a).sum()), int(np.isnan(e).sum())), "inf": (int(np.isinf(a).sum()), int(np.isinf(e).sum())),
            "bins": bins, "bin_bad": np.bincount(decade - decade.min(), weights=bad)}


py_ms, np_ms = [], []
for _ in range(runs):
    t = time.perf_counter()
    r = opscope.compare(a, e)
    py_ms.append((time.perf_counter() - t) * 1e3)
    t = time.perf_counter()
    s = numpy_stats(a, e)
    np_ms.append((time.perf_counter() - t) * 1e3)
assert r.mismatched == s["mismatched"], (r.mismatched, s["mismatched"])

cpp = subprocess.run([f"{build}/bin/compare_benchmark", "--benchmark_filter=BM_Compare_F32_16M_OnePercentMismatched/0",
                      f"--benchmark_repetitions={runs}", "--benchmark_format=json"], capture_output=True, text=True, check=True)
cpp_ms = statistics.median(b["real_time"] for b in json.loads(cpp.stdout)["benchmarks"] if b.get("run_type") == "iteration")
p, q = statistics.median(py_ms), statistics.median(np_ms)
print(f"16M float32, 1% off, {runs} runs: opscope.compare {p:.0f} ms, the engine from C++ {cpp_ms:.0f} ms "
      f"(Python / C++ {p / cpp_ms:.2f}x), numpy's statistics {q:.0f} ms (numpy / opscope.compare {q / p:.1f}x)")
