#include <nlohmann/json.hpp>

#include "analysis/profile/timeline.h"
#include "analysis/compare/launch_resources_json.h"
#include "core/json_text.h"
#include "core/text_format.h"
#include "core/trace_event.h"

namespace opscope {

namespace {

constexpr int kHostPid = 1, kDevicePid = 2;

nlohmann::json Dims(const int64_t d[3]) { return nlohmann::json::array({d[0], d[1], d[2]}); }

nlohmann::json Buffers(const LaunchEntry::BufferRef* refs, int n) {
  nlohmann::json out = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", refs[i].ptr);
    out.push_back({{"address", addr}, {"bytes", refs[i].bytes}});
  }
  return out;
}

// The kernel's args: what the issue of a slow kernel is read from.
nlohmann::json KernelArgs(const TimelineInput& in, const ProfiledCall& c) {
  const LaunchEntry& e = c.entry;
  nlohmann::json args = {{"op", in.op}, {"op_id", ShortHex(in.instance_op_id)}, {"launch_op_id", ShortHex(c.op_id)},
                         {"seq", c.seq}, {"iteration", c.iteration}, {"kernel", e.kernel},
                         {"inputs", Buffers(e.reads, e.num_reads)}, {"outputs", Buffers(e.writes, e.num_writes)}};
  nlohmann::json launches = nlohmann::json::array();
  for (int k = 0; k < e.num_launches; ++k) {
    const LaunchEntry::Launch& l = e.launches[k];
    launches.push_back({{"name", l.name}, {"grid", Dims(l.grid)}, {"block", Dims(l.block)}, {"vector_width", l.vector_width}});
    AddLaunchResources(l, launches.back());
  }
  args["launches"] = launches;
  if (e.num_launches > 0) {  // the first launch's config at the top, where viewers look
    args["grid"] = launches[0]["grid"];
    args["block"] = launches[0]["block"];
    args["vector_width"] = launches[0]["vector_width"];
    for (const char* k : {"registers_per_thread", "shared_bytes_per_block", "active_blocks_per_sm", "occupancy"}) {
      if (launches[0].contains(k)) args[k] = launches[0][k];
    }
  }
  if (const OpProfile* p = in.profile; p && p->cost) {
    args["bytes_read"] = p->cost->bytes_read;
    args["bytes_written"] = p->cost->bytes_written;
    args["flops"] = p->cost->flops;
    const double us = e.device_us();
    const RooflinePoint r = Roofline(p->cost, p->dtype, us, p->peaks);
    args["bound"] = BoundName(r.bound);
    args["lower_bound_us"] = r.lower_bound_us;
    if (r.efficiency() >= 0) args["efficiency"] = r.efficiency();
    if (const AboveRoof a = AboveRoofOf(r); a != AboveRoof::kNo) args["above_roof"] = AboveRoofName(a);
  }
  return args;
}

}  // namespace

std::string ProfileTimelineJson(const TimelineInput& in) {
  nlohmann::json events = nlohmann::json::array();
  const int64_t t0 = in.calls.empty() ? 0 : in.calls.front().api_begin_ns;
  auto us = [t0](int64_t host_ns) { return (host_ns - t0) / 1e3; };
  events.push_back(trace_event::Metadata(kHostPid, 0, "process_name", "host"));
  events.push_back(trace_event::Metadata(kDevicePid, 0, "process_name", in.device));
  std::vector<int> host_tids, stream_tids;
  auto note = [&](std::vector<int>& seen, int pid, int tid, const std::string& name) {
    if (std::find(seen.begin(), seen.end(), tid) != seen.end()) return;
    seen.push_back(tid);
    events.push_back(trace_event::Metadata(pid, tid, "thread_name", name));
  };
  int64_t flow_id = 1;
  for (const ProfiledCall& c : in.calls) {
    const int host_tid = c.has_entry ? static_cast<int>(c.entry.thread_index) + 1 : 1;
    note(host_tids, kHostPid, host_tid, "host thread " + std::to_string(host_tid));
    const std::string op_id = ShortHex(in.instance_op_id);
    events.push_back(trace_event::Complete(kHostPid, host_tid, in.op, "api", us(c.api_begin_ns),
                                           (c.api_end_ns - c.api_begin_ns) / 1e3,
                                           {{"op", in.op}, {"op_id", op_id}, {"seq", c.seq}, {"iteration", c.iteration}}));
    for (int p = 0; p < kDispatchPhaseCount && c.times.timed(); ++p) {
      if (c.times.end_ns[p] == 0) continue;
      const int64_t from = c.times.PhaseBeginNs(p);
      const std::string phase = DispatchPhaseName(static_cast<DispatchPhase>(p));
      events.push_back(trace_event::Complete(kHostPid, host_tid, phase, "phase", us(from), (c.times.end_ns[p] - from) / 1e3,
                                             {{"op_id", op_id}, {"phase", phase}}));
    }
    if (c.readback_end_ns) {
      const int64_t from = c.times.end_ns[static_cast<int>(DispatchPhase::kFinish)];
      events.push_back(trace_event::Complete(kHostPid, host_tid, "read back", "phase", us(from),
                                             (c.readback_end_ns - from) / 1e3, {{"op_id", op_id}, {"phase", "read back"}}));
    }
    if (!c.has_entry || !c.entry.has_device_times()) continue;
    const int stream_tid = c.entry.stream_id + 1;
    note(stream_tids, kDevicePid, stream_tid, "stream " + std::to_string(c.entry.stream_id));
    const double k_ts = us(c.entry.device_start_ns - in.device_clock_offset_ns);
    events.push_back(trace_event::Complete(kDevicePid, stream_tid, c.entry.kernel, "kernel", k_ts,
                                           (c.entry.device_end_ns - c.entry.device_start_ns) / 1e3, KernelArgs(in, c)));
    // The arrow leaves the call where it handed the kernel over.
    const int64_t handoff = c.times.timed() ? c.times.PhaseBeginNs(static_cast<int>(DispatchPhase::kEnqueue))
                                            : c.api_begin_ns;
    events.push_back(trace_event::FlowStart(flow_id, kHostPid, host_tid, us(handoff), "launch", "launch"));
    events.push_back(trace_event::FlowEnd(flow_id, kDevicePid, stream_tid, k_ts, "launch", "launch"));
    ++flow_id;
  }
  nlohmann::json doc = {{"schema", "opscope.timeline/1"}, {"displayTimeUnit", "ns"}, {"traceEvents", events}};
  return JsonText(doc, 1) + "\n";
}

}  // namespace opscope
