// File: graph/runtime/run_races.h
// The race check of `ops-debug diagnose` (analysis/diagnose/race_check.h)
// over a graph run: while the executor runs its last iteration, a flight
// recorder (capture/flight_recorder.h) takes every kernel launch, event
// record and wait, copy and host synchronisation into a scratch ring file;
// once the streams are synchronised, FindRaces replays them and each access
// is mapped back to the task (and node) that made it.
//
// Neither sync points nor tensor summaries are turned on: the run keeps its
// asynchrony, and the recorder's cost is a few stores per launch and per
// event. Under ops-debug diagnose (FlightRecorder::Active()) nothing is
// started: diagnose records the whole process and runs the same check.
//
//   std::string skipped;
//   OPSCOPE_ASSIGN_OR_RETURN(auto rec, RaceRecording::Start("OUT/.flight.ring", schedule, &skipped));
//   ... enqueue the tasks, synchronise every stream ...
//   RaceCheckOutcome out = rec ? rec->Finish(graph, schedule, copy_tasks) : RaceCheckOutcome{.skipped = skipped};
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "capture/flight_recorder.h"
#include "core/json_field.h"
#include "graph/ir/ir.h"
#include "graph/runtime/scheduler.h"
#include "opscope/model.h"

namespace opscope::graph {

// The scratch ring of `inspector-cli run` in its output folder, removed once
// judged: the verdict is in summary.json and capture.json, and a ring
// outside ops-debug diagnose has no crash record worth keeping.
inline constexpr char kRaceRingFile[] = ".flight.ring";

// Launch slots per stream that hold every launch of one iteration of
// `schedule`: its busiest stream's kernel tasks, twice over for kernels that
// launch ops of their own, within the recorder's limit.
uint32_t RaceRingSlots(const Schedule& schedule);

class RaceRecording {
 public:
  // Creates the ring at `ring_path` and registers the recorder as dispatcher
  // hook and stream observer. Returns nullptr, saying why in `skipped`, when
  // another recorder already records this process.
  static StatusOr<std::unique_ptr<RaceRecording>> Start(const std::string& ring_path, const Schedule& schedule,
                                                        std::string* skipped);
  ~RaceRecording();  // stops recording if Finish did not, and removes the ring file
  RaceRecording(const RaceRecording&) = delete;
  RaceRecording& operator=(const RaceRecording&) = delete;

  // Stops recording and judges what the ring holds. Every stream must be
  // synchronised. `copy_tasks`: a copy task's destination address -> its task
  // id (a host-issued copy carries no op_id).
  RaceCheckOutcome Finish(const Graph& compiled, const Schedule& schedule,
                          const std::unordered_map<uint64_t, int64_t>& copy_tasks);

 private:
  RaceRecording(std::string path, std::shared_ptr<FlightRecorder> recorder, uint32_t slots);
  void Stop();

  std::string path_;
  std::shared_ptr<FlightRecorder> recorder_;
  uint32_t slots_ = 0;
  int hook_id_ = -1;
};

// "task 5 'relu_a' (Relu, kernel relu_cpu, stream 1) writes 'a' [256 B at 0x7f..], task 7 ... reads ...: no event orders them"
std::string RaceText(const StreamRace& race);

// {"ran", "skipped", "accesses", "sync_records", "ring_slots", "unjudged", "races": [...]}
nlohmann::json RaceCheckJson(const RaceCheckOutcome& outcome);
// A wrong field is recorded in j's JsonFields (core/json_field.h), never thrown.
RaceCheckOutcome RaceCheckFromJson(const JsonField& j);

}  // namespace opscope::graph
