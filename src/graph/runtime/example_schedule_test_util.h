// File: graph/runtime/example_schedule_test_util.h
// For the runtime's tests: one of the repo's example models, compiled and
// scheduled on a number of compute streams, with its per-stream arenas.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/runtime/scheduler.h"
#include "graph/runtime/stream_arenas.h"

namespace opscope::graph {

struct PlannedExample {
  Model model;
  Schedule schedule;
  StreamArenas plan;
};

inline PlannedExample PlanExample(const std::string& name, int streams) {
  PlannedExample p;
  auto imported = ImportOnnx(std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/" + name);
  EXPECT_TRUE(imported.ok()) << imported.status().ToString();
  if (!imported.ok()) return p;
  p.model = std::move(imported).value();
  EXPECT_TRUE(Compile(p.model).ok());
  auto s = ScheduleGraph(p.model.compiled, {.compute_streams = streams});
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return p;
  p.schedule = std::move(s).value();
  p.plan = PlanStreamArenas(p.model.compiled, p.schedule);
  return p;
}

}  // namespace opscope::graph
