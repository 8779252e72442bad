// File: opscope/index_box.h
// A box of tensor elements, per dim [lo, hi): what an op's index map
// (OpDef::InputRegion) says one output element reads, and what error
// localisation reports. It lives in core so that analysis can name a region
// without depending on the op layer; opscope/op.h re-exports it.
//
//   IndexBox b{.lo = {3, 17, 0, 54}, .hi = {4, 18, 2, 57}};
//   b.ToString()  ->  "[3,17,0:2,54:57]"
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace opscope {

struct IndexBox {
  std::vector<int64_t> lo, hi;
  int64_t numel() const;
  bool empty() const { return numel() == 0; }
  std::string ToString() const;  // "[3,17,0:2,54:57]"
};

}  // namespace opscope
