// File: analysis/diagnose/snapshot.h
// The flight recorder's ring, read back by the parent, turned into the
// diagnosis's snapshot: the trajectory of every stream's last records in
// enqueue order, and which launch the diagnosis is about.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "capture/flight_ring.h"
#include "opscope/diagnose.h"

namespace opscope {

// Every record the ring holds, launches and synchronisation records merged
// in enqueue order; times in µs since the recorder started. A launch with no
// end is "started, never finished" unless a later launch on its stream
// finished (stream order: it finished too, its end just was not seen).
std::vector<DiagLaunch> BuildTrajectory(const FlightRingData& ring);

// The launch the program was in when it stopped, as an index into the
// trajectory, or -1. A crash, hang or kill: the earliest started and never
// finished, else the last failed one; an error exit: the last failed or
// refused one (an error status, a shape), else the earliest unfinished.
int FindFailingLaunch(const std::vector<DiagLaunch>& trajectory, DiagnosisStatus status);

DiagTensor ToDiagTensor(const FlightTensor& t, const std::string& role);

}  // namespace opscope
