"""`import opscope` against the tools it wraps: the module's compare result
is ops-debug compare's, text and report.json alike, on the same arrays;
torch tensors are read where they lie; bad arguments are ValueError with the
library's words; a run folder of inspector-cli reads back as the files say.

Run by ctest (python_module_test) with PYTHONPATH=build/python and
OPSCOPE_BINARY_DIR / OPSCOPE_SOURCE_DIR set.
"""
import json
import os
import subprocess

import numpy as np
import pytest

import opscope

BIN = os.environ.get("OPSCOPE_BINARY_DIR", "build")
SRC = os.environ.get("OPSCOPE_SOURCE_DIR", ".")


def arrays():
    e = np.linspace(-1, 1, 4096, dtype=np.float32).reshape(64, 64)
    a = e.copy()
    a[10:14, 3] += 0.01  # four elements off, in one column
    return a, e


def test_compare_is_ops_debug_compare_text_and_report(tmp_path):
    a, e = arrays()
    np.save(tmp_path / "y.npy", a)
    np.save(tmp_path / "expected.npy", e)
    cli = subprocess.run([f"{BIN}/bin/ops-debug", "compare", str(tmp_path / "expected.npy"), str(tmp_path / "y.npy"),
                          "--report", str(tmp_path / "r.json")], capture_output=True, text=True)
    assert cli.returncode == 1, cli.stderr
    r = opscope.compare(a, e, name="y")
    assert not r.passed and not r
    assert str(r) in cli.stdout  # the array's block, word for word
    report = json.loads((tmp_path / "r.json").read_text())
    assert r.to_dict() == report["outputs"][0]["compare"]
    assert r.mismatched == 4 and r.total == 4096
    assert r.pattern == report["compare"]["pattern"] and "dim 0 indices 10-13" in r.pattern
    assert sorted(w["index"] for w in r.worst[:4]) == [[10, 3], [11, 3], [12, 3], [13, 3]]
    assert sum(b["count"] for b in r.histogram) == 4096 and sum(b["mismatched"] for b in r.histogram) == 4
    # The same rule flags as the CLI's: absolute 0.02 lets them all through.
    assert opscope.compare(a, e, rule="absolute", atol=0.02).passed


def test_assert_close_says_where_and_how():
    a, e = arrays()
    opscope.assert_close(e.copy(), e)
    with pytest.raises(AssertionError) as info:
        opscope.assert_close(a, e)
    message = str(info.value)
    assert "FAILED  4 / 4,096 mismatched" in message
    assert "errors only in dim 0 indices 10-13" in message
    assert "max abs err" in message


def test_torch_tensors_are_read_where_they_lie():
    torch = pytest.importorskip("torch")
    a, e = arrays()
    t = torch.from_numpy(a.copy())
    view = opscope._as_array(t, "actual")
    assert view.__array_interface__["data"][0] == t.data_ptr()  # no copy
    assert opscope.compare(t, e).to_dict() == opscope.compare(a, e).to_dict()
    grad = torch.tensor(e, requires_grad=True)
    assert opscope.compare(grad, e).passed
    # Strided views: columns of a transposed tensor, and a reversed numpy view (copied).
    assert opscope.compare(torch.from_numpy(e).t(), e.T).passed
    assert opscope.compare(e[:, ::-1], np.ascontiguousarray(e[:, ::-1])).passed
    # bfloat16, which numpy cannot hold: its bits read where they lie, judged at bfloat16's defaults.
    b = torch.linspace(-1, 1, 64).to(torch.bfloat16)
    off = b.clone()
    off[5] += 0.25
    assert opscope._bfloat16_bits(b).__array_interface__["data"][0] == b.data_ptr()
    r = opscope.compare(off, b)
    assert not r.passed and r.mismatched == 1 and r.pattern == "a single element at [5]"
    assert "bfloat16[64]" in str(r) and "|a-e| <= 0.01 + 0.01*|e|" in str(r)
    assert opscope.compare(b, b.clone()).passed
    with pytest.raises(ValueError, match="dtypes differ: expected is float32\\[64\\], actual is bfloat16\\[64\\]"):
        opscope.compare(b, b.float())


