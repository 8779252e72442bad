// File: analysis/diagnose/attribution.h
// The attribution engine: rules over the snapshot, each firing a cause with
// a confidence, the evidence that fired it (facts and numbers from the
// records) and the direction of a fix; ranked most likely first. A rule
// that lacks its evidence stays quiet: a correct run gets no cause.
//
//   AttributionInput in{.diagnosis = &d, .crash = &ring.header.crash, .races = &races, .failing = idx};
//   d.causes = Attribute(in);
#pragma once

#include <vector>

#include "analysis/diagnose/race_check.h"
#include "capture/flight_ring.h"
#include "opscope/diagnose.h"

namespace opscope {

struct AttributionInput {
  const Diagnosis* diagnosis = nullptr;  // status, signal, trajectory, threads, stderr
  const CrashRecord* crash = nullptr;    // nullptr: the ring had none (no recorder, or no fault)
  const RaceCheckResult* races = nullptr;
  int failing = -1;                      // index into diagnosis->trajectory
};

std::vector<DiagCause> Attribute(const AttributionInput& in);

// A tensor as the causes and the text name it: "float32[4,256]".
std::string ShapeText(const DiagTensor& t);

// Values at or past this magnitude are "extreme": overflow is near, or came.
inline constexpr double kExtremeMagnitude = 1e30;

}  // namespace opscope
