#!/usr/bin/python3
"""opscope's cpu device against onnxruntime's CPU build, model by model, on
the same inputs (bench/compare_vs_ort.sh runs it; see docs/speed.md).

    /usr/bin/python3 bench/compare_vs_ort.py MODELS_DIR [ROUNDS] [NAME ...]

MODELS_DIR holds NAME.onnx and NAME.inputs/*.npy (bench/make_torch_models.py).
Each round runs both engines once each, alternating which goes first, each
a fresh process: opscope `inspector-cli run --streams 1` (1 warm-up, 3 timed
iterations; its time is the median iteration's span, first task start to
last task end)
and onnxruntime through tools/ort/run_ort.js (4 runs; its time is the median
of the 3 timed `model_run` events of its own profile). The figure per engine
is the median over the rounds; the ratio is opscope's over onnxruntime's.
The outputs are compared too (max |a - b| over max |b|, onnxruntime as b), so
a fast wrong answer never counts as fast.
"""
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.path.join(ROOT, "build", "bin", "inspector-cli")
RUN_ORT = os.path.join(ROOT, "tools", "ort", "run_ort.js")


def inputs_of(models, name):
    files = sorted(glob.glob(os.path.join(models, name + ".inputs", "*.npy")))
    return ",".join(f"{os.path.basename(f)[:-4]}={f}" for f in files)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare_vs_ort: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-400:]}")
    return p


def opscope_once(model, inputs, work):
    out, saved = os.path.join(work, "ours"), os.path.join(work, "ours-out")
    # One compute stream, as onnxruntime runs by default (its sequential
    # executor, every core inside each kernel): on this 2-core machine a
    # second stream never paid (docs/speed.md, "Streams on two cores").
    cmd = [CLI, "run", model, "--output-dir", out, "--warmup", "1", "--iterations", "3", "--save-outputs", saved,
           "--peak-bw", "10", "--peak-flops", "50", "--streams", "1"]
    run(cmd + (["--inputs", inputs] if inputs else []))
    with open(os.path.join(out, "summary.json")) as f:
        span = json.load(f)["timing"]["span"]["median_us"]
    return span, saved


def ort_once(model, inputs, work):
    out = os.path.join(work, "ort")
    run(["node", RUN_ORT, model, out, "--runs", "4", "--save-outputs"] + (["--inputs", inputs] if inputs else []))
    with open(os.path.join(out, "profile.json")) as f:
        runs = sorted((e["ts"], e["dur"]) for e in json.load(f) if e.get("cat") == "Session" and e["name"] == "model_run")
    return statistics.median(d for _, d in runs[1:]), os.path.join(out, "outputs")


def max_error(ours, theirs):
    worst = 0.0
    for f in glob.glob(os.path.join(theirs, "*.npy")):
        b = np.load(f).astype(np.float64)
        a = np.load(os.path.join(ours, os.path.basename(f))).astype(np.float64)
        if a.shape != b.shape:
            return float("inf")
        scale = np.max(np.abs(b)) or 1.0
        worst = max(worst, float(np.max(np.abs(a - b)) / scale))
    return worst


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    models = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    names = sys.argv[3:] or [os.path.basename(p)[:-5] for p in sorted(glob.glob(os.path.join(models, "*.onnx")))]
    print(f"{'model':<14} {'opscope ms':>11} {'onnxruntime ms':>15} {'ratio':>7} {'max err':>9}   (median of {rounds} rounds)")
    for name in names:
        model = os.path.join(models, name + ".onnx")
        inputs = inputs_of(models, name)
        ours, theirs, err = [], [], 0.0
        with tempfile.TemporaryDirectory(prefix="opscope_vs_ort_") as work:
            for r in range(rounds):
                sides = [("ours", opscope_once), ("ort", ort_once)]
                if r % 2:
                    sides.reverse()  # alternate which engine meets the warmer machine
                got = {}
                for side, fn in sides:
                    got[side] = fn(model, inputs, work)
                ours.append(got["ours"][0])
                theirs.append(got["ort"][0])
                err = max(err, max_error(got["ours"][1], got["ort"][1]))
        o, t = statistics.median(ours), statistics.median(theirs)
        print(f"{name:<14} {o / 1e3:>11.2f} {t / 1e3:>15.2f} {o / t:>6.1f}x {err:>9.1e}", flush=True)


if __name__ == "__main__":
    main()