@pytest.mark.parametrize("call, message", [
    (lambda a, e: opscope.compare(a, e.T[:32]), "shapes differ: expected is float32[32,64], actual is float32[64,64]"),
    (lambda a, e: opscope.compare(a, e.astype(np.float64)), "dtypes differ"),
    (lambda a, e: opscope.compare(a[:0], e[:0]), "empty arrays float32[0,64]: nothing to compare"),
    (lambda a, e: opscope.compare(a, e, atol=-1), "atol=-1: expected a number >= 0"),
    (lambda a, e: opscope.compare(a, e, rule="close"), "rule='close': expected one of"),
    (lambda a, e: opscope.compare(a, e, max_ulp=1.5), "max_ulp=1.5"),
    (lambda a, e: opscope.compare(a.astype(np.complex64), e.astype(np.complex64)), "dtype complex64 has no opscope type"),
    (lambda a, e: opscope.compare(a, "not an array"), "expected: dtype <U12 has no opscope type"),
    (lambda a, e: opscope.compare(a, [object()] * 2), "expected: list is not an array of numbers"),
])
def test_bad_arguments_are_value_errors(call, message):
    a, e = arrays()
    with pytest.raises(ValueError) as info:
        call(a, e)
    assert message in str(info.value)


def run_model(tmp_path, name, model="two_branch.onnx"):
    out = tmp_path / name
    r = subprocess.run([f"{BIN}/bin/inspector-cli", "run", f"{SRC}/examples/models/{model}", "--output-dir", str(out),
                        "--iterations", "2", "--peak-bw", "10", "--peak-flops", "50"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def test_load_run_reads_the_folder_as_its_files_say(tmp_path):
    pd = pytest.importorskip("pandas")
    out = run_model(tmp_path, "run")
    run = opscope.load_run(out)
    summary = json.loads((out / "summary.json").read_text())
    assert run.summary == summary
    assert run.id == summary["run"]["id"]
    events = [e for e in json.loads((out / "trace.json").read_text())["traceEvents"] if e["ph"] == "X"]
    tasks = run.tasks()
    assert isinstance(tasks, pd.DataFrame) and len(tasks) == len(events)
    assert sorted(tasks["stream"].unique()) == sorted({s["name"] for s in summary["streams"] if s["tasks"]})
    types = run.op_types()
    assert list(types["op_type"]) == [r["op_type"] for r in summary["op_types"]]
    assert types["count"].sum() == sum(r["count"] for r in summary["op_types"])
    nodes = run.nodes()
    assert len(nodes) == len(run.graph["compiled"]["nodes"]) and len(run.nodes("framework")) == len(run.graph["framework"]["nodes"])
    with pytest.raises(ValueError, match="layer='both'"):
        run.nodes("both")
    # graph.json holds nodes and values as columns, a node's tensors as value
    # indices, and leaves out what can be rebuilt; the run reads them back
    # whole, from the values the file holds.
    written = json.loads((out / "graph.json").read_text())
    columns = written["framework"]["nodes"]
    assert isinstance(columns, dict) and all(isinstance(t, int) for ts in columns["inputs"] for t in ts)
    assert "mapping" not in written
    dtypes = written["framework"]["tables"]["dtypes"]
    wv = written["framework"]["values"]
    values = {name: {"dtype": dtypes[d] if d >= 0 else None, "shape": shape}
              for name, d, shape in zip(wv["name"], wv["dtype"], wv["shape"])}
    for n in run.graph["framework"]["nodes"]:
        assert n["layer"] == "framework" and "kind" in n and "mapped_task_ids" in n
        for t in n["inputs"] + n["outputs"]:
            if t["name"] in values:
                assert (t["dtype"], t["shape"]) == (values[t["name"]]["dtype"], values[t["name"]]["shape"])
    assert len(run.graph["mapping"]) >= len(run.graph["framework"]["nodes"])
    assert any(v["consumers"] for v in run.graph["framework"]["values"])


def test_load_run_refuses_what_the_tools_refuse(tmp_path):
    first, second = run_model(tmp_path, "first"), run_model(tmp_path, "second")
    (first / "summary.json").write_bytes((second / "summary.json").read_bytes())  # files of two runs
    with pytest.raises(ValueError, match="summary.json"):
        opscope.load_run(first)
    with pytest.raises(ValueError):
        opscope.load_run(tmp_path / "nowhere")
    (second / "graph.json").unlink()
    os.symlink(first / "graph.json", second / "graph.json")
    with pytest.raises(ValueError, match="graph.json"):
        opscope.load_run(second)


def test_run_op_is_ops_debug_run(tmp_path):
    cli = subprocess.run([f"{BIN}/bin/ops-debug", "run", "--op", "Softmax", "--input-shapes", "[4,64]", "--attrs", "axis=-1",
                          "--report", str(tmp_path / "r.json"), "--save-outputs", str(tmp_path / "out")],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    rep = opscope.run_op("Softmax", shapes=[[4, 64]], attrs={"axis": -1})
    assert rep.passed and rep.status == "passed" == report["status"]
    # The same op instance: op, attrs, shapes, dtypes and the data's fingerprint.
    assert rep.instance == report["instance"]
    assert rep.repro == report["repro"]
    assert np.array_equal(rep.outputs["output"].actual, np.load(tmp_path / "out" / "output.npy"))
    assert np.array_equal(rep.outputs["output"].expected, np.load(tmp_path / "out" / "output.expected.npy"))
    assert "status passed" in str(rep) and report["repro"]["command"] in str(rep)


def test_run_op_takes_arrays_plugins_and_an_expected_golden():
    x = np.random.default_rng(0).standard_normal((8, 32)).astype(np.float32)
    rep = opscope.run_op("Relu", inputs=[x])
    assert rep.passed and np.array_equal(rep.outputs["Y"].actual, np.maximum(x, 0))  # ONNX's name for Relu's output
    off = opscope.run_op("Relu", inputs=[x], expected=[np.maximum(x, 0) + np.float32(0.1)])
    assert not off.passed and off.status == "failed"
    assert off.compare["pattern"] == "errors everywhere (every element)"
    assert "FAILED  256 / 256 mismatched" in str(off)
    norm = opscope.run_op("my_norm", plugins=[f"{BIN}/lib/libmy_ops.so"], shapes=[[4, 256, 64]], attrs={"eps": 1e-6})
    assert norm.passed and norm.kernel == "my_norm_cpu"


@pytest.mark.parametrize("kwargs, message", [
    ({"op": "NoSuchOp", "shapes": [[4]]}, "unknown op 'NoSuchOp'"),
    ({"op": "Relu", "shapes": [[4]], "attrs": {"bogus": 1}}, "op Relu has no attribute 'bogus'"),
    ({"op": "Relu"}, "give inputs (arrays) or shapes (lists of dims), one of the two"),
    ({"op": "Relu", "shapes": [[4]], "dtypes": "float99"}, "unknown dtype 'float99'"),
    ({"op": "Relu", "shapes": [[4]], "plugins": ["/no/such/plugin.so"]}, "cannot open '/no/such/plugin.so'"),
    ({"op": "Relu", "shapes": "4"}, "shapes='4': expected a list of lists of dims"),
    ({"op": "Relu", "shapes": [[4]], "fill": "lumpy"}, "lumpy"),
])
def test_run_op_bad_arguments_are_value_errors(kwargs, message):
    with pytest.raises(ValueError) as info:
        opscope.run_op(**kwargs)
    assert message in str(info.value)


def test_profile_op_times_it_against_the_roofs_given():
    rep = opscope.profile_op("Softmax", shapes=[[64, 1024]], attrs={"axis": -1}, warmup=1, iterations=3, peak_bw=20,
                             peak_flops=100)
    assert rep.passed
    profile = rep.profile
    assert profile["iterations"] == 3 and profile["warmup"] == 1
    assert profile["device"]["count"] == 3 and profile["device"]["median_us"] > 0
    assert profile["cost"] == {"bytes_read": 64 * 1024 * 4, "bytes_written": 64 * 1024 * 4, "flops": 5.0 * 64 * 1024}
    text = str(rep)
    assert "profile   3 call(s) after 1 warm-up" in text
    assert "peaks     memory 20.0 GB/s, compute 100.0 GFLOP/s float32  (--peak-bw/--peak-flops)" in text
    with pytest.raises(ValueError, match="--iters|iterations"):
        opscope.profile_op("Softmax", shapes=[[4, 4]], iterations=0)


def test_sweep_op_never_calls_a_failing_candidate_best():
    rep = opscope.sweep_op("sweep_trap", shapes=[[3001]], plugins=[f"{BIN}/lib/libperf_ops.so"], warmup=1, iterations=3,
                           peak_bw=20, peak_flops=100)
    assert [c["tunables"]["block"] for c in rep.candidates] == [64, 128, 256, 512, 1024]
    failed = [c for c in rep.candidates if c["status"] == "FAILED"]
    assert [c["tunables"]["block"] for c in failed] == [512]  # writes only the first 513 elements
    assert rep.best["tunables"]["block"] != 512
    assert "never best" in str(rep)
    with pytest.raises(ValueError, match="nosuch"):
        opscope.sweep_op("sweep_trap", values={"nosuch": [1]}, shapes=[[3001]], plugins=[f"{BIN}/lib/libperf_ops.so"])


def test_diagnose_op_survives_the_kernel_that_crashes(tmp_path):
    plugin = f"{BIN}/lib/libdiagnose_ops.so"
    d = opscope.diagnose_op("ramp_tail", tmp_path / "crash", shapes=[[1000]], plugins=[plugin])
    # Still here: the kernel wrote past its end in the child.
    assert not d.passed and d.status == "crashed" and d.signal == "SIGSEGV"
    assert d.causes[0]["rule"] == "out-of-bounds"
    assert "writes y[1000]: 1 element past the end of y, float32[1000]" in d.causes[0]["cause"]
    assert "ramp_tail" in str(d)
    clean = opscope.diagnose_op("my_norm", tmp_path / "clean", shapes=[[4, 64]], plugins=[f"{BIN}/lib/libmy_ops.so"],
                                attrs={"eps": 1e-6})
    assert clean.passed and clean.status == "clean"


def test_run_diff_is_inspector_cli_diff(tmp_path):
    base, new = run_model(tmp_path, "base"), run_model(tmp_path, "new")
    d = opscope.load_run(new).diff(opscope.load_run(base))
    cli = subprocess.run([f"{BIN}/bin/inspector-cli", "diff", str(base), str(new), "--output", str(tmp_path / "d.json")],
                         capture_output=True, text=True)
    assert cli.returncode == (1 if d.regressed else 0), cli.stderr
    assert d.to_dict() == json.loads((tmp_path / "d.json").read_text())
    assert str(d).splitlines()[:3] == cli.stdout.splitlines()[:3]
    assert d.regressed == (not d.passed)
    other = run_model(tmp_path, "other", "resnet_small.onnx")
    with pytest.raises(ValueError, match="allow-different-models|different model"):
        opscope.load_run(other).diff(base)
    assert "nodes" in opscope.load_run(other).diff(base, allow_different_models=True).to_dict()


def test_an_onnxruntime_run_reads_as_a_run_folder(tmp_path):
    pytest.importorskip("pandas")
    ort, out = tmp_path / "ort", tmp_path / "run"
    r = subprocess.run(["node", f"{SRC}/tools/ort/run_ort.js", f"{SRC}/examples/models/resnet_small.onnx", str(ort),
                        "--runs", "3"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr  # onnxruntime-node: ./setup.sh installs it into tools/ort/node_modules
    r = subprocess.run([f"{BIN}/bin/inspector-cli", "import-ort", "--model", f"{SRC}/examples/models/resnet_small.onnx",
                        "--optimized", str(ort / "optimized.onnx"), "--profile", str(ort / "profile.json"),
                        "--output-dir", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run = opscope.load_run(out)
    assert set(run.tasks()["stream"]) == {"ort CPU"}
    nodes = run.nodes().set_index("name")
    conv = nodes.loc["/layer1/block2/bn/BatchNormalization_output_0_nchwc"]
    # How the fused Conv maps depends on where onnxruntime put its layout
    # reorders, which depends on the CPU (NCHWc blocks of 8 floats with AVX2,
    # 16 with AVX-512): by its Sum input, or by its output through a reorder.
    assert len(conv["fused_from"]) == 4
    assert "Sum input" in conv["mapped_by"] or "through ReorderOutput" in conv["mapped_by"], conv["mapped_by"]
    d = run.diff(run_model(tmp_path, "ours", "resnet_small.onnx"))
    assert d.to_dict()["engines"]["base"] == "opscope" and d.to_dict()["engines"]["new"] == "onnxruntime"
    assert "engines  base opscope, new onnxruntime" in str(d)


def test_run_path_is_inspector_cli_path(tmp_path):
    out = run_model(tmp_path, "path")
    run = opscope.load_run(out)
    node = run.graph["framework"]["nodes"][0]["name"]
    cli = subprocess.run([f"{BIN}/bin/inspector-cli", "path", str(out), "--node", node, "--json", "--depth", "2"],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert run.path(node, depth=2) == json.loads(cli.stdout)
    with pytest.raises(ValueError, match="no_such_node"):
        run.path("no_such_node")
    with pytest.raises(ValueError, match="depth=0"):
        run.path(node, depth=0)
