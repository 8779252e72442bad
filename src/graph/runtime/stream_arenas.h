// File: graph/runtime/stream_arenas.h
// Where a schedule's values live on the device during an iteration: one
// arena per stream, planned once from the schedule's order (arena.h's best
// fit), so that value after value takes the memory of values that stream is
// done with.
//
// A value is placed in its stream's arena when the task that writes it and
// every task that reads it are on that stream: stream order then puts a
// later writer of its block after its last reader. A value used on two
// streams (a branch's input, a graph output copied on the copy stream) is
// placed in one more arena, shared, whose blocks pass from value to value
// only where every task that used the block's value is ordered before the
// new value's writer by stream order and events (happens_before.h): no
// timing of the streams lets them overlap. Before the arenas, a run held
// every value of the graph to the iteration's end (googlenet: 24 MB of
// tensors where the compiler's plan needs 3.8); before the shared arena,
// googlenet on two streams held 11.1 MB, its branches' inputs each in
// memory of its own.
//
//   const StreamArenas plan = PlanStreamArenas(compiled, schedule);
//   // plan.places.at("conv1_out"): {stream 0, offset 0, 802816 bytes}
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/ir/ir.h"
#include "graph/runtime/scheduler.h"

namespace opscope::graph {

struct ValuePlace {
  int stream = 0;  // the arena: a stream's, or num_streams() for the shared one
  int64_t offset = 0;  // bytes into the stream's arena, 64-byte aligned
  int64_t bytes = 0;   // the block: the value's bytes rounded up to 64
};

struct StreamArenas {
  std::vector<int64_t> arena_bytes;                    // by schedule stream id, then the shared arena
  std::unordered_map<std::string, ValuePlace> places;  // the values placed
  int64_t total_bytes() const;
};

// Kernel outputs with a known size are placed; constants, graph inputs and
// values of unknown size are not.
StreamArenas PlanStreamArenas(const Graph& compiled, const Schedule& schedule);

// A task that runs a node's kernel (not a copy).
bool IsKernelTask(const ScheduledTask& t);
// The values task `t` reads: a kernel's inputs (once per place it takes
// one), a copy to the host's source.
std::vector<std::string> ReadsOf(const Graph& compiled, const ScheduledTask& t);

}  // namespace opscope::graph
