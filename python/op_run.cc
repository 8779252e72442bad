// The op harness's entry points (opscope/harness.h, profile.h, sweep.h,
// diagnose.h) as the matching ops-debug commands call them. Inputs and
// expected outputs given as arrays are copied into the request; outputs come
// back as numpy arrays. The GIL is released while anything runs.
#include "op_run.h"

#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <sstream>

#include "array_view.h"
#include "opscope/diagnose.h"
#include "opscope/harness.h"
#include "opscope/profile.h"
#include "opscope/sweep.h"
#include "status_error.h"

namespace py = pybind11;

namespace opscope::python {
namespace {

Tensor Copied(const py::handle& a, const std::string& what) {
  StatusOr<Tensor> t = TensorOver(py::cast<py::array>(a), what).Clone();
  if (!t.ok()) RaiseStatus(t.status());
  return *std::move(t);
}

template <typename T>
T Get(const py::dict& d, const char* key) {
  return py::cast<T>(d[key]);
}
template <typename T>
std::optional<T> Maybe(const py::dict& d, const char* key) {
  return d[key].is_none() ? std::nullopt : std::optional<T>(py::cast<T>(d[key]));
}

// The request `ops-debug run` makes of its flags, from the package's dict.
OpRunRequest RequestFrom(const py::dict& d) {
  OpRunRequest r{.op = Get<std::string>(d, "op"),
                 .plugins = Get<std::vector<std::string>>(d, "plugins"),
                 .seed = Get<uint64_t>(d, "seed"),
                 .attrs = Get<std::string>(d, "attrs"),
                 .tunables = Get<std::map<std::string, int64_t>>(d, "tunables"),
                 .device = Get<std::string>(d, "device")};
  const py::list inputs = d["inputs"], expected = d["expected"];
  for (size_t i = 0; i < inputs.size(); ++i) r.input_tensors.push_back(Copied(inputs[i], "inputs[" + std::to_string(i) + "]"));
  for (const std::vector<int64_t>& s : Get<std::vector<std::vector<int64_t>>>(d, "shapes")) r.input_shapes.emplace_back(s);
  for (const std::string& name : Get<std::vector<std::string>>(d, "dtypes")) {
    StatusOr<DType> dtype = ParseDType(name);
    if (!dtype.ok()) RaiseStatus(dtype.status());
    r.dtypes.push_back(*dtype);
  }
  StatusOr<FillKind> fill = ParseFillKind(Get<std::string>(d, "fill"));
  if (!fill.ok()) RaiseStatus(fill.status());
  r.fill = *fill;
  for (size_t i = 0; i < expected.size(); ++i) {
    r.expected_tensors.push_back(Copied(expected[i], "expected[" + std::to_string(i) + "]"));
  }
  r.tolerance = ToleranceSpec{.rule = Get<std::string>(d, "rule"),
                              .atol = Maybe<double>(d, "atol"),
                              .rtol = Maybe<double>(d, "rtol"),
                              .max_ulp = Maybe<int64_t>(d, "max_ulp")};
  r.num_outputs = Get<int>(d, "outputs");
  r.repeat = Get<int>(d, "repeat");
  r.timeout_s = Get<double>(d, "timeout");
  return r;
}

// A host tensor as a new numpy array of its dtype (bfloat16, which numpy
// lacks, as float32).
py::array ToNumpy(const Tensor& t) {
  if (!t.defined()) return py::array();
  StatusOr<Tensor> host = t.dtype() == DType::kBF16 ? t.CastTo(DType::kF32) : t.Contiguous();
  if (!host.ok()) RaiseStatus(host.status());
  std::vector<py::ssize_t> shape(host->shape().dims().begin(), host->shape().dims().end());
  py::array out(py::dtype(DTypeName(host->dtype())), shape);
  std::memcpy(out.mutable_data(), host->raw_data(), host->nbytes());
  return out;
}

py::list Outputs(const OpRunReport& report) {
  py::list arrays;
  for (const OpRunOutput& o : report.outputs) arrays.append(py::make_tuple(o.name, ToNumpy(o.actual), ToNumpy(o.expected)));
  return arrays;
}

template <typename F>
auto Unlocked(F&& f) {
  py::gil_scoped_release unlocked;
  return f();
}

ProfileRequest ProfileFrom(const py::dict& run, int warmup, int iterations, bool cold_cache, double peak_bw,
                           double peak_flops) {
  return ProfileRequest{.run = RequestFrom(run),
                        .warmup = warmup,
                        .iterations = iterations,
                        .cold_cache = cold_cache,
                        .peak_bw_gbs = peak_bw,
                        .peak_gflops = peak_flops};
}

}  // namespace

py::tuple RunOp(const py::dict& run) {
  const OpRunRequest request = RequestFrom(run);
  StatusOr<OpRunReport> report = Unlocked([&] { return RunOpInstance(request); });
  if (!report.ok()) RaiseStatus(report.status());
  std::ostringstream text;
  PrintOpReport(*report, text);
  return py::make_tuple(report->ExitCode(), text.str(), OpReportJson(*report), Outputs(*report));
}

py::tuple ProfileOp(const py::dict& run, int warmup, int iterations, bool cold_cache, double peak_bw, double peak_flops) {
  const ProfileRequest request = ProfileFrom(run, warmup, iterations, cold_cache, peak_bw, peak_flops);
  StatusOr<OpRunReport> report = Unlocked([&] { return ProfileOpInstance(request); });
  if (!report.ok()) RaiseStatus(report.status());
  std::ostringstream text;
  PrintProfile(*report, text, /*color=*/false);
  return py::make_tuple(report->ExitCode(), text.str(), OpReportJson(*report), Outputs(*report));
}

py::tuple SweepOp(const py::dict& run, const std::map<std::string, std::vector<int64_t>>& values, int warmup,
                  int iterations, double peak_bw, double peak_flops, const std::string& cache_file) {
  SweepRequest request{.base = ProfileFrom(run, warmup, iterations, false, peak_bw, peak_flops),
                       .values = values,
                       .cache_file = cache_file,
                       .use_cache = !cache_file.empty()};
  StatusOr<SweepReport> report = Unlocked([&] { return RunSweep(request); });
  if (!report.ok()) RaiseStatus(report.status());
  std::ostringstream text;
  PrintSweep(*report, text, /*color=*/false);
  text << "repro: " << report->repro << "\n";
  const int code = report->best_candidate() != nullptr ? 0 : 1;
  return py::make_tuple(code, text.str(), SweepJson(*report));
}

py::tuple DiagnoseOp(const std::vector<std::string>& argv, const std::string& output_dir, double timeout_s,
                     const std::string& run_report) {
  const DiagnoseRequest request{.argv = argv, .output_dir = output_dir, .timeout_s = timeout_s, .echo_output = false,
                                .run_report = run_report};
  StatusOr<Diagnosis> d = Unlocked([&] { return Diagnose(request); });
  if (!d.ok()) RaiseStatus(d.status());
  return py::make_tuple(d->status == DiagnosisStatus::kClean ? 0 : 1, FormatDiagnosis(*d), DiagnosisJson(*d));
}

}  // namespace opscope::python
