#pragma once
// The one host clock behind every timestamp opscope records: events, the
// recorder, the flight ring, the executor and the profiler all read it, so
// their times line up on one timeline without conversion.
#include <chrono>
#include <cstdint>

namespace opscope {

// Nanoseconds of std::chrono::steady_clock: monotonic, not wall time.
inline int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace opscope
