// opscope.run_op: the op harness (opscope/harness.h's RunOpInstance), as
// `ops-debug run` calls it, from typed Python arguments. Inputs and expected
// outputs given as arrays are copied into the request (the harness may keep
// them past this call's arguments); the outputs come back as numpy arrays.
#include "op_run.h"

#include <pybind11/stl.h>

#include <cstring>
#include <sstream>

#include "array_view.h"
#include "opscope/harness.h"
#include "status_error.h"

namespace py = pybind11;

namespace opscope::python {
namespace {

Tensor Copied(const py::array& a, const std::string& what) {
  StatusOr<Tensor> t = TensorOver(a, what).Clone();
  if (!t.ok()) RaiseStatus(t.status());
  return *std::move(t);
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

}  // namespace

py::tuple RunOp(const std::string& op, const std::vector<py::array>& inputs, const std::vector<std::vector<int64_t>>& shapes,
                const std::vector<std::string>& dtypes, const std::string& attrs, const std::vector<std::string>& plugins,
                const std::string& device, const std::map<std::string, int64_t>& tunables,
                const std::vector<py::array>& expected, const std::string& rule, std::optional<double> atol,
                std::optional<double> rtol, std::optional<int64_t> max_ulp, uint64_t seed, const std::string& fill,
                int outputs, int repeat, double timeout_s) {
  OpRunRequest request{.op = op, .plugins = plugins, .seed = seed, .attrs = attrs, .tunables = tunables, .device = device};
  for (size_t i = 0; i < inputs.size(); ++i) request.input_tensors.push_back(Copied(inputs[i], "inputs[" + std::to_string(i) + "]"));
  for (const std::vector<int64_t>& s : shapes) request.input_shapes.emplace_back(s);
  for (const std::string& d : dtypes) {
    StatusOr<DType> dtype = ParseDType(d);
    if (!dtype.ok()) RaiseStatus(dtype.status());
    request.dtypes.push_back(*dtype);
  }
  StatusOr<FillKind> kind = ParseFillKind(fill);
  if (!kind.ok()) RaiseStatus(kind.status());
  request.fill = *kind;
  for (size_t i = 0; i < expected.size(); ++i) {
    request.expected_tensors.push_back(Copied(expected[i], "expected[" + std::to_string(i) + "]"));
  }
  request.tolerance = ToleranceSpec{.rule = rule, .atol = atol, .rtol = rtol, .max_ulp = max_ulp};
  request.num_outputs = outputs;
  request.repeat = repeat;
  request.timeout_s = timeout_s;
  StatusOr<OpRunReport> report = [&] {
    py::gil_scoped_release unlocked;
    return RunOpInstance(request);
  }();
  if (!report.ok()) RaiseStatus(report.status());
  std::ostringstream text;
  PrintOpReport(*report, text);
  py::list arrays;
  for (const OpRunOutput& o : report->outputs) arrays.append(py::make_tuple(o.name, ToNumpy(o.actual), ToNumpy(o.expected)));
  return py::make_tuple(report->ExitCode(), text.str(), OpReportJson(*report), arrays);
}

}  // namespace opscope::python
