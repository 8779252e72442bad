#include "analysis/harness/input_region.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "opscope/op.h"

namespace opscope {

namespace {

bool SameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// A copy of `t` whose elements with coordinate `dim` in [lo, hi) are moved
// by more than their own magnitude, so max, min, sums and norms all see it.
StatusOr<Tensor> Perturbed(const Tensor& t, int dim, int64_t lo, int64_t hi) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor c, t.Clone());
  const int64_t n = t.dim(dim);
  int64_t inner = 1;
  for (int d = dim + 1; d < t.rank(); ++d) inner *= t.dim(d);
  const int64_t outer = n == 0 ? 0 : t.numel() / (n * inner);
  const bool is_float = IsFloat(t.dtype());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = lo; k < hi; ++k) {
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t i = (o * n + k) * inner + j;
        const double v = c.FlatGetAsDouble(i);
        if (t.dtype() == DType::kBool) c.FlatSetFromDouble(i, v != 0 ? 0 : 1);
        else c.FlatSetFromDouble(i, is_float ? v + 1 + std::fabs(v) : v + 1);
      }
    }
  }
  return c;
}

}  // namespace

IndexBox WholeBox(const Tensor& t) {
  IndexBox b;
  for (int d = 0; d < t.rank(); ++d) b.lo.push_back(0), b.hi.push_back(t.dim(d));
  return b;
}

StatusOr<InputRegion> FindRegionByPerturbation(const std::vector<Tensor>& inputs,
                                               const std::vector<int64_t>& out_coords, const OutputProbe& probe,
                                               const std::vector<bool>& skip) {
  InputRegion region;
  region.method = "perturbation";
  OPSCOPE_ASSIGN_OR_RETURN(Tensor base_out, probe(inputs));
  ++region.probes;
  if (static_cast<int>(out_coords.size()) != base_out.rank()) {
    return InvalidArgumentError("input region: output coordinates of rank " + std::to_string(out_coords.size()) +
                                " for an output of shape " + base_out.shape().ToString());
  }
  int64_t flat = 0;
  for (int d = 0; d < base_out.rank(); ++d) flat = flat * base_out.dim(d) + out_coords[d];
  const double base = base_out.FlatGetAsDouble(flat);

  std::vector<Tensor> trial = inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    IndexBox box = WholeBox(inputs[i]);
    if ((i < skip.size() && skip[i]) || !inputs[i].defined() || inputs[i].numel() == 0) {
      region.boxes.push_back(box);
      continue;
    }
    // changed(dim, lo, hi): does perturbing that slab move the element?
    auto changed = [&](int dim, int64_t lo, int64_t hi) -> StatusOr<bool> {
      OPSCOPE_ASSIGN_OR_RETURN(trial[i], Perturbed(inputs[i], dim, lo, hi));
      StatusOr<Tensor> out = probe(trial);
      trial[i] = inputs[i];
      ++region.probes;
      if (!out.ok()) return std::move(out).status();
      return !SameValue(out->FlatGetAsDouble(flat), base);
    };
    const int rank = inputs[i].rank();
    if (rank == 0) {  // a scalar: all of it or nothing, nothing to narrow
      region.boxes.push_back(box);
      continue;
    }
    OPSCOPE_ASSIGN_OR_RETURN(bool reads, changed(0, 0, inputs[i].dim(0)));
    if (!reads) {  // the element does not depend on this input at all
      for (int d = 0; d < rank; ++d) box.hi[d] = box.lo[d];
      region.boxes.push_back(box);
      continue;
    }
    for (int d = 0; d < rank; ++d) {
      const int64_t n = inputs[i].dim(d);
      // Lowest k with changed(d, 0, k+1); then highest k with changed(d, k, n).
      int64_t lo = 0, hi = n - 1;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        OPSCOPE_ASSIGN_OR_RETURN(bool c, changed(d, 0, mid + 1));
        if (c) hi = mid; else lo = mid + 1;
      }
      const int64_t first = lo;
      lo = first, hi = n - 1;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        OPSCOPE_ASSIGN_OR_RETURN(bool c, changed(d, mid, n));
        if (c) lo = mid; else hi = mid - 1;
      }
      box.lo[d] = first;
      box.hi[d] = lo + 1;
    }
    region.boxes.push_back(box);
  }
  return region;
}

InputRegion RegionFromIndexMap(const OpSchema& op, const std::vector<Tensor>& inputs,
                               const std::vector<Tensor>& outputs, const Attrs& attrs, int output,
                               const std::vector<int64_t>& out_coords) {
  std::vector<TensorDesc> in, out;
  for (const Tensor& t : inputs) in.push_back({t.dtype(), t.shape(), t.defined()});
  for (const Tensor& t : outputs) out.push_back({t.dtype(), t.shape(), t.defined()});
  InputRegion region;
  region.method = "index map";
  region.boxes = op.input_region(OpCall(in, out, attrs), output, out_coords);
  region.boxes.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    IndexBox& b = region.boxes[i];
    if (static_cast<int>(b.lo.size()) != inputs[i].rank() || b.hi.size() != b.lo.size()) {
      b = WholeBox(inputs[i]);  // a map that does not cover this input: all of it
      continue;
    }
    for (int d = 0; d < inputs[i].rank(); ++d) {
      b.lo[d] = std::clamp<int64_t>(b.lo[d], 0, inputs[i].dim(d));
      b.hi[d] = std::clamp<int64_t>(b.hi[d], b.lo[d], inputs[i].dim(d));
    }
  }
  return region;
}

std::string DescribeRegion(const std::vector<std::string>& names, const InputRegion& region) {
  std::string s;
  for (size_t i = 0; i < region.boxes.size(); ++i) {
    if (region.boxes[i].lo.size() && region.boxes[i].empty()) continue;
    s += (s.empty() ? "" : "  ") + (i < names.size() ? names[i] : "input" + std::to_string(i)) +
         region.boxes[i].ToString();
  }
  return s;
}

StatusOr<Tensor> CropTensor(const Tensor& t, const IndexBox& box) {
  Tensor view = t;
  for (int d = 0; d < t.rank(); ++d) {
    if (box.lo[d] == 0 && box.hi[d] == t.dim(d)) continue;
    OPSCOPE_ASSIGN_OR_RETURN(view, view.Slice(d, box.lo[d], box.hi[d]));
  }
  return view.Clone();
}

}  // namespace opscope
