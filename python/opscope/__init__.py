"""opscope from Python: the compare engine of `ops-debug compare` over numpy
arrays and torch tensors, and `inspector-cli run` folders as Python objects
and pandas DataFrames.

    import opscope
    r = opscope.compare(actual, expected)            # numpy, torch, anything with __array__
    print(r)                                          # as `ops-debug compare` prints it
    r.passed, r.pattern, r.worst, r.histogram, r.to_dict()
    opscope.assert_close(actual, expected)            # AssertionError with that text
    rep = opscope.run_op("Softmax", shapes=[[4, 64]], attrs={"axis": -1})   # `ops-debug run`
    rep.passed, print(rep), rep.outputs["output"].actual, rep.to_dict()
    run = opscope.load_run("runs/resnet")             # graph, summary, trace, capture
    run.tasks(), run.nodes(), run.op_types()          # DataFrames (python3-pandas)

Bad arguments raise ValueError with the library's message, device failures
RuntimeError; nothing here takes the interpreter down.
"""
import json
import os

import numpy as np

from . import _opscope

__all__ = ["compare", "assert_close", "CompareResult", "run_op", "profile_op", "sweep_op", "diagnose_op", "OpReport",
           "SweepReport", "Diagnosis", "load_run", "Run", "RunDiff"]

_RULES = ("mixed", "absolute", "relative", "bit-exact", "ulp")


def _bfloat16_bits(x):
    """A torch bfloat16 tensor's bits as an int16 numpy view (no copy), or
    None for anything else: numpy has no bfloat16, the engine has."""
    if type(x).__module__.startswith("torch") and str(getattr(x, "dtype", "")) == "torch.bfloat16":
        import torch
        t = x.detach()
        if t.device.type != "cpu":
            raise ValueError(f"a {t.device.type} tensor: pass a CPU tensor (.cpu())")
        return np.from_dlpack(t.view(torch.int16))
    return None


def _as_array(x, what):
    """A numpy view of x without a copy where x allows one: numpy arrays as
    they are, DLPack producers (torch CPU tensors, detached) through
    numpy.from_dlpack, anything else through numpy.asarray."""
    if isinstance(x, np.ndarray):
        # The engine reads strided memory as it lies, but not backwards.
        return x if all(s >= 0 for s in x.strides) else np.ascontiguousarray(x)
    if hasattr(x, "detach") and callable(x.detach):
        x = x.detach()  # torch: a tensor that requires grad is not exported
    if hasattr(x, "__dlpack__"):
        try:
            a = np.from_dlpack(x)
            return a if all(s >= 0 for s in a.strides) else np.ascontiguousarray(a)
        except (BufferError, TypeError, RuntimeError) as e:
            # A CUDA tensor, or a dtype numpy cannot hold (bfloat16).
            raise ValueError(f"{what}: {e} (pass a CPU tensor of a numpy dtype, e.g. .cpu().float())") from None
    try:
        a = np.asarray(x)
    except Exception as e:  # whatever __array__ raised
        raise ValueError(f"{what}: cannot be read as an array: {e}") from None
    if a.dtype == object:
        raise ValueError(f"{what}: {type(x).__name__} is not an array of numbers")
    return a if all(s >= 0 for s in a.strides) else np.ascontiguousarray(a)


