// `ops-debug compare`: the compare engine on two files that came from
// anywhere (another framework, a device dump), and how it reads out.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "analysis/compare/compare_json.h"
#include "analysis/report/report_json.h"
#include "core/command_line.h"
#include "core/file_util.h"
#include "core/json_text.h"
#include "core/text_format.h"
#include "opscope/harness.h"
#include "opscope/npy.h"

namespace opscope {

namespace {

bool IsNpz(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".npz") == 0;
}

// Both sides agree on shape and dtype and hold something to compare.
Status CheckPair(const std::string& what_e, const Tensor& e, const std::string& what_a, const Tensor& a) {
  if (e.shape() != a.shape()) {
    return InvalidArgumentError("shapes differ: expected " + what_e + " is " + e.Describe() + ", actual " + what_a +
                                " is " + a.Describe());
  }
  if (e.dtype() != a.dtype()) {
    return InvalidArgumentError("dtypes differ: expected " + what_e + " is " + e.Describe() + ", actual " + what_a +
                                " is " + a.Describe() + " (convert one side so both hold the same type)");
  }
  if (e.numel() == 0) return InvalidArgumentError(what_e + " and " + what_a + ": empty arrays " + e.Describe() + ", nothing to compare");
  return Status::Ok();
}

std::string Join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

bool CompareFilesReport::passed() const {
  for (const ComparedArray& a : arrays) {
    if (!a.result.passed()) return false;
  }
  return true;
}

StatusOr<CompareFilesReport> CompareFiles(const CompareFilesRequest& f) {
  if (f.expected.empty() || f.actual.empty()) return InvalidArgumentError("compare: give EXPECTED and ACTUAL files");
  if (IsNpz(f.expected) != IsNpz(f.actual)) {
    return InvalidArgumentError("compare: " + f.expected + " and " + f.actual +
                                ": give two .npy files or two .npz archives, not one of each");
  }
  OPSCOPE_RETURN_IF_ERROR(PrepareOutputFile(f.report, "report"));
  NamedTensors expected, actual;
  if (IsNpz(f.expected)) {
    OPSCOPE_ASSIGN_OR_RETURN(expected, ReadNpz(f.expected));
    OPSCOPE_ASSIGN_OR_RETURN(actual, ReadNpz(f.actual));
    std::map<std::string, Tensor> by_name(actual.begin(), actual.end());
    std::vector<std::string> only_e, only_a;
    for (const auto& [name, t] : expected) {
      if (!by_name.count(name)) only_e.push_back(name);
    }
    std::map<std::string, Tensor> e_names(expected.begin(), expected.end());
    for (const auto& [name, t] : actual) {
      if (!e_names.count(name)) only_a.push_back(name);
    }
    if (!only_e.empty() || !only_a.empty()) {
      return InvalidArgumentError("compare: the archives hold different arrays: only in " + f.expected + ": [" +
                                  Join(only_e) + "], only in " + f.actual + ": [" + Join(only_a) + "]");
    }
    if (expected.empty()) return InvalidArgumentError("compare: " + f.expected + ": the archive holds no arrays");
    NamedTensors ordered;
    for (const auto& [name, t] : expected) ordered.emplace_back(name, by_name.at(name));
    actual = std::move(ordered);
  } else {
    OPSCOPE_ASSIGN_OR_RETURN(Tensor e, ReadNpy(f.expected));
    OPSCOPE_ASSIGN_OR_RETURN(Tensor a, ReadNpy(f.actual));
    const std::string name = std::filesystem::path(f.actual).stem().string();
    expected.emplace_back(name, e);
    actual.emplace_back(name, a);
  }
  std::vector<Tolerance> tolerances;
  for (size_t i = 0; i < expected.size(); ++i) {
    const bool npz = IsNpz(f.expected);
    const std::string we = npz ? f.expected + ":" + expected[i].first : f.expected;
    const std::string wa = npz ? f.actual + ":" + actual[i].first : f.actual;
    OPSCOPE_RETURN_IF_ERROR(CheckPair(we, expected[i].second, wa, actual[i].second).WithContext("compare"));
    OPSCOPE_ASSIGN_OR_RETURN(Tolerance t, ResolveTolerance(f.tolerance, actual[i].second.dtype()));
    tolerances.push_back(t);
  }
  CompareOptions options{.worst_k = f.tolerance.worst_k, .findings = f.findings};
  for (const std::string& spec : f.inputs) {
    const size_t eq = spec.find('=');
    const std::string path = eq == std::string::npos ? spec : spec.substr(eq + 1);
    const std::string name = eq == std::string::npos ? std::filesystem::path(spec).stem().string() : spec.substr(0, eq);
    if (name.empty() || path.empty()) {
      return InvalidArgumentError("inputs '" + spec + "': expected name=path.npy or path.npy");
    }
    OPSCOPE_ASSIGN_OR_RETURN(Tensor t, ReadNpy(path));
    options.inputs.push_back({name, std::move(t)});
  }
  CompareFilesReport report;
  report.expected = f.expected;
  report.actual = f.actual;
  for (size_t i = 0; i < expected.size(); ++i) {
    OPSCOPE_ASSIGN_OR_RETURN(CompareResult r, CompareTensors(actual[i].second, expected[i].second, tolerances[i], options));
    report.arrays.push_back({expected[i].first, actual[i].second.Describe(), std::move(r)});
  }
  CommandLine repro("ops-debug compare");
  repro.Arg(f.expected).Arg(f.actual).Append(ToleranceSpecFlags(f.tolerance));
  if (!f.inputs.empty()) repro.Flag("--inputs", f.inputs, ",");
  report.repro = repro.str();
  if (!f.report.empty()) {
    OPSCOPE_RETURN_IF_ERROR(WriteReportFile(f.report, CompareReportJsonValue(report)));
    report.report_file = f.report;
  }
  return report;
}

void PrintComparison(const std::string& name, const std::string& describe, const CompareResult& c, std::ostream& out,
                     const std::string& out_of_bounds) {
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.2f%%", c.total ? 100.0 * c.mismatched / c.total : 0.0);
  const bool passed = c.passed() && out_of_bounds.empty();
  const std::string warnings = std::to_string(c.warnings.size()) + (c.warnings.size() == 1 ? " warning" : " warnings");
  std::string warned;
  if (!c.warnings.empty() && passed) warned = " with " + warnings;
  if (!c.warnings.empty() && !passed && c.mismatched == 0 && out_of_bounds.empty()) warned = " under --strict: " + warnings;
  out << "output " << name << "  " << describe << "  " << (passed ? "PASSED" : "FAILED") << warned << "  " << WithThousands(c.mismatched) << " / " << WithThousands(c.total) << " mismatched (" << pct << ")  "
      << CompareRuleName(c.tolerance.rule) << "  " << DescribeTolerance(c.tolerance) << "\n";
  if (!out_of_bounds.empty()) out << "  OUT OF BOUNDS  " << out_of_bounds << "\n";
  // Non-finite values on the actual side only, and where (from the worst list,
  // where they rank first).
  auto where = [&](bool (*pick)(double)) {
    std::vector<const CompareElement*> at;
    for (const CompareElement& w : c.worst) {
      if (pick(w.actual) && std::isfinite(w.expected)) at.push_back(&w);
    }
    std::sort(at.begin(), at.end(), [](auto* a, auto* b) { return a->index < b->index; });
    std::string s = at.empty() ? "" : " at";
    for (size_t i = 0; i < at.size() && i < 5; ++i) s += " " + CoordsText(at[i]->coords);
    return s + (at.size() > 5 ? " ..." : "");
  };
  if (c.nan_only_actual) {
    out << "  NaN in actual only: " << WithThousands(c.nan_only_actual) << " element(s)"
        << where([](double v) { return std::isnan(v); }) << "\n";
  }
  if (c.inf_only_actual) {
    out << "  Inf in actual only: " << WithThousands(c.inf_only_actual) << " element(s)"
        << where([](double v) { return std::isinf(v); }) << "\n";
  }
  if (c.max_abs_index >= 0) {
    out << "  max abs err " << ShortNum(c.max_abs_err) << " at " << CoordsText(c.max_abs_coords) << "  expected "
        << ShortNum(c.expected_at_max_abs) << "  actual " << ShortNum(c.actual_at_max_abs) << "\n";
  }
  if (c.max_rel_index >= 0) {
    out << "  max rel err " << ShortNum(c.max_rel_err) << " at " << CoordsText(c.max_rel_coords) << "  expected "
        << ShortNum(c.expected_at_max_rel) << "  actual " << ShortNum(c.actual_at_max_rel) << "  (over expected != 0)\n";
  }
  if (c.max_ulp >= 0) out << "  max ulp " << c.max_ulp << "\n";
  out << "  mean abs err " << ShortNum(c.mean_abs_err) << "  rmse " << ShortNum(c.rmse) << "  cosine " << ShortNum(c.cosine)
      << "  NaN " << c.nan_actual << "/" << c.nan_expected << "  Inf " << c.inf_actual << "/" << c.inf_expected
      << "  (actual/expected)\n";
  for (const CompareFinding& w : c.warnings) out << "  warning  " << w.text << "\n";
  if (!c.passed()) {
    out << "  pattern  " << c.pattern << "\n";
    for (const CompareFinding& f : c.findings) out << "  finding  " << f.text << "\n";
    out << "  worst";
    for (size_t i = 0; i < c.worst.size() && i < 5; ++i) {
      const CompareElement& w = c.worst[i];
      out << (i ? "; " : " ") << CoordsText(w.coords) << " e=" << ShortNum(w.expected) << " a=" << ShortNum(w.actual);
    }
    out << "\n  by |expected|";
    for (const HistogramBin& b : c.histogram) {
      if (b.mismatched) out << "  " << b.Label() << ": " << WithThousands(b.mismatched) << "/" << WithThousands(b.count);
    }
    out << "\n";
  }
}

void PrintCompareReport(const CompareFilesReport& r, std::ostream& out) {
  out << "compare  expected " << r.expected << "  actual " << r.actual << "\n";
  for (const ComparedArray& a : r.arrays) PrintComparison(a.name, a.describe, a.result, out);
  size_t warnings = 0;
  for (const ComparedArray& a : r.arrays) warnings += a.result.passed() ? a.result.warnings.size() : 0;
  out << (r.passed() ? "PASSED" : "FAILED")
      << (r.passed() && warnings ? " with " + std::to_string(warnings) + (warnings == 1 ? " warning" : " warnings") : "") << "\n";
  out << "repro: " << r.repro << "\n";
}

nlohmann::json CompareReportJsonValue(const CompareFilesReport& r) {
  nlohmann::json j = EmptyReport(r.passed() ? "passed" : "failed");
  j["expected_file"] = r.expected;
  j["actual_file"] = r.actual;
  // `compare` is the first failing array (or the first one); `outputs` has them all.
  const ComparedArray* main = r.arrays.empty() ? nullptr : &r.arrays[0];
  for (const ComparedArray& a : r.arrays) {
    j["outputs"].push_back({{"name", a.name}, {"tensor", a.describe}, {"compare", CompareResultToJson(a.result)}});
    if (main->result.passed() && !a.result.passed()) main = &a;
  }
  if (main) j["compare"] = CompareResultToJson(main->result);
  j["repro"]["command"] = r.repro;
  return j;
}

std::string CompareReportJson(const CompareFilesReport& r) { return JsonText(CompareReportJsonValue(r), 2) + "\n"; }

}  // namespace opscope
