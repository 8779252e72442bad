#include "analysis/diagnose/snapshot.h"

#include <cstdio>
#include <map>

#include "core/text_format.h"
#include "opscope/dtype.h"

namespace opscope {


DiagTensor ToDiagTensor(const FlightTensor& t, const std::string& role) {
  DiagTensor d;
  d.role = role;
  d.name = t.name;
  d.dtype = t.dtype >= 0 ? DTypeName(static_cast<DType>(t.dtype)) : "";
  for (int i = 0; i < t.rank && i < kFlightMaxRanks; ++i) d.shape.push_back(t.dims[i]);
  d.address = t.address;
  d.bytes = t.bytes;
  d.fingerprint = role == "input" && t.fingerprint ? Hex16(t.fingerprint) : "";
  d.has_stats = t.has_stats != 0;
  d.count = t.count, d.nan = t.nan, d.inf = t.inf;
  d.min = t.min, d.max = t.max, d.mean = t.mean;
  if (t.first_bad >= 0) {
    int64_t rest = t.first_bad;
    d.first_bad.assign(d.shape.size(), 0);
    for (int i = static_cast<int>(d.shape.size()) - 1; i >= 0; --i) {
      if (d.shape[i] > 0) d.first_bad[i] = rest % d.shape[i], rest /= d.shape[i];
    }
  }
  d.row = t.row;
  d.row_min = t.row_min, d.row_max = t.row_max;
  return d;
}

namespace {

const char* SyncKindName(int32_t kind) {
  switch (static_cast<SyncKind>(kind)) {
    case SyncKind::kRecord: return "record";
    case SyncKind::kWait: return "wait";
    case SyncKind::kMemcpy: return "memcpy";
    case SyncKind::kStreamSync: return "stream sync";
    case SyncKind::kEventSync: return "event sync";
    case SyncKind::kDeviceSync: return "device sync";
    case SyncKind::kAllocate: return "allocate";
    case SyncKind::kNone: break;
  }
  return "?";
}

}  // namespace

std::vector<DiagLaunch> BuildTrajectory(const FlightRingData& ring) {
  const int64_t t0 = ring.header.start_ns;
  auto us = [&](int64_t ns) { return ns > 0 ? static_cast<double>(ns - t0) / 1e3 : -1.0; };
  std::vector<DiagLaunch> out;
  size_t li = 0, si = 0;
  while (li < ring.launches.size() || si < ring.syncs.size()) {
    const bool take_launch =
        si >= ring.syncs.size() || (li < ring.launches.size() && ring.launches[li].seq < ring.syncs[si].seq);
    DiagLaunch d;
    if (take_launch) {
      const LaunchSlot& l = ring.launches[li++];
      d.seq = l.seq;
      d.kind = "launch";
      d.op = l.op, d.kernel = l.kernel, d.device = l.device, d.attrs = l.attrs, d.error = l.error;
      d.op_id = ShortHex(l.op_id);
      d.instance_key = l.instance_key ? Hex16(l.instance_key) : "";
      d.input_fingerprint = l.input_fingerprint ? Hex16(l.input_fingerprint) : "";
      d.stream_id = l.stream_id;
      switch (static_cast<FlightState>(l.state)) {
        case FlightState::kFinished: d.state = "finished"; break;
        case FlightState::kFailed: d.state = l.stream_id < 0 && l.kernel[0] == '\0' ? "rejected" : "failed"; break;
        case FlightState::kSide: d.state = "side launch (buffers: the op's tensors and its allocations before it)"; break;
        default: d.state = "started, never finished"; break;
      }
      d.start_us = us(l.start_ns);
      d.end_us = us(l.end_ns);
      if (l.grid[0] > 0) {
        d.grid = {l.grid[0], l.grid[1], l.grid[2]};
        d.block = {l.block[0], l.block[1], l.block[2]};
        d.vector_width = l.vector_width;
      }
      for (int i = 0; i < l.num_inputs && i < kFlightMaxTensors; ++i) d.tensors.push_back(ToDiagTensor(l.inputs[i], "input"));
      for (int i = 0; i < l.num_outputs && i < kFlightMaxTensors; ++i) d.tensors.push_back(ToDiagTensor(l.outputs[i], "output"));
    } else {
      const SyncRecord& y = ring.syncs[si++];
      d.seq = y.seq;
      d.kind = SyncKindName(y.kind);
      d.device = y.device;
      d.stream_id = y.stream_id;
      d.op = y.op;
      d.op_id = y.op_id ? ShortHex(y.op_id) : "";
      d.event = y.event;
      d.state = "enqueued";
      d.start_us = us(y.time_ns);
      if (static_cast<SyncKind>(y.kind) == SyncKind::kAllocate) {
        d.tensors = {DiagTensor{.role = "output", .name = "allocated", .address = y.write.begin, .bytes = y.write.bytes}};
      }
      if (static_cast<SyncKind>(y.kind) == SyncKind::kMemcpy) {
        DiagTensor src{.role = "input", .name = "src", .address = y.read.begin, .bytes = y.read.bytes};
        DiagTensor dst{.role = "output", .name = "dst", .address = y.write.begin, .bytes = y.write.bytes};
        d.tensors = {src, dst};
      }
    }
    out.push_back(std::move(d));
  }
  // Stream order: a launch followed on its stream by a finished one finished too.
  std::map<std::string, bool> later_finished;
  for (auto it = out.rbegin(); it != out.rend(); ++it) {
    if (it->kind != "launch" || it->stream_id < 0) continue;
    const std::string key = it->device + "/" + std::to_string(it->stream_id);
    if (it->state == "finished") later_finished[key] = true;
    else if (it->state == "started, never finished" && later_finished[key]) it->state = "finished";
  }
  return out;
}

int FindFailingLaunch(const std::vector<DiagLaunch>& trajectory, DiagnosisStatus status) {
  auto last_failed = [&] {
    for (int i = static_cast<int>(trajectory.size()) - 1; i >= 0; --i) {
      const DiagLaunch& d = trajectory[i];
      if (d.kind == "launch" && (d.state == "failed" || d.state == "rejected")) return i;
    }
    return -1;
  };
  auto first_unfinished = [&] {
    for (int i = 0; i < static_cast<int>(trajectory.size()); ++i) {
      if (trajectory[i].kind == "launch" && trajectory[i].state == "started, never finished") return i;
    }
    return -1;
  };
  if (status == DiagnosisStatus::kError) {
    const int f = last_failed();
    return f >= 0 ? f : first_unfinished();
  }
  const int u = first_unfinished();
  return u >= 0 ? u : last_failed();
}

}  // namespace opscope
