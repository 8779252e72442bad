#include "opscope/index_box.h"

#include <algorithm>

namespace opscope {

int64_t IndexBox::numel() const {
  int64_t n = 1;
  for (size_t d = 0; d < lo.size(); ++d) n *= std::max<int64_t>(0, hi[d] - lo[d]);
  return n;
}

std::string IndexBox::ToString() const {
  std::string s = "[";
  for (size_t d = 0; d < lo.size(); ++d) {
    s += d ? "," : "";
    s += hi[d] - lo[d] == 1 ? std::to_string(lo[d]) : std::to_string(lo[d]) + ":" + std::to_string(hi[d]);
  }
  return s + "]";
}

}  // namespace opscope