class _Report:
    """A result of the library: `passed`, the JSON file's fields as
    attributes, str() as the matching command prints it, to_dict() a copy
    of the JSON file's object."""

    def __init__(self, passed, text, fields):
        self.passed = bool(passed)
        self._text = text
        self._dict = fields

    def __getattr__(self, name):
        try:
            return self.__dict__["_dict"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __bool__(self):
        return self.passed

    def __str__(self):
        return self._text

    def to_dict(self):
        return json.loads(json.dumps(self._dict))  # a copy the caller may change


class CompareResult(_Report):
    """One comparison: `passed`, the figures of report.json's `compare` object
    as attributes (pattern, worst, histogram, ...), str() as `ops-debug
    compare` prints the array, to_dict() as report.json holds it."""

    def __repr__(self):
        return f"<opscope.CompareResult {'PASSED' if self.passed else 'FAILED'} {self._dict.get('pattern', '')!r}>"


def compare(actual, expected, rule=None, atol=None, rtol=None, max_ulp=None, strict=False, worst=10,
            name="actual"):
    """Judges `actual` against `expected` element by element under one rule
    (mixed |a-e| <= atol + rtol*|e|, absolute, relative, bit-exact, ulp; by
    default mixed for floats, bit-exact for integers and bool), with the
    per-dtype defaults of ops-debug where atol/rtol are not given."""
    _check_tolerance(rule, atol, rtol, max_ulp)
    if not isinstance(worst, int) or isinstance(worst, bool) or worst < 0:
        raise ValueError(f"worst={worst!r}: expected an integer >= 0")
    a_bits, e_bits = _bfloat16_bits(actual), _bfloat16_bits(expected)
    a = _as_array(actual, "actual") if a_bits is None else a_bits
    e = _as_array(expected, "expected") if e_bits is None else e_bits
    passed, text, result = _opscope.compare(a, e, rule or "", None if atol is None else float(atol),
                                            None if rtol is None else float(rtol), max_ulp, bool(strict), worst,
                                            str(name), a_bits is not None, e_bits is not None)
    return CompareResult(passed, text, json.loads(result))


def assert_close(actual, expected, **kwargs):
    """compare(), raising AssertionError whose message says where and how the
    arrays differ (the text `ops-debug compare` prints) when they do."""
    r = compare(actual, expected, **kwargs)
    if not r.passed:
        raise AssertionError("\n" + str(r))
    return r


def _attr_text(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_attr_text(x) for x in v) + "]"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _check_tolerance(rule, atol, rtol, max_ulp):
    if rule is not None and rule not in _RULES and not (isinstance(rule, str) and rule.startswith("ulp:")):
        raise ValueError(f"rule={rule!r}: expected one of {', '.join(_RULES)} (or ulp:N)")
    for arg, v in (("atol", atol), ("rtol", rtol)):
        if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool) or not v >= 0):
            raise ValueError(f"{arg}={v!r}: expected a number >= 0")
    if max_ulp is not None and (not isinstance(max_ulp, int) or isinstance(max_ulp, bool) or max_ulp < 0):
        raise ValueError(f"max_ulp={max_ulp!r}: expected an integer >= 0")


class OpOutput:
    """One output of run_op: the kernel's values and the golden's, as numpy arrays."""

    def __init__(self, name, actual, expected):
        self.name, self.actual, self.expected = name, actual, expected

    def __repr__(self):
        return f"<opscope.OpOutput {self.name} {getattr(self.actual, 'dtype', None)}{list(getattr(self.actual, 'shape', []))}>"


class OpReport(_Report):
    """The op harness's report: `passed`, str() as `ops-debug run` (or
    profile) prints it, to_dict() as its report.json holds it (the same fields
    as attributes: status, kernel, instance, compare, timing, profile, ...),
    and `outputs` by name, each with its actual and expected arrays."""

    def __init__(self, exit_code, text, report, outputs):
        super().__init__(exit_code == 0, text, report)
        self.outputs = {name: OpOutput(name, a, e) for name, a, e in outputs}

    def __repr__(self):
        return f"<opscope.OpReport {self._dict.get('status')} {self._dict.get('op')}>"


def _run_args(op, inputs, shapes, dtypes, attrs, plugins, device, expected, tunables, rule, atol, rtol, max_ulp, seed,
              fill, outputs, repeat, timeout):
    """The dict the C++ half turns into ops-debug run's request, checked here
    where the message can name the keyword."""
    if not isinstance(op, str) or not op:
        raise ValueError(f"op={op!r}: expected an op name")
    if (inputs is None) == (shapes is None):
        raise ValueError("give inputs (arrays) or shapes (lists of dims), one of the two")
    _check_tolerance(rule, atol, rtol, max_ulp)
    shape_lists = []
    if shapes is not None:
        ok = isinstance(shapes, (list, tuple)) and all(isinstance(s, (list, tuple)) for s in shapes)
        try:
            shape_lists = [[int(d) for d in s] for s in shapes] if ok else None
        except (TypeError, ValueError):
            shape_lists = None
        if shape_lists is None:
            raise ValueError(f"shapes={shapes!r}: expected a list of lists of dims, e.g. [[4, 64]]")
    if isinstance(dtypes, str):
        dtypes = [dtypes]
    if isinstance(plugins, (str, os.PathLike)):
        plugins = [plugins]
    return {"op": op, "inputs": [_as_array(x, f"inputs[{i}]") for i, x in enumerate(inputs or [])],
            "shapes": shape_lists, "dtypes": [str(d) for d in (dtypes or [])],
            "attrs": attrs if isinstance(attrs, str) else ",".join(f"{k}={_attr_text(v)}" for k, v in (attrs or {}).items()),
            "plugins": [os.fspath(p) for p in plugins], "device": str(device), "tunables": dict(tunables or {}),
            "expected": [_as_array(x, f"expected[{i}]") for i, x in enumerate(expected or [])], "rule": rule or "",
            "atol": None if atol is None else float(atol), "rtol": None if rtol is None else float(rtol),
            "max_ulp": max_ulp, "seed": int(seed), "fill": str(fill), "outputs": int(outputs), "repeat": int(repeat),
            "timeout": float(timeout)}


