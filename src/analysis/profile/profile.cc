// ProfileOpInstance (opscope/profile.h): the op instance run and judged
// once by the op harness, then timed call by call through the dispatcher.
#include "opscope/profile.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include "analysis/profile/cache_flush.h"
#include "analysis/profile/timeline.h"
#include "capture/dispatcher.h"
#include "capture/recorder.h"
#include "core/clock.h"
#include "opscope/calibrate.h"
#include "opscope/npy.h"
#include "opscope/plugin.h"
#include "ops/plugin_hint.h"

namespace opscope {

namespace {

// A file the profile will write: its folder must exist and take files, so a
// long profile does not end in an error (and never in a half-written file).
Status CheckWritable(const std::string& path, const char* flag) {
  if (path.empty()) return Status::Ok();
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) parent = ".";
  if (!std::filesystem::is_directory(parent)) {
    return InvalidArgumentError(std::string(flag) + " " + path + ": no folder " + parent.string());
  }
  // Root passes access(W_OK) even where the filesystem refuses (/proc): a
  // file made and removed again is the only sure answer.
  std::string probe = (parent / ".opscope-probe-XXXXXX").string();
  const int fd = mkstemp(probe.data());
  if (fd < 0) {
    return InvalidArgumentError(std::string(flag) + " " + path + ": folder " + parent.string() + " is not writable");
  }
  close(fd);
  std::filesystem::remove(probe);
  if (std::filesystem::is_directory(path)) {
    return InvalidArgumentError(std::string(flag) + " " + path + ": is a folder, expected a file name");
  }
  return Status::Ok();
}

Status CheckPeak(double v, const char* flag, const char* unit) {
  if (v >= 0 && std::isfinite(v)) return Status::Ok();
  return InvalidArgumentError(std::string(flag) + ": expected a positive number of " + unit + ", got " + std::to_string(v));
}

StatusOr<RoofPeaks> ObtainPeaks(const ProfileRequest& r, std::string& note) {
  if (r.peaks) {
    note = r.peaks->source;
    return *r.peaks;
  }
  OPSCOPE_ASSIGN_OR_RETURN(RoofPeaks peaks, ObtainRoofPeaks(r.run.device, r.peak_bw_gbs, r.peak_gflops));
  note = peaks.source;
  return peaks;
}

// Device clock - host clock, from one event recorded on the idle stream: its
// timestamp against the midpoint of the host's bracket around it.
StatusOr<int64_t> DeviceClockOffset(Device* device) {
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> ev, device->CreateEvent());
  Stream& s = device->default_stream();
  OPSCOPE_RETURN_IF_ERROR(s.Synchronize());
  const int64_t before = SteadyNowNs();
  OPSCOPE_RETURN_IF_ERROR(s.Record(*ev));
  OPSCOPE_RETURN_IF_ERROR(ev->Synchronize());
  const int64_t after = SteadyNowNs();
  OPSCOPE_ASSIGN_OR_RETURN(int64_t device_ns, ev->TimestampNs());
  return device_ns - (before + after) / 2;
}

// The op instance as the harness ran it, ready to dispatch again.
struct Instance {
  const OpSchema* op = nullptr;
  Attrs attrs;
  Device* device = nullptr;
  std::vector<Tensor> inputs;
  int num_outputs = -1;
  std::vector<TensorDesc> in_desc, out_desc;
  Attrs validated;
};

StatusOr<Instance> Rebuild(const OpRunRequest& run, const OpRunReport& report) {
  Instance in;
  OPSCOPE_ASSIGN_OR_RETURN(in.op, LookupTypedOp(run.op));
  OPSCOPE_ASSIGN_OR_RETURN(in.attrs, in.op->ParseAttrs(run.attrs));
  for (const auto& [name, value] : run.attr_values.all()) in.attrs.Set(name, value);
  OPSCOPE_ASSIGN_OR_RETURN(in.device, GetDevice(run.device));
  for (const OpRunInput& i : report.inputs) in.inputs.push_back(i.tensor);
  in.num_outputs = report.outputs.empty() ? run.num_outputs : static_cast<int>(report.outputs.size());
  in.validated = in.attrs;
  OPSCOPE_ASSIGN_OR_RETURN(in.out_desc, Dispatcher::Global().InferOutputs(*in.op, in.inputs, in.validated, in.num_outputs));
  for (const Tensor& t : in.inputs) {
    TensorDesc d;
    if (t.defined()) d = TensorDesc{t.dtype(), t.shape()};
    else d.present = false;
    in.in_desc.push_back(d);
  }
  return in;
}

struct Timed {
  std::vector<ProfiledCall> recorded;
  std::vector<double> unrecorded_api_us;
  std::vector<KernelLaunchInfo> launches;
  int64_t clock_offset_ns = 0;
};

