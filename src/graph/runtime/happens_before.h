// File: graph/runtime/happens_before.h
// Which tasks of a schedule finish before which start, in every run of it
// whatever the streams' timing: a stream runs its tasks in order, and a task
// that waits on an event runs after the task the event was recorded after.
// One vector clock per task (an entry per stream: how many of that stream's
// tasks are ordered before it or are it), built in enqueue order, so a
// question is one comparison. The runtime's arenas (stream_arenas.h) ask it
// before a value used on two streams takes the memory of another.
//
//   const HappensBefore hb(schedule);
//   hb.Before(3, 9);  // task 3 is done before task 9 starts, on any timing
#pragma once

#include <cstddef>
#include <vector>

#include "graph/runtime/scheduler.h"

namespace opscope::graph {

class HappensBefore {
 public:
  explicit HappensBefore(const Schedule& s);

  // Whether task `a` is done before task `b` starts (indices into s.tasks).
  // False for a == b.
  bool Before(size_t a, size_t b) const;

 private:
  std::vector<int> stream_;               // by task
  std::vector<int> position_;             // by task: 1 for its stream's first task
  std::vector<std::vector<int>> clock_;   // by task, by stream
};

}  // namespace opscope::graph
