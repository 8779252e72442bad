// The op harness (opscope/harness.h): everything `ops-debug run` does
// between parsing its flags and printing, as one library call.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <filesystem>
#include <map>

#include "analysis/harness/determinism.h"
#include "analysis/harness/golden.h"
#include "analysis/harness/inputs.h"
#include "analysis/harness/readback.h"
#include "analysis/harness/kernel_watchdog.h"
#include "capture/dispatch_steps.h"
#include "capture/flight_recorder.h"  // kDiagnoseEnv
#include "capture/output_canary.h"
#include "device/guard_recovery.h"
#include "analysis/harness/repro.h"
#include "analysis/harness/sum_tolerance.h"
#include "capture/dispatcher.h"
#include "capture/op_instance.h"
#include "core/file_util.h"
#include "core/text_format.h"
#include "opscope/harness.h"
#include "opscope/npy.h"
#include "opscope/plugin.h"
#include "ops/plugin_hint.h"

namespace opscope {

namespace {

// Turns checked allocation off again on the way out, so a library caller's
// device is left as it was found.
class CheckedAllocationScope {
 public:
  CheckedAllocationScope(Device* d, bool on) : device_(on && !d->checked_allocation() ? d : nullptr) {}
  ~CheckedAllocationScope() { if (device_) (void)device_->SetCheckedAllocation(false); }

