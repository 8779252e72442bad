#include "graph/run/output_checks.h"

#include <cmath>
#include <sstream>

#include "opscope/harness.h"
#include "opscope/npy.h"

namespace opscope::graph {
namespace {

std::string Describe(const TensorDesc& d) { return std::string(DTypeName(d.dtype)) + d.shape.ToString(); }

}  // namespace

nlohmann::json FiniteOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

StatusOr<std::vector<ExpectedOutput>> ReadExpectedOutputs(const std::vector<std::string>& files, const Graph& compiled) {
  const std::vector<std::string>& outputs = compiled.outputs();
  std::vector<ExpectedOutput> out;
  bool by_name = false, in_order = false;
  for (size_t i = 0; i < files.size(); ++i) {
    ExpectedOutput e{.file = files[i]};
    if (size_t eq = files[i].find('='); eq != std::string::npos) {
      by_name = true;
      e.name = files[i].substr(0, eq);
      e.file = files[i].substr(eq + 1);
      bool known = false;
      for (const std::string& o : outputs) known |= o == e.name;
      if (!known) {
        std::string names;
        for (const std::string& o : outputs) names += (names.empty() ? "" : ", ") + o;
        return InvalidArgumentError("expected_files " + files[i] + ": the model has no output '" + e.name +
                                    "' (its outputs: " + names + ")");
      }
    } else {
      in_order = true;
      if (i < outputs.size()) e.name = outputs[i];
    }
    for (const ExpectedOutput& seen : out) {
      if (seen.name == e.name && !e.name.empty()) {
        return InvalidArgumentError("expected_files: output '" + e.name + "' given twice");
      }
    }
    out.push_back(std::move(e));
  }
  if (by_name && in_order) {
    return InvalidArgumentError("expected_files: give every file in output order, or each as name=file, not both");
  }
  if (in_order && files.size() != outputs.size()) {
    return InvalidArgumentError("expected_files: " + std::to_string(files.size()) + " file(s) for the model's " +
                                std::to_string(outputs.size()) +
                                " output(s) (one .npy per output, in order, or name=file for some)");
  }
  for (ExpectedOutput& e : out) {
    StatusOr<Tensor> t = ReadNpy(e.file);
    if (!t.ok()) return std::move(t).status().WithContext("expected_files");
    e.tensor = std::move(t).value();
    const Value* v = compiled.FindValue(e.name);
    if (!v) continue;
    if (v->dtype_known && v->dtype != e.tensor.dtype()) {
      return InvalidArgumentError("expected_files " + e.file + ": holds " + e.tensor.Describe() + " but output '" +
                                  e.name + "' is " + DTypeName(v->dtype) + " (expected the same dtype)");
    }
    if (v->shape_known() && v->desc().shape != e.tensor.shape()) {
      return InvalidArgumentError("expected_files " + e.file + ": holds " + e.tensor.Describe() + " but output '" +
                                  e.name + "' is " + Describe(v->desc()));
    }
  }
  return out;
}

StatusOr<std::vector<OutputCheck>> CheckOutputs(const std::vector<ExpectedOutput>& expected,
                                                const std::map<std::string, Tensor>& outputs,
                                                const ToleranceSpec& spec) {
  std::vector<OutputCheck> checks;
  for (const ExpectedOutput& e : expected) {
    auto it = outputs.find(e.name);
    if (it == outputs.end()) return InvalidArgumentError("expected_files " + e.file + ": the run gave no output '" + e.name + "'");
    const Tensor& actual = it->second;
    // A shape only known once the model ran (a dynamic dimension) is checked now.
    if (actual.shape() != e.tensor.shape() || actual.dtype() != e.tensor.dtype()) {
      return InvalidArgumentError("expected_files " + e.file + ": holds " + e.tensor.Describe() + " but output '" +
                                  e.name + "' is " + actual.Describe());
    }
    OPSCOPE_ASSIGN_OR_RETURN(Tolerance tolerance, ResolveTolerance(spec, actual.dtype()));
    OPSCOPE_ASSIGN_OR_RETURN(CompareResult r,
                             CompareTensors(actual, e.tensor, tolerance, CompareOptions{.worst_k = spec.worst_k}));
    OutputCheck c{.name = e.name, .file = e.file, .describe = actual.Describe(), .passed = r.passed(),
                  .rule = std::string(CompareRuleName(r.tolerance.rule)) + " " + DescribeTolerance(r.tolerance),
                  .mismatched = r.mismatched, .total = r.total, .max_abs_err = r.max_abs_err,
                  .max_rel_err = r.max_rel_err, .cosine = r.cosine, .pattern = r.mismatched ? r.pattern : ""};
    for (const CompareFinding& w : r.warnings) c.warnings.push_back(w.text);
    std::ostringstream text;
    PrintComparison(e.name, c.describe, r, text);
    c.text = text.str();
    checks.push_back(std::move(c));
  }
  return checks;
}

nlohmann::json OutputChecksJson(const std::vector<OutputCheck>& checks) {
  nlohmann::json out = nlohmann::json::array();
  for (const OutputCheck& c : checks) {
    out.push_back({{"name", c.name}, {"file", c.file}, {"describe", c.describe}, {"passed", c.passed},
                   {"rule", c.rule}, {"mismatched", c.mismatched}, {"total", c.total},
                   {"max_abs_err", FiniteOrNull(c.max_abs_err)}, {"max_rel_err", FiniteOrNull(c.max_rel_err)},
                   {"cosine", FiniteOrNull(c.cosine)}, {"pattern", c.pattern}, {"warnings", c.warnings}, {"text", c.text}});
  }
  return out;
}

std::vector<OutputCheck> OutputChecksFromJson(const JsonField& j) {
  std::vector<OutputCheck> out;
  const auto number = [](const JsonField& f) { return f.Present() ? f.Number() : NAN; };
  for (size_t i = 0; i < j.Size(); ++i) {
    const JsonField c = j[i];
    out.push_back({.name = c["name"].String(), .file = c["file"].String(), .describe = c["describe"].String(),
                   .passed = c["passed"].Bool(), .rule = c["rule"].String(), .mismatched = c["mismatched"].Int(),
                   .total = c["total"].Int(), .max_abs_err = number(c["max_abs_err"]),
                   .max_rel_err = number(c["max_rel_err"]), .cosine = number(c["cosine"]),
                   .pattern = c["pattern"].String(), .warnings = c["warnings"].Strings(), .text = c["text"].String()});
  }
  return out;
}

}  // namespace opscope::graph