_RUN_DOC = """`inputs` (arrays) or `shapes` (filled with `fill`, input i with seed + i,
    in `dtypes`), `attrs` as a dict ({"eps": 1e-6, "axes": [1]}) or ops-debug's
    "k=v,..." text, `plugins` (custom-op libraries), `tunables`, `device`, the
    golden the op's reference or `expected` (arrays, one per output), the
    tolerance keywords of compare()."""


def run_op(op, inputs=None, shapes=None, dtypes=None, attrs=None, plugins=(), device="cpu", expected=None,
           tunables=None, rule=None, atol=None, rtol=None, max_ulp=None, seed=0, fill="normal", outputs=-1,
           repeat=1, timeout=60.0):
    """Runs one op instance alone and judges it, as `ops-debug run` does. A
    kernel still running after `timeout` seconds ends the process, as
    ops-debug's watchdog does (0: no watchdog); diagnose_op runs it in a
    supervised child instead."""
    run = _run_args(op, inputs, shapes, dtypes, attrs, plugins, device, expected, tunables, rule, atol, rtol, max_ulp,
                    seed, fill, outputs, repeat, timeout)
    code, text, report, outs = _opscope.run_op(run)
    return OpReport(code, text, json.loads(report), outs)


def profile_op(op, inputs=None, shapes=None, dtypes=None, attrs=None, plugins=(), device="cpu", tunables=None,
               seed=0, fill="normal", warmup=3, iterations=20, cold_cache=False, peak_bw=0.0, peak_flops=0.0,
               timeout=60.0):
    """Times one op instance as `ops-debug profile` does: API and device time
    by phase over `iterations` after `warmup`, against the measured roofline
    (or `peak_bw` GB/s and `peak_flops` GFLOP/s). The report's `timing` and
    `profile` hold the figures; str() is ops-debug profile's text."""
    run = _run_args(op, inputs, shapes, dtypes, attrs, plugins, device, None, tunables, None, None, None, None, seed,
                    fill, -1, 1, timeout)
    code, text, report, outs = _opscope.profile_op(run, int(warmup), int(iterations), bool(cold_cache),
                                                   float(peak_bw), float(peak_flops))
    return OpReport(code, text, json.loads(report), outs)


class SweepReport(_Report):
    """ops-debug sweep's result: the candidates with their status and median
    time, the current and best configurations (indexes into `candidates`),
    str() as ops-debug sweep prints it, to_dict() as sweep.json holds it."""

    def __repr__(self):
        return f"<opscope.SweepReport {self._dict.get('op')} best={self._dict.get('best')}>"


def sweep_op(op, values=None, inputs=None, shapes=None, dtypes=None, attrs=None, plugins=(), device="cpu",
             tunables=None, seed=0, fill="normal", warmup=3, iterations=20, peak_bw=0.0, peak_flops=0.0, cache_file="",
             timeout=60.0):
    """Sweeps an op's tunables as `ops-debug sweep` does: every combination of
    `values` ({"block": [64, 128, 256]}; a tunable left out takes every value
    it declares), each candidate judged against the golden and timed; the
    fastest passing one beyond the noise is `best`. `cache_file`: a sweep.json
    to reuse measured candidates from and keep up to date."""
    run = _run_args(op, inputs, shapes, dtypes, attrs, plugins, device, None, tunables, None, None, None, None, seed,
                    fill, -1, 1, timeout)
    swept = {str(k): [int(v) for v in vs] for k, vs in (values or {}).items()}
    code, text, report = _opscope.sweep_op(run, swept, int(warmup), int(iterations), float(peak_bw), float(peak_flops),
                                           os.fspath(cache_file))
    return SweepReport(code == 0, text, json.loads(report))