 private:
  Device* device_;
};

// A tunable's declared values are the ones its kernels are written (and
// swept) for: another value is refused, not silently run.
Status CheckTunables(const OpSchema& op, const std::map<std::string, int64_t>& tunables) {
  for (const auto& [name, value] : tunables) {
    const TunableDef* t = op.FindTunable(name);
    if (t == nullptr) {
      const std::string have = JoinMapped(op.tunables, ", ", [](const TunableDef& d) { return d.name; });
      return InvalidArgumentError("tunables: op " + op.name + " has no tunable '" + name + "'" +
                                  (have.empty() ? " (it has none)" : " (it has: " + have + ")"));
    }
    if (t->values.empty() || std::find(t->values.begin(), t->values.end(), value) != t->values.end()) continue;
    const std::string values = JoinMapped(t->values, ", ", [](int64_t v) { return std::to_string(v); });
    return InvalidArgumentError("tunables: op " + op.name + "'s tunable '" + name + "' takes " + values + "; " +
                                std::to_string(value) + " is not one of them");
  }
  return Status::Ok();
}

// -1 (the op's required outputs) or a count the schema allows.
Status CheckOutputCount(const OpSchema& op, int n) {
  if (n < 0) return Status::Ok();
  int lo = 0, hi = 0;
  for (const ArgDef& a : op.outputs) {
    lo += a.kind == ArgDef::Kind::kSingle ? 1 : 0;
    hi = a.kind == ArgDef::Kind::kVariadic ? INT32_MAX : hi == INT32_MAX ? hi : hi + 1;
  }
  if (n >= lo && n <= hi) return Status::Ok();
  const std::string range = lo == hi ? std::to_string(lo) : hi == INT32_MAX ? "at least " + std::to_string(lo)
                                                                            : std::to_string(lo) + " to " + std::to_string(hi);
  return InvalidArgumentError("num_outputs: op " + op.name + " has " + range + " output(s), " + std::to_string(n) +
                              " asked for (a file per output in `expected_files` sets the count)");
}

StatusOr<std::vector<Tensor>> HostOutputs(const std::vector<Tensor>& outputs) {
  std::vector<Tensor> host;
  for (const Tensor& t : outputs) {
    if (!t.defined()) { host.push_back(t); continue; }
    OPSCOPE_ASSIGN_OR_RETURN(Tensor h, ToHost(t));
    // A host-accessible device hands back its own buffer: keep a copy, the
    // next repeat writes into fresh outputs anyway but this must not alias.
    if (h.raw_data() == t.raw_data()) {
      OPSCOPE_ASSIGN_OR_RETURN(h, h.Clone());
    }
    host.push_back(std::move(h));
  }
  return host;
}

// Kernel and reference hits of the same name and order, side by side.
std::vector<TraceComparison> CompareTracepoints(const std::vector<TracepointHit>& hits, uint64_t kernel_id,
                                                uint64_t reference_id) {
  std::vector<TraceComparison> out;
  for (const TracepointHit& k : hits) {
    if (k.reference || k.op_id != kernel_id) continue;
    for (const TracepointHit& r : hits) {
      if (!r.reference || r.op_id != reference_id || r.name != k.name || r.order != k.order) continue;
      TraceComparison c{.name = k.name, .order = k.order};
      const Tolerance tol = DefaultTolerance(k.dtype);
      auto close = [&](double a, double e) { return std::fabs(a - e) <= tol.atol + tol.rtol * std::fabs(e); };
      if (k.shape != r.shape) {
        c.matches = false, c.detail = "shape " + k.shape.ToString() + " vs " + r.shape.ToString();
      } else if (k.nan_count != r.nan_count || k.inf_count != r.inf_count) {
        c.matches = false;
        c.detail = "NaN " + std::to_string(k.nan_count) + " vs " + std::to_string(r.nan_count) + ", Inf " +
                   std::to_string(k.inf_count) + " vs " + std::to_string(r.inf_count);
      } else if (!close(k.mean, r.mean) || !close(k.min, r.min) || !close(k.max, r.max)) {
        c.matches = false;
        c.detail = "mean " + ShortNum(k.mean) + " vs " + ShortNum(r.mean) + ", min " + ShortNum(k.min) + " vs " + ShortNum(r.min) +
                   ", max " + ShortNum(k.max) + " vs " + ShortNum(r.max);
      } else {
        for (size_t i = 0; i < k.first.size() && i < r.first.size(); ++i) {
          if (close(k.first[i], r.first[i]) || (std::isnan(k.first[i]) && std::isnan(r.first[i]))) continue;
          c.matches = false;
          c.detail = "element " + std::to_string(i) + ": " + ShortNum(k.first[i]) + " vs " + ShortNum(r.first[i]);
          break;
        }
      }
      if (c.matches) c.detail = "mean " + ShortNum(k.mean) + ", min " + ShortNum(k.min) + ", max " + ShortNum(k.max);
      out.push_back(std::move(c));
    }
  }
  return out;
}

// "y: 1 element written past the end (y[1000], value 0.75; caught by the guard page)", as the canaries say it.
std::string GuardedText(const std::string& name, const Tensor& t, const GuardedAccess& g) {
  const auto width = static_cast<int64_t>(t.element_size());
  const auto offset = static_cast<int64_t>(g.address) - static_cast<int64_t>(g.begin);
  const int64_t element = offset >= 0 ? offset / width : -((-offset + width - 1) / width);
  const std::string at = name + "[" + std::to_string(element) + "]";
  if (!g.write) {
    return name + ": read " + (g.beyond_end() ? "past the end" : "before the start") + " (first at " + at +
           "; caught by the guard page)";
  }
  if (!g.beyond_end()) return name + ": written before the start (first at " + at + "; caught by the guard page)";
  // The elements past the end that hold anything: the page was zeros when opened.
  int64_t written = 0;
  std::string first_value;
  for (size_t k = 0; k + static_cast<size_t>(width) <= g.past_end.size(); k += static_cast<size_t>(width)) {
    bool any = false;
    for (int64_t b = 0; b < width; ++b) any = any || g.past_end[k + static_cast<size_t>(b)] != 0;
    if (!any) continue;
    if (written++ == 0) {
      auto one = Tensor::Empty(t.dtype(), Shape({1}));
      if (one.ok()) {
        std::memcpy(one->raw_data(), g.past_end.data() + k, static_cast<size_t>(width));
        first_value = ", value " + ShortNum(one->FlatGetAsDouble(0));
      }
    }
  }
  return name + ": " + std::to_string(std::max<int64_t>(written, 1)) + (written > 1 ? " elements" : " element") +
         " written past the end (" + at + first_value + "; caught by the guard page)";
}

}  // namespace

bool OpRunReport::passed() const {
  if (!kernel_error.empty() || !nondeterminism.empty()) return false;
  for (const OpRunOutput& o : outputs) {
    if (!o.passed()) return false;
  }
  return true;
}

const char* RunStatusName(RunStatus s) {
  switch (s) {
    case RunStatus::kPassed: return "passed";
    case RunStatus::kFailed: return "failed";
    case RunStatus::kNondeterministic: return "nondeterministic";
    case RunStatus::kError: return "error";
  }
  return "error";
}

RunStatus OpRunReport::status() const {
  if (!kernel_error.empty()) return RunStatus::kError;
  if (!nondeterminism.empty()) return RunStatus::kNondeterministic;
  return passed() ? RunStatus::kPassed : RunStatus::kFailed;
}

double OpRunReport::median_us() const {
  if (repeat_us.empty()) return -1;
  std::vector<double> v = repeat_us;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

StatusOr<OpRunReport> RunOpInstance(const OpRunRequest& request) {
  for (const std::string& path : request.plugins) {
    auto p = LoadPlugin(path);
    if (!p.ok()) return std::move(p).status().WithContext("plugins");
  }
  if (request.op.empty()) return InvalidArgumentError("op: required (an op name; ops-debug list shows them)");
  auto found = LookupTypedOp(request.op);
  if (!found.ok()) return std::move(found).status().WithContext("op");
  const OpSchema& op = **found;
  OPSCOPE_ASSIGN_OR_RETURN(Attrs attrs, op.ParseAttrs(request.attrs));  // its errors name `attrs`
  for (const auto& [name, value] : request.attr_values.all()) attrs.Set(name, value);
  const std::map<std::string, int64_t>& tunables = request.tunables;
  OPSCOPE_RETURN_IF_ERROR(CheckTunables(op, tunables));
  if (request.repeat < 1) return InvalidArgumentError("repeat: must be >= 1, got " + std::to_string(request.repeat));
  const bool expected_given = !request.expected_files.empty() || !request.expected_tensors.empty();
  if (!request.expected_files.empty() && !request.expected_tensors.empty()) {
    return InvalidArgumentError("expected_files: give files or tensors, not both");
  }
  if (expected_given + !request.baseline.empty() + request.reference > 1) {
    return InvalidArgumentError("`reference`, `expected_files` and `baseline`: give one golden (none: the op's reference)");
  }

  auto device_or = GetDevice(request.device);
  if (!device_or.ok()) return std::move(device_or).status().WithContext("device");
  Device* device = *device_or;
  const std::string backend = device->backend();
  if (!op.kernels.count(backend)) {
    std::string have;
    for (const auto& [k, v] : op.kernels) have += (have.empty() ? "" : ", ") + k;
    return InvalidArgumentError("device: op " + op.name + " has no " + backend + " kernel" +
                                (have.empty() ? "" : " (it has: " + have + ")"));
  }
  if (!expected_given && request.baseline.empty() && !op.reference) {
    return InvalidArgumentError("op: op " + op.name +
                                " has no reference kernel to compare with (give `expected_files` or `baseline`)");
  }
  const Readback readback = request.readback;
  OPSCOPE_RETURN_IF_ERROR(CheckReadback(readback, backend));

  OPSCOPE_ASSIGN_OR_RETURN(std::vector<OpRunInput> inputs, BuildInputs(op, request));
  std::vector<Tensor> tensors;
  for (const OpRunInput& in : inputs) tensors.push_back(in.tensor);
  // Attribute types, dtypes and shape inference: all before anything runs.
  // The outputs asked for: as many as the expected tensors given, else the op's required ones.
  int num_outputs = request.num_outputs;
  const size_t expected_count = std::max(request.expected_files.size(), request.expected_tensors.size());
  if (num_outputs >= 0 && expected_given && static_cast<size_t>(num_outputs) != expected_count) {
    return InvalidArgumentError("num_outputs " + std::to_string(num_outputs) + ": but " + std::to_string(expected_count) +
                                " expected tensor(s) were given (one per output)");
  }
  if (num_outputs < 0 && expected_given) num_outputs = static_cast<int>(expected_count);
  OPSCOPE_RETURN_IF_ERROR(CheckOutputCount(op, num_outputs));
  Attrs validated = attrs;
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<TensorDesc> out_desc,
                           Dispatcher::Global().InferOutputs(op, tensors, validated, num_outputs));
  std::vector<std::string> out_names;
  for (size_t i = 0; i < out_desc.size(); ++i) out_names.push_back(OutputName(op, i));
  std::vector<Tolerance> tolerances;
  std::vector<std::string> tolerance_notes;
  // No tolerance given: a long sum of products gets an absolute floor that
  // grows with the sum (sum_tolerance.h).
  const ToleranceSpec& spec = request.tolerance;
  const bool defaults = spec.rule.empty() && !spec.atol && !spec.rtol && !spec.max_ulp;
  for (const TensorDesc& d : out_desc) {
    OPSCOPE_ASSIGN_OR_RETURN(Tolerance t, ResolveTolerance(spec, d.dtype));
    std::string note;
    if (defaults) {
      if (std::optional<SumTolerance> sum = SumRoundingTolerance(op, tensors, validated, d.dtype, t)) {
        t.atol = sum->atol;
        note = sum->note;
      }
    }
    tolerances.push_back(t);
    tolerance_notes.push_back(note);
  }

  // The golden, checked before anything runs.
  GoldenFn golden;
  std::string golden_name = "reference";
  TraceSink sink;
  TraceSink* trace = request.trace ? &sink : nullptr;
  uint64_t reference_op_id = 0;
  if (expected_given) {
    OPSCOPE_ASSIGN_OR_RETURN(std::vector<Tensor> files,
                             request.expected_tensors.empty() ? ReadExpected(request.expected_files, out_desc, out_names)
                                                        : CheckExpected(request.expected_tensors, {}, out_desc, out_names));
    golden_name = "expected files";
    // Files hold the golden of the original inputs only: a cropped reproducer cannot be judged.
    golden = [files, original = tensors](const std::vector<Tensor>& in) -> StatusOr<std::vector<Tensor>> {
      if (in.size() != original.size() || (!in.empty() && in[0].raw_data() != original[0].raw_data())) {
        return InvalidArgumentError("expected_files hold the golden of the original inputs only");
      }
      return files;
    };
  } else if (!request.baseline.empty()) {
    OPSCOPE_ASSIGN_OR_RETURN(Baseline b, ParseBaseline(request.baseline, op, attrs, device, tensors));
    for (size_t i = 0; i < out_desc.size() && i < b.outputs.size(); ++i) {
      if (b.outputs[i].shape == out_desc[i].shape) continue;
      return InvalidArgumentError("baseline '" + request.baseline + "': its output " + std::to_string(i) + " is " +
                                  DTypeName(b.outputs[i].dtype) + b.outputs[i].shape.ToString() + " but " + op.name +
                                  "'s output " + out_names[i] + " is " + DTypeName(out_desc[i].dtype) +
                                  out_desc[i].shape.ToString());
    }
    golden_name = "baseline " + request.baseline;
    golden = [b](const std::vector<Tensor>& in) { return RunBaseline(b, in); };
  } else {
    golden = [&op, attrs, tunables, num_outputs, trace, &reference_op_id](const std::vector<Tensor>& in)
        -> StatusOr<std::vector<Tensor>> {
      auto ref = Dispatcher::Global().Run(op, in, attrs,
                                          RunOptions{.tunables = tunables, .num_outputs = num_outputs, .trace = trace});
      if (!ref.ok()) return std::move(ref).status().WithContext("reference");
      if (!reference_op_id) reference_op_id = ref->op_id;
      return std::move(ref->outputs);
    };
  }

  CheckedAllocationScope checked_scope(device, request.checked);
  if (request.checked) {
    Status st = device->SetCheckedAllocation(true);
    if (!st.ok()) return std::move(st).WithContext("checked");
  }
  OPSCOPE_RETURN_IF_ERROR(PrepareOutputFile(request.report, "report"));
  for (const auto& [dir, flag] : {std::pair{request.save_outputs, "save_outputs"}, std::pair{request.repro_dir, "repro_dir"}}) {
    if (dir.empty()) continue;
    OPSCOPE_RETURN_IF_ERROR(MakeOutputDir(dir, flag));
  }

  OpRunReport report;
  report.op = op.name;
  report.device = device->name();
  report.kernel = op.kernel_names.count(backend) ? op.kernel_names.at(backend) : op.name + "_" + backend;
  report.golden = golden_name;
  report.readback = ReadbackName(readback);
  report.inputs = inputs;
  report.repeats = request.repeat;
  report.repro = ReproCommand(request, op, attrs, inputs, {});
  {
    Attrs keyed = attrs;  // as the dispatcher sees them, defaults filled in
    if (op.ValidateAttrs(keyed).ok()) report.instance_key = OpInstanceKey(op.name, keyed, tensors);
    report.input_fingerprint = InputFingerprint(tensors);
  }

  // Outputs poisoned: an element the kernel never writes fails, whatever a reused buffer held.
  const RunOptions kernel_opts{.device = device, .tunables = tunables, .num_outputs = num_outputs, .trace = trace,
                               .poison_outputs = true};
  // Each launch of the kernel under --timeout; the reference is not watched.
  KernelWatchdog watchdog(request.timeout_s);
  std::string stop_line;
  {
    auto kernel = SelectKernel(op, device);
    std::string why = report.repro;
    if (why.starts_with("ops-debug run")) why.replace(0, 13, "ops-debug diagnose");
    stop_line = "ops-debug: kernel " + (kernel.ok() ? kernel->name : op.name) + " (op " + op.name + " on " +
                device->name() + ") did not finish within " + SecondsText(request.timeout_s) + ": stopped. Why: " + why;
  }
  watchdog.Arm(stop_line);
  // --checked (not under diagnose, which wants the fault itself): a guard
  // page the kernel runs into is opened and named after the launch.
  std::optional<GuardRecovery> guard;
  if (request.checked && std::getenv(kDiagnoseEnv) == nullptr) guard.emplace(device);
  auto run = Dispatcher::Global().Run(op, tensors, attrs, kernel_opts);
  watchdog.Disarm();
  const std::vector<GuardedAccess> guarded = guard ? guard->Take() : std::vector<GuardedAccess>{};
  guard.reset();
  if (!run.ok()) {
    report.kernel_error = run.status().ToString();
    return report;
  }
  for (const GuardedAccess& g : guarded) {
    for (size_t i = 0; i < tensors.size() && i < inputs.size(); ++i) {
      if (tensors[i].defined() && g.begin == reinterpret_cast<uintptr_t>(tensors[i].raw_data())) {
        report.kernel_error = "the kernel ran out of bounds: " + GuardedText(inputs[i].name, tensors[i], g);
      }
    }
  }
  report.kernel = run->kernel;
  report.launches = run->launches;
  report.device_us = run->device_us;
  report.repeat_us.push_back(run->device_us);
  report.op_id = run->op_id;

  // Determinism first: every repeat against the first run, bit for bit.
  if (request.repeat > 1) {
    OPSCOPE_ASSIGN_OR_RETURN(std::vector<Tensor> first, HostOutputs(run->outputs));
    DeterminismCheck check(std::move(first), out_names);
    for (int k = 1; k < request.repeat; ++k) {
      watchdog.Arm(stop_line);
      auto again = Dispatcher::Global().Run(
          op, tensors, attrs,
          RunOptions{.device = device, .tunables = tunables, .num_outputs = num_outputs, .poison_outputs = true});
      watchdog.Disarm();
      if (!again.ok()) {
        report.kernel_error = "repeat " + std::to_string(k + 1) + ": " + again.status().ToString();
        return report;
      }
      report.repeat_us.push_back(again->device_us);
      OPSCOPE_ASSIGN_OR_RETURN(std::vector<Tensor> outs, HostOutputs(again->outputs));
      check.AddRepeat(outs);
    }
    report.nondeterminism = check.Differences();
  }

  auto gold = golden(tensors);
  if (!gold.ok()) {
    report.kernel_error = "golden (" + golden_name + "): " + gold.status().ToString();
    return report;
  }
  // A write outside output i: the canaries' damage, or the guard page's hit under --checked.
  const auto out_of_bounds = [&](size_t i) -> StatusOr<std::string> {
    OPSCOPE_ASSIGN_OR_RETURN(std::optional<CanaryDamage> damage, CheckCanaries(out_names[i], run->outputs[i]));
    std::string text = damage ? damage->text : "";
    for (const GuardedAccess& g : guarded) {
      if (g.begin == reinterpret_cast<uintptr_t>(run->outputs[i].raw_data())) text = GuardedText(out_names[i], run->outputs[i], g);
    }
    return text;
  };
  std::vector<TensorDesc> in_desc;
  for (const Tensor& t : tensors) {
    in_desc.push_back(t.defined() ? TensorDesc{t.dtype(), t.shape()} : TensorDesc{.present = false});
  }
  for (size_t i = 0; i < run->outputs.size() && i < gold->size(); ++i) {
    if (!run->outputs[i].defined() || !(*gold)[i].defined()) continue;
    // An output the op leaves alone in this call by design: nothing to compare,
    // and its untouched elements are no "never written" finding. Its bounds
    // are still checked: a write past its end is a bug in any call.
    const ArgDef& def = op.outputs[std::min(i, op.outputs.size() - 1)];
    if (def.written && !def.written(validated, in_desc)) {
      OpRunOutput out;
      out.name = out_names[i];
      // Read back as the compared outputs are: a later stage of a chain takes it as its input.
      OPSCOPE_ASSIGN_OR_RETURN(out.actual, ToHost(run->outputs[i]));
      out.not_written = "not written in this call, by design: written only when " + def.written_when;
      out.location = device->name() + " @" + MaskAddress(run->outputs[i].raw_data());
      OPSCOPE_ASSIGN_OR_RETURN(out.out_of_bounds, out_of_bounds(i));
      report.outputs.push_back(std::move(out));
      continue;
    }
    if (run->outputs[i].shape() != (*gold)[i].shape()) {
      report.kernel_error = "golden (" + golden_name + ") output " + out_names[i] + " is " + (*gold)[i].Describe() +
                            " but the kernel's is " + run->outputs[i].Describe();
      return report;
    }
    OPSCOPE_ASSIGN_OR_RETURN(OpRunOutput out, ReadBackAndCompare(readback, out_names[i], run->outputs[i], (*gold)[i],
                                                                 tolerances[i], request.tolerance.worst_k, device,
                                                                 inputs));
    out.location = device->name() + " @" + MaskAddress(run->outputs[i].raw_data());
    out.tolerance_note = tolerance_notes[i];
    OPSCOPE_ASSIGN_OR_RETURN(out.out_of_bounds, out_of_bounds(i));
    report.outputs.push_back(std::move(out));
  }
  if (trace) {
    report.tracepoints = sink.hits();
    report.trace_comparisons = CompareTracepoints(report.tracepoints, report.op_id, reference_op_id);
  }

  if (!request.repro_dir.empty() && !report.passed() && report.nondeterminism.empty()) {
    ReproContext ctx{.flags = request, .op = op, .attrs = validated, .device = device, .tunables = tunables,
                     .num_outputs = num_outputs, .inputs = inputs, .tolerances = tolerances, .golden = golden};
    report.repro_outcome = BuildReproducer(ctx, report);
  }

  if (!request.save_outputs.empty()) {
    for (const OpRunOutput& out : report.outputs) {
      if (!out.not_written.empty()) continue;  // nothing the kernel wrote, nothing the golden is held to
      const std::string actual = (std::filesystem::path(request.save_outputs) / (out.name + ".npy")).string();
      const std::string expected = (std::filesystem::path(request.save_outputs) / (out.name + ".expected.npy")).string();
      OPSCOPE_RETURN_IF_ERROR(WriteNpy(actual, out.actual).WithContext("save_outputs"));
      OPSCOPE_RETURN_IF_ERROR(WriteNpy(expected, out.expected).WithContext("save_outputs"));
      report.saved_files.push_back(actual);
      report.saved_files.push_back(expected);
    }
  }
  if (!request.report.empty()) {
    OPSCOPE_RETURN_IF_ERROR(WriteOpReport(request.report, report));
    report.report_file = request.report;
  }
  return report;
}

}  // namespace opscope
