#include "graph/run/captured_run.h"

namespace opscope::graph {

RunTiming TimingOf(const CapturedRun& run) {
  return TimeRun(run.schedule, run.iteration_times, run.warmup, run.median_iteration);
}

}  // namespace opscope::graph