class Diagnosis(_Report):
    """ops-debug diagnose's result: `status` (clean, crashed, hung, failed,
    ...), the ranked `causes`, the recorded launches; str() as ops-debug
    diagnose prints it, to_dict() as diagnosis.json holds it."""

    def __repr__(self):
        return f"<opscope.Diagnosis {self._dict.get('status')}>"


def _ops_debug():
    """The ops-debug that runs diagnose's child: $OPSCOPE_OPS_DEBUG, the build
    tree's (this package lives in BUILD/python/opscope), or the one on PATH."""
    import shutil
    found = os.environ.get("OPSCOPE_OPS_DEBUG") or os.path.join(os.path.dirname(__file__), "..", "..", "bin", "ops-debug")
    if os.access(found, os.X_OK):
        return os.path.abspath(found)
    found = shutil.which("ops-debug")
    if not found:
        raise RuntimeError("diagnose_op needs the ops-debug program: set OPSCOPE_OPS_DEBUG to it")
    return found


def diagnose_op(op, output_dir, inputs=None, shapes=None, dtypes=None, attrs=None, plugins=(), device="cpu",
                expected=None, tunables=None, rule=None, atol=None, rtol=None, max_ulp=None, seed=0, fill="normal",
                repeat=3, timeout=10.0):
    """Runs one op instance in a supervised child (`ops-debug run`, as
    `ops-debug diagnose --op` does), so a kernel that crashes or hangs ends
    the child, not this interpreter; returns the Diagnosis. `output_dir` gets
    the child's report.json, the arrays given as inputs or expected (.npy) and
    what diagnose keeps; a run past `timeout` seconds is hung."""
    run = _run_args(op, inputs, shapes, dtypes, attrs, plugins, device, expected, tunables, rule, atol, rtol, max_ulp,
                    seed, fill, -1, repeat, 0.0)
    out = os.fspath(output_dir)
    os.makedirs(out, exist_ok=True)
    argv = [_ops_debug(), "run", "--op", run["op"], "--device", run["device"], "--seed", str(run["seed"]),
            "--fill", run["fill"], "--repeat", str(run["repeat"])]

    def saved(arrays, stem):
        files = []
        for i, a in enumerate(arrays):
            path = os.path.join(out, f"{stem}{i}.npy")
            np.save(path, a)
            files.append(path)
        return ",".join(files)

    if run["inputs"]:
        argv += ["--inputs", saved(run["inputs"], "input")]
    else:
        argv += ["--input-shapes", ";".join("[" + ",".join(map(str, s)) + "]" for s in run["shapes"])]
    if run["dtypes"]:
        argv += ["--dtype", ",".join(run["dtypes"])]
    if run["attrs"]:
        argv += ["--attrs", run["attrs"]]
    for p in run["plugins"]:
        argv += ["--plugin", os.path.abspath(p)]
    if run["tunables"]:
        argv += ["--tunables", ",".join(f"{k}={v}" for k, v in run["tunables"].items())]
    if run["expected"]:
        argv += ["--expected", saved(run["expected"], "expected")]
    for flag, v in (("--mode", run["rule"]), ("--abserr", run["atol"]), ("--relerr", run["rtol"]),
                    ("--max-ulp", run["max_ulp"])):
        if v not in (None, ""):
            argv += [flag, str(v)]
    report = os.path.join(out, "report.json")
    argv += ["--report", report]
    code, text, diagnosis = _opscope.diagnose_op(argv, out, float(timeout), report)
    return Diagnosis(code == 0, text, json.loads(diagnosis))


