#include "analysis/compare/compare_json.h"

#include <cmath>

namespace opscope {

nlohmann::json JsonNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

namespace {

nlohmann::json Element(int64_t index, const std::vector<int64_t>& coords, double expected, double actual) {
  return {{"index", coords}, {"flat_index", index}, {"expected", JsonNumber(expected)}, {"actual", JsonNumber(actual)}};
}

}  // namespace

nlohmann::json CompareResultToJson(const CompareResult& r) {
  nlohmann::json j;
  j["rule"] = CompareRuleName(r.tolerance.rule);
  j["threshold"] = DescribeTolerance(r.tolerance);
  j["abserr"] = r.tolerance.atol;
  j["relerr"] = r.tolerance.rtol;
  if (r.tolerance.rule == CompareRule::kUlp) j["max_ulp_allowed"] = r.tolerance.max_ulp;
  j["passed"] = r.passed();
  j["mismatched"] = r.mismatched;
  j["total"] = r.total;
  j["max_abs_err"] = JsonNumber(r.max_abs_err);
  j["max_abs_at"] = r.max_abs_index >= 0 ? Element(r.max_abs_index, r.max_abs_coords, r.expected_at_max_abs,
                                                   r.actual_at_max_abs)
                                         : nlohmann::json();
  j["max_rel_err"] = JsonNumber(r.max_rel_err);
  j["max_rel_at"] = r.max_rel_index >= 0 ? Element(r.max_rel_index, r.max_rel_coords, r.expected_at_max_rel,
                                                   r.actual_at_max_rel)
                                         : nlohmann::json();
  if (r.max_ulp >= 0) j["max_ulp"] = r.max_ulp;
  j["mean_abs_err"] = JsonNumber(r.mean_abs_err);
  j["rmse"] = JsonNumber(r.rmse);
  j["cosine"] = JsonNumber(r.cosine);
  j["nan"] = {{"actual", r.nan_actual}, {"expected", r.nan_expected}, {"only_actual", r.nan_only_actual}};
  j["inf"] = {{"actual", r.inf_actual}, {"expected", r.inf_expected}, {"only_actual", r.inf_only_actual}};
  j["worst"] = nlohmann::json::array();
  for (const CompareElement& w : r.worst) {
    nlohmann::json e = Element(w.index, w.coords, w.expected, w.actual);
    e["abs_err"] = JsonNumber(w.abs_err);
    j["worst"].push_back(e);
  }
  j["pattern"] = r.pattern;
  j["findings"] = nlohmann::json::array();
  for (const CompareFinding& f : r.findings) {
    nlohmann::json fj = {{"kind", f.kind},
                         {"subject", f.subject},
                         {"text", f.text},
                         {"share_of_mismatches", f.share_of_mismatches},
                         {"share_of_elements", f.share_of_elements}};
    for (const auto& [name, value] : f.numbers) fj[name] = JsonNumber(value);
    j["findings"].push_back(fj);
  }
  // What the verdict cannot see, and the warnings a pass carries for it.
  if (r.floor_decides >= 0) {
    j["floor_decides"] = {{"elements", r.floor_decides},
                          {"allows_a_tenth", r.floor_allows_tenth},
                          {"of", r.finite_pairs}};
  }
  j["sign_flips"] = {{"elements", r.sign_flips}, {"of_nonzero", r.nonzero_pairs}};
  j["warnings"] = nlohmann::json::array();
  for (const CompareFinding& w : r.warnings) {
    nlohmann::json wj = {{"kind", w.kind}, {"text", w.text}, {"share_of_elements", w.share_of_elements}};
    for (const auto& [name, value] : w.numbers) wj[name] = JsonNumber(value);
    j["warnings"].push_back(wj);
  }
  j["value_histograms"] = nlohmann::json::array();
  for (const ValueHistogram& h : r.value_histograms) {
    nlohmann::json bands = nlohmann::json::array();
    for (const ValueBand& b : h.bands) {
      bands.push_back({{"from", JsonNumber(b.from)},
                       {"to", JsonNumber(b.to)},
                       {"elements", b.elements},
                       {"mismatches", b.mismatches},
                       {"max_abs_err", JsonNumber(b.max_abs_err)},
                       {"mean_abs_err", JsonNumber(b.mean_abs_err)}});
    }
    j["value_histograms"].push_back({{"of", h.subject},
                                     {"elements_analysed", h.elements_analysed},
                                     {"mismatches_analysed", h.mismatches_analysed},
                                     {"bands", bands}});
  }
  j["histogram"] = nlohmann::json::array();
  for (const HistogramBin& b : r.histogram) {
    j["histogram"].push_back({{"abs_expected", b.Label()},
                              {"count", b.count},
                              {"mismatched", b.mismatched},
                              {"max_abs_err", JsonNumber(b.max_abs_err)},
                              {"mean_abs_err", JsonNumber(b.count ? b.sum_abs_err / b.count : 0)}});
  }
  return j;
}

}  // namespace opscope
