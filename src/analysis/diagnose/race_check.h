// File: analysis/diagnose/race_check.h
// Races between streams, from the flight recorder's records alone, on any
// backend: two accesses (kernel launches, copies) on different streams whose
// address ranges overlap, at least one writing, with no happens-before path
// between them. Happens-before is built the way the hardware orders work:
// program order on each stream, an event's record before its waits, and the
// host's synchronisations (a host thread that waited for a stream orders
// that stream's earlier work before everything it enqueues afterwards).
// Sync points inserted by diagnose are not in the records, so a race is
// found even when diagnose's own waits kept it from doing harm this time.
//
//   std::vector<Race> races = FindRaces(ring);
//   for (const Race& r : races) ... r.first, r.second index ring-order accesses
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "capture/flight_ring.h"

namespace opscope {

// One access to memory as the race check replays it.
struct StreamAccess {
  uint64_t seq = 0;
  std::string stream;  // "cpu/1"
  std::string what;    // "kernel relu_cpu (op Relu, op_id 4f…)" / "copy 4096 bytes (issued by op x)"
  std::string op, kernel, op_id;
  uint64_t op_id_raw = 0;  // op_id in full (0: a copy the host issued), to map an access back to its caller's task
  bool is_launch = true;
  std::vector<FlightRange> reads, writes;
  std::vector<std::string> read_names, write_names;  // tensor names where known
};

struct Race {
  StreamAccess first, second;  // first enqueued first
  uint64_t begin = 0, bytes = 0;  // the overlap
  bool first_writes = false, second_writes = false;
  std::string first_tensor, second_tensor;  // the names each side gives the buffer
};

// Races among the records the ring still holds. Pairs older than the oldest
// synchronisation record kept are not judged (their ordering may have been
// pushed out of the ring): `judged_from_seq` says where judging began.
struct RaceCheckResult {
  std::vector<Race> races;
  uint64_t judged_from_seq = 0;
  size_t accesses = 0;
};
RaceCheckResult FindRaces(const FlightRingData& ring);

}  // namespace opscope
