// The C++ half of `import opscope` (python/opscope/__init__.py is the rest):
// the compare engine over numpy arrays without a copy, the op harness
// (op_run.h), and the run folder's identity check, each raising the library's own message as a Python
// exception (ValueError for what the caller passed, RuntimeError otherwise).
// The GIL is released while the engine works; the arrays stay referenced by
// the caller's frame meanwhile.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <sstream>
#include <string>

#include "analysis/compare/compare_json.h"
#include "array_view.h"
#include "op_run.h"
#include "status_error.h"
#include "core/json_text.h"
#include "graph/export/capture_json.h"
#include "graph/export/graph_json.h"
#include "graph/export/run_folder.h"
#include "graph/run/node_path.h"
#include "opscope/compare.h"
#include "opscope/harness.h"
#include "opscope/model.h"

namespace py = pybind11;

namespace opscope::python {
namespace {

void Raise(const Status& s) { RaiseStatus(s); }

// (passed, the text ops-debug compare prints for the array, the result as
// report.json's `compare` object, in JSON text).
py::tuple Compare(const py::array& actual, const py::array& expected, const std::string& rule,
                  std::optional<double> atol, std::optional<double> rtol, std::optional<int64_t> max_ulp, bool strict,
                  int worst, const std::string& name, bool actual_bf16, bool expected_bf16) {
  const Tensor a = TensorOver(actual, "actual", actual_bf16), e = TensorOver(expected, "expected", expected_bf16);
  if (a.shape() != e.shape()) {
    throw py::value_error("shapes differ: expected is " + e.Describe() + ", actual is " + a.Describe());
  }
  if (a.dtype() != e.dtype()) {
    throw py::value_error("dtypes differ: expected is " + e.Describe() + ", actual is " + a.Describe() +
                          " (convert one side so both hold the same type)");
  }
  if (a.numel() == 0) throw py::value_error("empty arrays " + a.Describe() + ": nothing to compare");
  if (worst < 0) throw py::value_error("worst=" + std::to_string(worst) + ": expected >= 0");
  const ToleranceSpec spec{.rule = rule, .atol = atol, .rtol = rtol, .max_ulp = max_ulp, .worst_k = worst, .strict = strict};
  StatusOr<Tolerance> tolerance = ResolveTolerance(spec, a.dtype());
  if (!tolerance.ok()) Raise(tolerance.status());
  StatusOr<CompareResult> r = [&] {
    py::gil_scoped_release unlocked;
    return CompareTensors(a, e, *tolerance, CompareOptions{.worst_k = worst});
  }();
  if (!r.ok()) Raise(r.status());
  std::ostringstream text;
  PrintComparison(name, a.Describe(), *r, text);
  return py::make_tuple(r->passed(), text.str(), JsonText(CompareResultToJson(*r)));
}

// `inspector-cli diff BASE NEW`: (regressed, its text, diff.json's text).
py::tuple DiffRuns(const std::string& base_dir, const std::string& new_dir, double threshold_time_pct,
                   bool allow_different_models, int top) {
  StatusOr<RunDiffReport> d = [&] {
    py::gil_scoped_release unlocked;
    return DiffRunFolders({.base_dir = base_dir,
                           .new_dir = new_dir,
                           .threshold_time_pct = threshold_time_pct,
                           .allow_different_models = allow_different_models});
  }();
  if (!d.ok()) Raise(d.status());
  std::ostringstream text;
  PrintRunDiff(*d, top, text);
  return py::make_tuple(d->regressed, text.str(), d->json);
}

// `inspector-cli path DIR --node NAME --json` of a run folder: "opscope.path/1".
std::string NodePath(const std::string& dir, const std::string& node, int depth) {
  if (depth < 1) throw py::value_error("depth=" + std::to_string(depth) + ": expected >= 1");
  StatusOr<graph::CapturedRun> run = graph::LoadCapture(dir);
  if (!run.ok()) Raise(run.status());
  StatusOr<nlohmann::json> j = graph::NodePathJson(run->model, run->schedule, node, depth);
  if (!j.ok()) Raise(j.status());
  return JsonText(*j);
}

// The run id of a folder whose files are all of one run; ValueError naming
// the file otherwise (a folder written twice, files of two runs).
std::string CheckRunFolder(const std::string& dir) {
  StatusOr<graph::RunIdentity> id = graph::CheckRunFolder(dir);
  if (!id.ok()) Raise(id.status());
  return id->id;
}

// graph.json's text with what version 2 leaves out written back in
// (graph/export/graph_json.h's ExpandGraphJson): the same reader the tools'
// tests use, so a script sees every node's tensors, layer and reason.
std::string ExpandGraphJsonText(const std::string& text, const std::string& path) {
  nlohmann::json g = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (g.is_discarded()) Raise(InvalidArgumentError(path + ": not valid JSON"));
  graph::ExpandGraphJson(g);
  return JsonText(g);
}

}  // namespace
}  // namespace opscope::python

PYBIND11_MODULE(_opscope, m) {
  m.doc() = "opscope's compare engine and run folders; use the opscope package, not this module";
  m.def("compare", &opscope::python::Compare, py::arg("actual"), py::arg("expected"), py::arg("rule"), py::arg("atol"),
        py::arg("rtol"), py::arg("max_ulp"), py::arg("strict"), py::arg("worst"), py::arg("name"),
        py::arg("actual_bf16") = false, py::arg("expected_bf16") = false);
  m.def("check_run_folder", &opscope::python::CheckRunFolder, py::arg("dir"));
  m.def("expand_graph_json", &opscope::python::ExpandGraphJsonText, py::arg("text"), py::arg("path"));
  m.def("node_path", &opscope::python::NodePath, py::arg("dir"), py::arg("node"), py::arg("depth"));
  m.def("diff_runs", &opscope::python::DiffRuns, py::arg("base_dir"), py::arg("new_dir"), py::arg("threshold_time_pct"),
        py::arg("allow_different_models"), py::arg("top"));
  m.def("run_op", &opscope::python::RunOp, py::arg("run"));
  m.def("profile_op", &opscope::python::ProfileOp, py::arg("run"), py::arg("warmup"), py::arg("iterations"),
        py::arg("cold_cache"), py::arg("peak_bw"), py::arg("peak_flops"));
  m.def("sweep_op", &opscope::python::SweepOp, py::arg("run"), py::arg("values"), py::arg("warmup"),
        py::arg("iterations"), py::arg("peak_bw"), py::arg("peak_flops"), py::arg("cache_file"));
  m.def("diagnose_op", &opscope::python::DiagnoseOp, py::arg("argv"), py::arg("output_dir"), py::arg("timeout_s"),
        py::arg("run_report"));
}
