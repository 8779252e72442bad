#include "ops/builtin/dense_util.h"

#include <algorithm>

namespace opscope::dense {

int64_t WindowGeometry::in_size() const {
  int64_t n = 1;
  for (int64_t d : in) n *= d;
  return n;
}

int64_t WindowGeometry::out_size() const {
  int64_t n = 1;
  for (int64_t d : out) n *= d;
  return n;
}

int64_t WindowGeometry::kernel_size() const {
  int64_t n = 1;
  for (int64_t d : kernel) n *= d;
  return n;
}

std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    idx[i] = flat % dims[i];
    flat /= dims[i];
  }
  return idx;
}

std::vector<std::vector<int64_t>> KernelTaps(const std::vector<int64_t>& kernel) {
  int64_t n = 1;
  for (int64_t d : kernel) n *= d;
  std::vector<std::vector<int64_t>> taps;
  taps.reserve(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) taps.push_back(Unflatten(k, kernel));
  return taps;
}

std::string Join(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

namespace {

// A per-spatial-dim attribute: absent or empty means all `fallback`.
StatusOr<std::vector<int64_t>> PerDim(std::string_view op, const Attrs& attrs, std::string_view name, int n,
                                      int64_t fallback, int64_t min_value) {
  std::vector<int64_t> v = attrs.ints(name);
  if (v.empty()) return std::vector<int64_t>(n, fallback);
  if (static_cast<int>(v.size()) != n) {
    return InvalidArgumentError(std::string(op) + ": attribute " + std::string(name) + "=" + Join(v) + " has " +
                                std::to_string(v.size()) + " values; expected " + std::to_string(n) +
                                " (one per spatial dim)");
  }
  for (int64_t x : v) {
    if (x < min_value) {
      return InvalidArgumentError(std::string(op) + ": attribute " + std::string(name) + "=" + Join(v) +
                                  " must hold values >= " + std::to_string(min_value));
    }
  }
  return v;
}

}  // namespace

StatusOr<WindowGeometry> SlidingWindow(std::string_view op, const Shape& x, const std::vector<int64_t>& kernel,
                                       const Attrs& attrs, bool ceil_mode) {
  const std::string o(op);
  if (x.rank() < 3) {
    return InvalidArgumentError(o + ": input X has shape " + x.ToString() +
                                "; expected [N, C, spatial...] with at least one spatial dim");
  }
  const int n = x.rank() - 2;
  if (static_cast<int>(kernel.size()) != n) {
    return InvalidArgumentError(o + ": kernel_shape=" + Join(kernel) + " has " + std::to_string(kernel.size()) +
                                " dims but input X " + x.ToString() + " has " + std::to_string(n) + " spatial dims");
  }
  for (int64_t k : kernel) {
    if (k < 1) return InvalidArgumentError(o + ": kernel_shape=" + Join(kernel) + " must be positive");
  }
  WindowGeometry g;
  g.in.assign(x.dims().begin() + 2, x.dims().end());
  g.kernel = kernel;
  OPSCOPE_ASSIGN_OR_RETURN(g.strides, PerDim(op, attrs, "strides", n, 1, 1));
  // Validated attrs hold every declared name; AveragePool declares no
  // dilations (its windows are dense), and reading one it lacks is an error.
  if (attrs.all().count("dilations")) {
    OPSCOPE_ASSIGN_OR_RETURN(g.dilations, PerDim(op, attrs, "dilations", n, 1, 1));
  } else {
    g.dilations.assign(n, 1);
  }
  const std::string auto_pad = attrs.s("auto_pad", "NOTSET");
  g.pads_begin.assign(n, 0);
  g.pads_end.assign(n, 0);
  g.out.assign(n, 0);
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = attrs.ints("pads");
    if (!pads.empty()) {
      if (static_cast<int>(pads.size()) != 2 * n) {
        return InvalidArgumentError(o + ": attribute pads=" + Join(pads) + " has " + std::to_string(pads.size()) +
                                    " values; expected " + std::to_string(2 * n) + " (begin and end per spatial dim)");
      }
      for (int i = 0; i < n; ++i) {
        if (pads[i] < 0 || pads[i + n] < 0) {
          return InvalidArgumentError(o + ": attribute pads=" + Join(pads) + " must be >= 0");
        }
        g.pads_begin[i] = pads[i];
        g.pads_end[i] = pads[i + n];
      }
    }
  } else if (auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return InvalidArgumentError(o + ": attribute auto_pad='" + auto_pad +
                                "'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  }
  for (int i = 0; i < n; ++i) {
    const int64_t span = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t s = g.strides[i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[i] = (g.in[i] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + span - g.in[i]);
      // The odd pixel goes to the end for SAME_UPPER, to the start for SAME_LOWER.
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.pads_end[i] = total - g.pads_begin[i];
      continue;
    }
    const int64_t padded = g.in[i] + g.pads_begin[i] + g.pads_end[i];
    if (padded < span) {
      return InvalidArgumentError(o + ": the window (kernel_shape=" + Join(g.kernel) + ", dilations=" +
                                  Join(g.dilations) + ") is larger than the padded input " + x.ToString() +
                                  " in spatial dim " + std::to_string(i));
    }
    if (ceil_mode) {
      g.out[i] = (padded - span + s - 1) / s + 1;
      // A last window that would start inside the end padding is dropped.
      if ((g.out[i] - 1) * s >= g.in[i] + g.pads_begin[i]) --g.out[i];
    } else {
      g.out[i] = (padded - span) / s + 1;
    }
  }
  return g;
}

WindowGeometry As3d(const WindowGeometry& g) {
  WindowGeometry r = g;
  auto pad = [](std::vector<int64_t>& v, int64_t fill) {
    while (v.size() < 3) v.insert(v.begin(), fill);
  };
  pad(r.in, 1);
  pad(r.kernel, 1);
  pad(r.strides, 1);
  pad(r.dilations, 1);
  pad(r.pads_begin, 0);
  pad(r.pads_end, 0);
  pad(r.out, 1);
  return r;
}

Status CheckVector(std::string_view op, const TensorDesc& d, std::string_view name, int64_t n) {
  if (d.shape.rank() != 1 || d.shape[0] != n) {
    return InvalidArgumentError(std::string(op) + ": input " + std::string(name) + " has shape " +
                                d.shape.ToString() + "; expected [" + std::to_string(n) + "] (one per channel)");
  }
  return Status::Ok();
}

int64_t OutputsPerBlock(KernelContext& ctx, int64_t reads_each) {
  return std::max<int64_t>(1, ctx.tunable("block_inputs", 32768) / std::max<int64_t>(reads_each, 1));
}

int64_t WholeRoundsBlock(int64_t n, int64_t at_least, int64_t multiple, int workers) {
  multiple = std::max<int64_t>(1, multiple);
  const int64_t w = std::max(1, workers);
  auto whole = [multiple](int64_t v) { return (v + multiple - 1) / multiple * multiple; };
  auto blocks_of = [n](int64_t b) { return (n + b - 1) / b; };
  int64_t b = whole(std::max<int64_t>(1, at_least));
  if (b >= n || blocks_of(b) % w == 0) return b;
  const int64_t blocks = (blocks_of(b) + w - 1) / w * w;
  b = whole((n + blocks - 1) / blocks);
  // Rounding to whole multiples can leave a count short of a round: smaller
  // blocks until it is one (or the blocks are a single multiple).
  while (b > multiple && blocks_of(b) % w != 0) b -= multiple;
  return b;
}

bool HasAvx2() {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
#else
  return false;
#endif
}

}  // namespace opscope::dense
