#include "graph/runtime/happens_before.h"

#include <algorithm>

namespace opscope::graph {

HappensBefore::HappensBefore(const Schedule& s) {
  const size_t streams = static_cast<size_t>(std::max(1, s.num_streams()));
  const size_t n = s.tasks.size();
  stream_.resize(n);
  position_.resize(n);
  clock_.assign(n, std::vector<int>(streams, 0));
  std::vector<std::vector<int>> stream_clock(streams, std::vector<int>(streams, 0));  // its last task's
  std::vector<std::vector<int>> event_clock(static_cast<size_t>(std::max<int64_t>(0, s.num_events)));
  for (size_t i = 0; i < n; ++i) {
    const ScheduledTask& t = s.tasks[i];
    const size_t st = std::min(static_cast<size_t>(std::max(0, t.desc.stream_id)), streams - 1);
    std::vector<int> c = stream_clock[st];
    for (int64_t e : t.wait_events) {
      if (e < 0 || static_cast<size_t>(e) >= event_clock.size()) continue;
      const std::vector<int>& at = event_clock[static_cast<size_t>(e)];
      for (size_t k = 0; k < at.size(); ++k) c[k] = std::max(c[k], at[k]);
    }
    c[st] += 1;
    stream_[i] = static_cast<int>(st);
    position_[i] = c[st];
    if (t.desc.event_after >= 0 && static_cast<size_t>(t.desc.event_after) < event_clock.size()) {
      event_clock[static_cast<size_t>(t.desc.event_after)] = c;
    }
    stream_clock[st] = c;
    clock_[i] = std::move(c);
  }
}

bool HappensBefore::Before(size_t a, size_t b) const {
  if (a == b || a >= clock_.size() || b >= clock_.size()) return false;
  return clock_[b][static_cast<size_t>(stream_[a])] >= position_[a] && (stream_[a] != stream_[b] || a < b);
}

}  // namespace opscope::graph