StatusOr<Timed> TimeCalls(const ProfileRequest& r, const Instance& in) {
  const RunOptions plain{.device = in.device, .tunables = r.run.tunables, .num_outputs = in.num_outputs,
                         .fingerprint = false};
  RunOptions recorded_opts = plain;
  recorded_opts.time_phases = r.scope != ProfileScope::kKernel;
  // The recorder's stream events are the device time: none under kApi.
  const bool device_events = r.scope != ProfileScope::kApi;
  std::unique_ptr<CacheFlusher> flusher;
  // The flusher streams through host memory: the host's cache is what it evicts.
  if (r.cold_cache) {
    OPSCOPE_ASSIGN_OR_RETURN(Device* host, GetDevice("cpu"));
    flusher = std::make_unique<CacheFlusher>(host->info().last_level_cache_bytes);
  }
  const bool read_back = !in.device->host_accessible();
  auto recorder = std::make_shared<Recorder>();
  Timed t;

  // One call, as a caller sees it: the dispatch, and the outputs brought to
  // the host where the device's memory is not the host's.
  auto call = [&](bool record, int iteration) -> Status {
    if (flusher) flusher->Flush();
    const int hook = record && device_events ? Dispatcher::Global().AddHook(recorder) : 0;
    const int64_t begin = SteadyNowNs();
    auto run = Dispatcher::Global().Run(*in.op, in.inputs, in.attrs, record ? recorded_opts : plain);
    if (run.ok() && read_back) {
      for (const Tensor& o : run->outputs) {
        if (!o.defined()) continue;
        auto host = ToHost(o);
        if (!host.ok()) { run = std::move(host).status(); break; }
      }
    }
    const int64_t end = SteadyNowNs();
    if (hook != 0) Dispatcher::Global().RemoveHook(hook);
    if (!run.ok()) return std::move(run).status().WithContext("call " + std::to_string(iteration + 1));
    if (!record) {
      t.unrecorded_api_us.push_back((end - begin) / 1e3);
      return Status::Ok();
    }
    t.recorded.push_back(ProfiledCall{.iteration = iteration, .seq = run->seq, .op_id = run->op_id,
                                      .api_begin_ns = begin, .api_end_ns = end, .times = run->times,
                                      .readback_end_ns = read_back && run->times.timed() ? end : 0});
    t.launches = run->launches;
    return Status::Ok();
  };

  for (int w = 0; w < r.warmup; ++w) OPSCOPE_RETURN_IF_ERROR(call(false, -1 - w));
  t.unrecorded_api_us.clear();
  OPSCOPE_ASSIGN_OR_RETURN(t.clock_offset_ns, DeviceClockOffset(in.device));
  for (int i = 0; i < r.iterations; ++i) {
    // Alternate which goes first, so a drift in the machine's speed falls on both.
    const bool recorded_first = i % 2 == 0;
    if (r.measure_overhead && !recorded_first) OPSCOPE_RETURN_IF_ERROR(call(false, i));
    OPSCOPE_RETURN_IF_ERROR(call(true, i));
    if (r.measure_overhead && recorded_first) OPSCOPE_RETURN_IF_ERROR(call(false, i));
  }

  RecorderSnapshot snap = recorder->Snapshot();
  std::map<uint64_t, const LaunchEntry*> by_seq;
  for (const LaunchEntry& e : snap.entries) by_seq[e.seq] = &e;
  for (ProfiledCall& c : t.recorded) {
    auto it = by_seq.find(c.seq);
    if (it == by_seq.end()) continue;
    c.entry = *it->second;
    c.has_entry = true;
  }
  return t;
}

OpProfile Summarize(const ProfileRequest& r, const Instance& in, const Timed& t) {
  OpProfile p;
  p.scope = r.scope;
  p.warmup = r.warmup;
  p.iterations = r.iterations;
  p.cold_cache = r.cold_cache;
  p.launches = t.launches;
  std::vector<double> api, device, queue, rest, readback;
  std::vector<std::vector<double>> phases(kDispatchPhaseCount);
  for (const ProfiledCall& c : t.recorded) {
    const double api_us = (c.api_end_ns - c.api_begin_ns) / 1e3;
    api.push_back(api_us);
    double inside = 0;
    for (int i = 0; i < kDispatchPhaseCount; ++i) {
      phases[i].push_back(c.times.PhaseUs(i));
      inside += c.times.PhaseUs(i);
    }
    if (c.readback_end_ns) {
      const double rb = (c.readback_end_ns - c.times.end_ns[static_cast<int>(DispatchPhase::kFinish)]) / 1e3;
      readback.push_back(rb);
      inside += rb;
    }
    // The call itself around the dispatcher's spans: arguments copied in, the result handed back.
    rest.push_back(std::max(0.0, api_us - inside));
    if (c.has_entry && c.entry.has_device_times()) {
      device.push_back(c.entry.device_us());
      const int64_t handoff = c.times.PhaseBeginNs(static_cast<int>(DispatchPhase::kEnqueue));
      queue.push_back(std::max<int64_t>(0, c.entry.device_start_ns - t.clock_offset_ns - handoff) / 1e3);
    }
  }
  p.api_us = ComputeTimingStats(api);
  p.device_us = ComputeTimingStats(device);
  p.queue_us = ComputeTimingStats(queue);
  // Under kKernel no phase was timed: the API time stays whole.
  if (r.scope != ProfileScope::kKernel) {
    for (int i = 0; i < kDispatchPhaseCount; ++i) {
      p.phases.push_back({DispatchPhaseName(static_cast<DispatchPhase>(i)), ComputeTimingStats(phases[i])});
    }
    if (!readback.empty()) p.phases.push_back({"read back", ComputeTimingStats(readback)});
    p.phases.push_back({"call", ComputeTimingStats(rest)});
  }
  p.unrecorded_api_us = ComputeTimingStats(t.unrecorded_api_us);
  if (r.measure_overhead) p.overhead_us = p.api_us.median - p.unrecorded_api_us.median;
  p.cost = CostOf(*in.op, in.in_desc, in.out_desc, in.validated);
  p.dtype = in.out_desc.empty() ? DType::kF32 : in.out_desc[0].dtype;
  return p;
}

}  // namespace

