#include "analysis/compare.h"

#include <cmath>

namespace opscope {

namespace {

// All elements as doubles, row-major: one pass with the element type known.
StatusOr<std::vector<double>> HostDoubles(const Tensor& t) {
  Tensor host = t;
  if (!t.on_host()) {
    OPSCOPE_ASSIGN_OR_RETURN(host, ToHost(t));
  }
  OPSCOPE_ASSIGN_OR_RETURN(Tensor c, host.Contiguous());
  std::vector<double> out(static_cast<size_t>(c.numel()));
  OPSCOPE_SWITCH_ALL(c.dtype(), {
    const scalar_t* p = c.data<scalar_t>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = ToDouble(p[i]);
  });
  return out;
}

}  // namespace

Tolerance DefaultTolerance(DType dtype) {
  switch (dtype) {
    case DType::kF64: return {1e-12, 1e-10};
    case DType::kF32: return {1e-5, 1e-5};
    case DType::kF16: return {1e-3, 1e-3};
    case DType::kBF16: return {1e-2, 1e-2};
    default: return {0, 0};
  }
}

std::vector<int64_t> UnravelIndex(int64_t flat, const Shape& shape) {
  std::vector<int64_t> coords(shape.rank(), 0);
  for (int i = shape.rank() - 1; i >= 0; --i) {
    if (shape[i] == 0) continue;
    coords[i] = flat % shape[i];
    flat /= shape[i];
  }
  return coords;
}

StatusOr<CompareResult> CompareTensors(const Tensor& actual, const Tensor& expected, const Tolerance& tolerance) {
  if (actual.shape() != expected.shape()) {
    return InvalidArgumentError("compare: actual " + actual.Describe() + " and expected " + expected.Describe() +
                                " differ in shape");
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<double> a, HostDoubles(actual));
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<double> e, HostDoubles(expected));

  CompareResult r;
  r.tolerance = tolerance;
  r.total = static_cast<int64_t>(a.size());
  for (int64_t i = 0; i < r.total; ++i) {
    const double av = a[i], ev = e[i];
    const bool a_nan = std::isnan(av), e_nan = std::isnan(ev);
    r.nan_actual += a_nan;
    r.nan_expected += e_nan;
    r.inf_actual += std::isinf(av);
    r.inf_expected += std::isinf(ev);
    bool match;
    double abs_err;
    if (a_nan || e_nan) {
      match = a_nan && e_nan;
      abs_err = NAN;
    } else if (av == ev) {  // also equal infinities, whose difference would be NaN
      match = true;
      abs_err = 0;
    } else if (std::isinf(av) || std::isinf(ev)) {
      abs_err = INFINITY;  // rtol * |inf| would otherwise accept any value
      match = false;
    } else {
      abs_err = std::fabs(av - ev);
      match = abs_err <= tolerance.atol + tolerance.rtol * std::fabs(ev);
    }
    if (!match) {
      ++r.mismatched;
      if (r.first_mismatch_index < 0) r.first_mismatch_index = i;
    }
    if (!std::isnan(abs_err)) {
      if (r.max_abs_index < 0 || abs_err > r.max_abs_err) {
        r.max_abs_err = abs_err;
        r.max_abs_index = i;
        r.expected_at_max_abs = ev;
        r.actual_at_max_abs = av;
      }
      if (ev != 0 && !std::isinf(ev)) {
        double rel = abs_err / std::fabs(ev);
        if (r.max_rel_index < 0 || rel > r.max_rel_err) {
          r.max_rel_err = rel;
          r.max_rel_index = i;
        }
      }
    }
  }
  if (r.max_abs_index >= 0) r.max_abs_coords = UnravelIndex(r.max_abs_index, actual.shape());
  return r;
}

}  // namespace opscope
