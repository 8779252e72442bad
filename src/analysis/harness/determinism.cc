#include "analysis/harness/determinism.h"

#include <cmath>
#include <cstring>

#include "opscope/compare.h"

namespace opscope {

DeterminismCheck::DeterminismCheck(std::vector<Tensor> first, std::vector<std::string> names)
    : first_(std::move(first)) {
  for (size_t i = 0; i < first_.size(); ++i) {
    diffs_.push_back(RunDifference{.output = static_cast<int>(i), .name = i < names.size() ? names[i] : ""});
  }
}

void DeterminismCheck::AddRepeat(const std::vector<Tensor>& outputs) {
  ++repeats_;
  for (size_t o = 0; o < first_.size() && o < outputs.size(); ++o) {
    const Tensor& a = first_[o];
    const Tensor& b = outputs[o];
    RunDifference& d = diffs_[o];
    ++d.runs;
    const size_t width = DTypeSize(a.dtype());
    const auto* pa = static_cast<const uint8_t*>(a.raw_data());
    const auto* pb = static_cast<const uint8_t*>(b.raw_data());
    const bool contiguous = a.is_contiguous() && b.is_contiguous() && a.numel() == b.numel();
    // Bit equality of whole buffers first: the common case costs one memcmp.
    if (contiguous && std::memcmp(pa, pb, static_cast<size_t>(a.numel()) * width) == 0) continue;
    int64_t differing = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
      bool same = contiguous ? std::memcmp(pa + i * width, pb + i * width, width) == 0
                             : a.FlatGetAsDouble(i) == b.FlatGetAsDouble(i);
      if (same) continue;
      ++differing;
      const double va = a.FlatGetAsDouble(i), vb = b.FlatGetAsDouble(i);
      if (d.first_differing_run < 0) {
        d.first_differing_run = repeats_;
        d.first_index = i;
        d.first_coords = UnravelIndex(i, a.shape());
        d.first_value = va;
        d.other_value = vb;
      }
      const double diff = std::isnan(va) != std::isnan(vb) ? INFINITY : std::fabs(va - vb);
      if (diff > d.max_abs_diff || d.max_diff_coords.empty()) {
        d.max_abs_diff = std::isnan(diff) ? d.max_abs_diff : diff;
        d.max_diff_coords = UnravelIndex(i, a.shape());
      }
    }
    if (differing) {
      ++d.runs_differing;
      d.elements_differing = std::max(d.elements_differing, differing);
    }
  }
}

std::vector<RunDifference> DeterminismCheck::Differences() const {
  std::vector<RunDifference> out;
  for (const RunDifference& d : diffs_) {
    if (d.runs_differing) out.push_back(d);
  }
  return out;
}

}  // namespace opscope