class Run:
    """A run folder of `inspector-cli run` (or export): its files as Python
    objects, checked to be of one run, and DataFrames of its tasks, nodes and
    op types where python3-pandas is installed."""

    def __init__(self, folder):
        self.dir = os.fspath(folder)
        self.id = _opscope.check_run_folder(self.dir)  # ValueError: not one run's files

        def read(name, required=True, expand=None):
            path = os.path.join(self.dir, name)
            if os.path.islink(path):
                raise ValueError(f"{path}: a link; run folders are read only through their own files")
            if not os.path.exists(path):
                if required:
                    raise ValueError(f"{path}: missing (write it with `inspector-cli run MODEL.onnx --output-dir {self.dir}`)")
                return None
            with open(path, encoding="utf-8") as f:
                text = f.read()
            try:
                return json.loads(expand(text, path) if expand else text)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}: not valid JSON: {e}") from None

        # graph.json holds columns and leaves out what can be rebuilt (each
        # node's tensors' dtype and shape, its layer, defaults, the mapping):
        # the library turns it back into whole node and value objects.
        self.graph = read("graph.json", expand=_opscope.expand_graph_json)
        self.summary = read("summary.json")
        self.trace = read("trace.json")
        self.capture = read("capture.json", required=False)
        self.accuracy = read("accuracy.json", required=False)

    def __repr__(self):
        return f"<opscope.Run {self.dir} id={self.id}>"

    @staticmethod
    def _pandas():
        try:
            import pandas
        except ImportError:
            raise ImportError("opscope.Run's tables need pandas (Debian: python3-pandas)") from None
        return pandas

    def tasks(self):
        """One row per task of the trace (its complete events): name, category,
        stream, start and duration in us, task id, compiled node id, op type."""
        pd = self._pandas()
        streams = {e["tid"]: e["args"]["name"] for e in self.trace["traceEvents"]
                   if e.get("ph") == "M" and e.get("name") == "thread_name"}
        rows = []
        for e in self.trace["traceEvents"]:
            if e.get("ph") != "X":
                continue
            args = e.get("args", {})
            rows.append({"name": e.get("name"), "category": e.get("cat"), "stream": streams.get(e.get("tid"), e.get("tid")),
                         "start_us": e.get("ts"), "duration_us": e.get("dur"), "task_id": args.get("task_id"),
                         "node_id": args.get("node_id"), "op_type": args.get("op_type"),
                         "iteration": args.get("iteration")})
        return pd.DataFrame(rows)

    def nodes(self, layer="compiled"):
        """One row per node of a layer of graph.json ('compiled' or 'framework')."""
        pd = self._pandas()
        if layer not in ("compiled", "framework"):
            raise ValueError(f"layer={layer!r}: expected 'compiled' or 'framework'")
        # mapped_by: how another engine's node was tied to the framework's (import-ort); None for opscope's own.
        keep = ("node_id", "name", "op_type", "kind", "executed", "compiled_node_id", "fused_from", "mapped_task_ids",
                "mapped_by")
        return pd.DataFrame([{k: n.get(k) for k in keep} for n in self.graph[layer]["nodes"]])

    def path(self, node, depth=3):
        """What flows into and out of `node` (a framework or compiled node's
        name) on both layers, its ancestors and descendants (as trees cut at
        `depth`) and whether it is on the critical path: `inspector-cli path
        --json`'s object ("opscope.path/1"). An unknown name is a ValueError
        naming the closest ones."""
        return json.loads(_opscope.node_path(self.dir, str(node), int(depth)))

    def diff(self, base, threshold_pct=10.0, allow_different_models=False, top=10):
        """This run against `base` (a Run or its folder), as `inspector-cli diff
        BASE THIS` judges it: the times against their noise, the graph's and
        the settings' changes. A RunDiff: `regressed` (its `passed` is the
        opposite), diff.json's fields, str() the command's text."""
        base_dir = base.dir if isinstance(base, Run) else os.fspath(base)
        regressed, text, fields = _opscope.diff_runs(base_dir, self.dir, float(threshold_pct),
                                                     bool(allow_different_models), int(top))
        return RunDiff(not regressed, text, json.loads(fields))

    def op_types(self):
        """summary.json's op type table: count, total, mean and share of time."""
        return self._pandas().DataFrame(self.summary.get("op_types", []))


class RunDiff(_Report):
    """`inspector-cli diff`'s verdict of a run against a baseline: `regressed`,
    diff.json's fields (node_times, op types, fusions, settings, ...),
    str() as the command prints it."""

    @property
    def regressed(self):
        return not self.passed

    def __repr__(self):
        return f"<opscope.RunDiff {'regressed' if self.regressed else 'no regression'}>"


def load_run(folder):
    """The run folder at `folder` as a Run."""
    return Run(folder)
