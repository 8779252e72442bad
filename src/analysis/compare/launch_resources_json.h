// File: analysis/compare/launch_resources_json.h
// A device kernel's resources as JSON members (registers_per_thread,
// shared_bytes_per_block, active_blocks_per_sm, occupancy), the ones its
// backend told; a host kernel has none and gets none. One writer for
// report.json's and profile's launches (KernelLaunchInfo) and timeline.json's
// kernel args (the recorder's LaunchEntry::Launch), which carry the same fields.
#pragma once

#include <nlohmann/json.hpp>

namespace opscope {

template <typename Launch>
void AddLaunchResources(const Launch& l, nlohmann::json& out) {
  if (l.registers_per_thread >= 0) out["registers_per_thread"] = l.registers_per_thread;
  if (l.shared_bytes_per_block >= 0) out["shared_bytes_per_block"] = l.shared_bytes_per_block;
  if (l.active_blocks_per_sm >= 0) out["active_blocks_per_sm"] = l.active_blocks_per_sm;
  if (l.occupancy >= 0) out["occupancy"] = l.occupancy;
}

}  // namespace opscope