const char* ProfileScopeName(ProfileScope s) {
  switch (s) {
    case ProfileScope::kFull: return "full";
    case ProfileScope::kKernel: return "kernel";
    case ProfileScope::kApi: return "api";
  }
  return "?";
}

StatusOr<ProfileScope> ParseProfileScope(std::string_view text) {
  for (ProfileScope s : {ProfileScope::kFull, ProfileScope::kKernel, ProfileScope::kApi}) {
    if (text == ProfileScopeName(s)) return s;
  }
  return InvalidArgumentError("scope '" + std::string(text) +
                              "': expected full (API phases and device time), kernel (device time only) or api "
                              "(host phases only)");
}

StatusOr<OpRunReport> ProfileOpInstance(const ProfileRequest& r) {
  if (r.iterations < 1) return InvalidArgumentError("iterations: expected at least 1 call to time, got " + std::to_string(r.iterations));
  if (r.warmup < 0) return InvalidArgumentError("warmup: expected 0 or more calls, got " + std::to_string(r.warmup));
  OPSCOPE_RETURN_IF_ERROR(CheckPeak(r.peak_bw_gbs, "peak_bw_gbs", "GB/s"));
  OPSCOPE_RETURN_IF_ERROR(CheckPeak(r.peak_gflops, "peak_gflops", "GFLOP/s"));
  OPSCOPE_RETURN_IF_ERROR(CheckWritable(r.timeline, "timeline"));
  OPSCOPE_RETURN_IF_ERROR(CheckWritable(r.run.report, "report"));

  // Correctness first, through the harness; its report gets the profile section.
  OpRunRequest run = r.run;
  run.report.clear();
  OPSCOPE_ASSIGN_OR_RETURN(OpRunReport report, RunOpInstance(run));
  if (!report.kernel_error.empty()) {
    if (!r.run.report.empty()) {
      OPSCOPE_RETURN_IF_ERROR(WriteOpReport(r.run.report, report));
      report.report_file = r.run.report;
    }
    return report;  // nothing to time: the report says why
  }
  OpProfile profile;
  OPSCOPE_ASSIGN_OR_RETURN(RoofPeaks peaks, ObtainPeaks(r, profile.peaks_note));
  OPSCOPE_ASSIGN_OR_RETURN(Instance in, Rebuild(run, report));
  auto timed = TimeCalls(r, in);
  if (!timed.ok()) {
    report.kernel_error = "profile: " + timed.status().ToString();
    return report;
  }
  const std::string note = profile.peaks_note;
  profile = Summarize(r, in, *timed);
  profile.peaks = peaks;
  profile.peaks_note = note;
  profile.roofline = Roofline(profile.cost, profile.dtype, profile.device_us.count ? profile.device_us.median : -1, peaks);
  // Alone, the op instance is the whole run: it is its own critical path.
  const SuspectNode node{.name = in.op->name, .op = in.op, .inputs = in.in_desc, .outputs = in.out_desc,
                         .attrs = in.validated, .launches = profile.launches, .roofline = profile.roofline,
                         .on_critical_path = true};
  // Without a device time (kApi) there is no loss to rank.
  if (profile.device_us.count > 0) profile.suspects = NodeSuspects(node, in.device->info().compute_units);
  if (!r.timeline.empty()) {
    TimelineInput tl{.op = in.op->name, .device = in.device->name(), .instance_op_id = report.op_id,
                     .device_clock_offset_ns = timed->clock_offset_ns, .calls = timed->recorded, .profile = &profile};
    profile.timeline_json = ProfileTimelineJson(tl);
    OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(r.timeline, profile.timeline_json).WithContext("timeline"));
    profile.timeline_file = r.timeline;
  }
  report.profile = std::move(profile);
  if (!r.run.report.empty()) {
    OPSCOPE_RETURN_IF_ERROR(WriteOpReport(r.run.report, report));
    report.report_file = r.run.report;
  }
  return report;
}

}  // namespace opscope
