// RunSweep (opscope/sweep.h): plan the candidates from the op's declared
// tunables, check everything asked before running anything, calibrate once,
// then profile candidate after candidate (the current configuration first),
// reusing what the cache file already holds for the same instance.
#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "opscope/calibrate.h"
#include "core/file_util.h"
#include "core/text_format.h"
#include "opscope/npy.h"
#include "opscope/op.h"
#include "opscope/plugin.h"
#include "opscope/sweep.h"
#include "ops/plugin_hint.h"

namespace opscope {
namespace {

std::string ValueList(const std::vector<int64_t>& values) {
  const std::string s = JoinMapped(values, ", ", [](int64_t v) { return std::to_string(v); });
  return s;
}

std::string DeclaredNames(const OpSchema& op) {
  const std::string s = JoinMapped(op.tunables, ", ", [](const TunableDef& t) { return t.name; });
  return s.empty() ? "it declares none" : "it declares: " + s;
}

Status CheckValue(const OpSchema& op, const TunableDef& t, int64_t v, const std::string& flag) {
  if (t.values.empty() || std::find(t.values.begin(), t.values.end(), v) != t.values.end()) return Status::Ok();
  return InvalidArgumentError(flag + ": op " + op.name + "'s tunable '" + t.name + "' takes " + ValueList(t.values) +
                              "; " + std::to_string(v) + " is not one of them");
}

// The axes in declaration order, and the current configuration.
Status Plan(const OpSchema& op, const SweepRequest& r, std::vector<SweepAxis>& axes, TunableValues& current) {
  for (const auto& [name, value] : r.base.run.tunables) {
    const TunableDef* t = op.FindTunable(name);
    if (t == nullptr) {
      return InvalidArgumentError("tunables: op " + op.name + " has no tunable '" + name + "' (" + DeclaredNames(op) + ")");
    }
    OPSCOPE_RETURN_IF_ERROR(CheckValue(op, *t, value, "tunables"));
  }
  for (const auto& [name, values] : r.values) {
    const std::string flag = SweepFlagFor(name);
    const TunableDef* t = op.FindTunable(name);
    if (t == nullptr) {
      return InvalidArgumentError(flag + ": op " + op.name + " has no tunable '" + name + "' (" + DeclaredNames(op) + ")");
    }
    if (values.empty()) return InvalidArgumentError(flag + ": no values given: a sweep with no candidates");
    for (int64_t v : values) OPSCOPE_RETURN_IF_ERROR(CheckValue(op, *t, v, flag));
  }
  for (const TunableDef& t : op.tunables) {
    auto given = r.base.run.tunables.find(t.name);
    if (given != r.base.run.tunables.end()) {
      current[t.name] = given->second;
    } else if (!t.values.empty()) {
      current[t.name] = t.values.front();
    }
    SweepAxis axis{.name = t.name};
    auto asked = r.values.find(t.name);
    const std::vector<int64_t>& src = asked != r.values.end() ? asked->second : t.values;
    for (int64_t v : src) {
      if (std::find(axis.values.begin(), axis.values.end(), v) == axis.values.end()) axis.values.push_back(v);
    }
    if (axis.values.empty() && current.count(t.name)) axis.values.push_back(current[t.name]);
    if (!axis.values.empty()) axes.push_back(std::move(axis));
  }
  if (axes.empty()) {
    return InvalidArgumentError("values: op " + op.name + " declares no tunables and none were asked: "
                                "a sweep with no candidates");
  }
  return Status::Ok();
}

std::vector<TunableValues> Grid(const std::vector<SweepAxis>& axes) {
  std::vector<TunableValues> grid = {{}};
  for (const SweepAxis& a : axes) {
    std::vector<TunableValues> next;
    for (const TunableValues& g : grid) {
      for (int64_t v : a.values) {
        TunableValues t = g;
        t[a.name] = v;
        next.push_back(std::move(t));
      }
    }
    grid = std::move(next);
  }
  return grid;
}

std::string InstanceText(const OpRunRequest& r) {
  std::string s;
  for (size_t i = 0; i < r.input_shapes.size(); ++i) {
    const bool omitted = std::find(r.omitted_inputs.begin(), r.omitted_inputs.end(), static_cast<int>(i)) !=
                         r.omitted_inputs.end();
    s += (i ? ";" : "") + (omitted ? std::string() : r.input_shapes[i].ToString());
  }
  for (const std::string& f : r.input_files) s += (s.empty() ? "" : ";") + f;
  const std::string d = JoinMapped(r.dtypes, ",", [](DType t) { return std::string(DTypeName(t)); });
  return s + " " + (d.empty() ? "float32" : d);
}

// What the cache is matched on: the op instance, not how it is timed.
std::string InstanceKey(const OpRunRequest& r) {
  std::string k = "op=" + r.op + " device=" + r.device + " inputs=" + InstanceText(r) + " attrs=" + r.attrs +
                  " seed=" + std::to_string(r.seed) + " fill=" + std::to_string(static_cast<int>(r.fill));
  for (const auto& [name, value] : r.attr_values.all()) k += " " + name;  // typed attrs: their names at least
  return k;
}

// The files `op`'s kernels come from as they are now: this library and the
// op's plugin, each path, size and modification time. A sweep.json measured
// with another build served the old kernel's timings and verdicts as
// "(cached)" after a rebuild.
std::string KernelBuild(const OpSchema& op) {
  std::string out;
  auto add = [&](const std::string& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    const auto time = std::filesystem::last_write_time(path, ec);
    if (ec) return;
    out += (out.empty() ? "" : " ") + path + ":" + std::to_string(size) + ":" +
           std::to_string(time.time_since_epoch().count());
  };
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&KernelBuild), &self) != 0 && self.dli_fname != nullptr) add(self.dli_fname);
  if (op.source != "builtin") add(op.source);
  return out;
}

std::string FailureText(const OpRunReport& rep) {
  if (!rep.nondeterminism.empty()) return "nondeterministic: output " + rep.nondeterminism.front().name + " differs between repeats";
  for (const OpRunOutput& o : rep.outputs) {
    if (o.passed()) continue;
    if (!o.out_of_bounds.empty()) return o.out_of_bounds;
    if (o.actual_stats) return o.name + ": " + (o.stats_findings.empty() ? "stats differ" : o.stats_findings.front());
    const CompareResult& c = o.compare;
    if (c.mismatched == 0 && !c.warnings.empty()) return o.name + ": failed under --strict: " + c.warnings.front().text;
    // What failed first, by kind: elements the kernel never wrote (they
    // still hold the poison: NaN for floats) and NaN or Inf it produced
    // say more than the largest finite error, which leaves them out.
    std::ostringstream s;
    s << o.name << ": " << WithThousands(c.mismatched) << " / " << WithThousands(c.total) << " mismatched";
    const bool floats = IsFloat(o.actual.dtype());
    int64_t unwritten = 0;
    for (const CompareFinding& f : c.findings) {
      if (f.kind != "never_written") continue;
      s << "; " << f.text << (floats ? " (NaN poison)" : " (poison marker)");
      for (const auto& [name, value] : f.numbers) unwritten += name == "elements" ? static_cast<int64_t>(value) : 0;
    }
    const int64_t nan_made = c.nan_only_actual - (floats ? unwritten : 0);  // the poison is NaN too
    if (nan_made > 0) s << "; NaN in " << WithThousands(nan_made) << " element(s) where expected is a number";
    if (c.inf_only_actual > 0) s << "; Inf in " << WithThousands(c.inf_only_actual) << " element(s) where expected is finite";
    if (c.mismatched > c.nan_only_actual + c.inf_only_actual + (floats ? 0 : unwritten)) s << "; max abs err " << ShortNum(c.max_abs_err);
    return s.str();
  }
  return "failed";
}

SweepCandidate FromReport(const TunableValues& t, const OpRunReport& rep) {
  SweepCandidate c{.tunables = t, .kernel = rep.kernel};
  if (!rep.kernel_error.empty()) {
    c.status = CandidateStatus::kError;
    c.why = rep.kernel_error;
  } else {
    c.status = rep.passed() ? CandidateStatus::kPassed : CandidateStatus::kFailed;
    if (!rep.passed()) c.why = FailureText(rep);
  }
  if (rep.profile) {
    c.device_us = rep.profile->device_us;
    c.roofline = rep.profile->roofline;
  }
  return c;
}

// The candidates of an earlier sweep.json of the same instance, by tunables.
std::map<TunableValues, SweepCandidate> ReadCache(const SweepRequest& r, const std::string& key,
                                                  const std::string& build, std::string& note) {
  std::map<TunableValues, SweepCandidate> cache;
  if (!r.use_cache || r.cache_file.empty()) return cache;
  std::error_code ec;
  if (!std::filesystem::exists(r.cache_file, ec)) return cache;
  std::ifstream f(r.cache_file, std::ios::binary);
  std::stringstream text;
  text << f.rdbuf();
  auto old = ParseSweepJson(text.str());
  if (!old.ok()) {
    note = r.cache_file + " not reused: " + old.status().message();
    return cache;
  }
  if (old->key != key) {
    note = r.cache_file + " holds another op instance: not reused, rewritten";
    return cache;
  }
  if (old->build != build) {
    note = r.cache_file + " was measured with another build of the kernels: not reused, rewritten";
    return cache;
  }
  for (SweepCandidate& c : old->candidates) {
    if (c.status == CandidateStatus::kError) continue;  // an error may be the machine's: measured again
    c.cached = true;
    cache[c.tunables] = std::move(c);
  }
  note = std::to_string(cache.size()) + " candidate(s) of " + r.cache_file + " reusable (cached)";
  return cache;
}

}  // namespace

StatusOr<SweepReport> RunSweep(const SweepRequest& r) {
  const ProfileRequest& base = r.base;
  if (base.iterations < 1) return InvalidArgumentError("iterations: expected at least 1 call to time, got " + std::to_string(base.iterations));
  if (base.warmup < 0) return InvalidArgumentError("warmup: expected 0 or more calls, got " + std::to_string(base.warmup));
  for (const std::string& path : base.run.plugins) {
    auto p = LoadPlugin(path);
    if (!p.ok()) return std::move(p).status().WithContext("plugins");
  }
  if (base.run.op.empty()) return InvalidArgumentError("op: required (an op name; ops-debug list shows them)");
  auto found = LookupTypedOp(base.run.op);
  if (!found.ok()) return std::move(found).status().WithContext("op");
  const OpSchema& op = **found;

  SweepReport report{.op = op.name, .device = base.run.device, .key = InstanceKey(base.run),
                     .build = KernelBuild(op), .instance = InstanceText(base.run), .warmup = base.warmup, .iterations = base.iterations,
                     .repro = r.repro.empty() ? SweepCommand(r) : r.repro};
  TunableValues current;
  OPSCOPE_RETURN_IF_ERROR(Plan(op, r, report.axes, current));
  std::vector<TunableValues> planned = {current};
  for (TunableValues& t : Grid(report.axes)) {
    if (t != current) planned.push_back(std::move(t));
  }
  report.total = static_cast<int>(planned.size());
  report.current = 0;

  if (base.peaks) {
    report.peaks = *base.peaks;
  } else {
    OPSCOPE_ASSIGN_OR_RETURN(report.peaks, ObtainRoofPeaks(base.run.device, base.peak_bw_gbs, base.peak_gflops));
  }
  ProfileRequest each = base;
  each.peaks = report.peaks;
  each.measure_overhead = false;  // the sweep compares candidates, the profiler's cost is the same for all
  each.timeline.clear();
  each.run.report.clear();
  each.run.repro_dir.clear();
  each.run.save_outputs.clear();

  std::map<TunableValues, SweepCandidate> cache = ReadCache(r, report.key, report.build, report.cache_note);
  bool written = false;
  auto save = [&]() -> Status {
    if (r.cache_file.empty()) return Status::Ok();
    if (!written) {
      const std::filesystem::path parent = std::filesystem::path(r.cache_file).parent_path();
      if (!parent.empty()) OPSCOPE_RETURN_IF_ERROR(MakeOutputDir(parent.string(), "sweep cache folder"));
    }
    written = true;
    return WriteFileAtomic(r.cache_file, SweepJson(report));
  };

  for (int i = 0; i < report.total; ++i) {
    if (r.cancel != nullptr && r.cancel->load()) break;
    const TunableValues& t = planned[i];
    if (r.progress) r.progress({.index = i + 1, .total = report.total, .tunables = &t});
    auto hit = cache.find(t);
    if (hit != cache.end()) {
      report.candidates.push_back(hit->second);
      ++report.cached;
    } else {
      each.run.tunables = t;
      auto profiled = ProfileOpInstance(each);
      if (!profiled.ok()) {
        // The first run is where a bad request (shapes, attrs) shows: nothing is written then.
        if (report.candidates.empty()) return std::move(profiled).status();
        report.candidates.push_back({.tunables = t, .status = CandidateStatus::kError,
                                     .why = profiled.status().ToString()});
      } else {
        report.candidates.push_back(FromReport(t, *profiled));
      }
      ++report.measured;
    }
    ChooseBest(report);
    OPSCOPE_RETURN_IF_ERROR(save().WithContext("writing " + r.cache_file));
    if (r.progress) r.progress({.index = i + 1, .total = report.total, .tunables = &t, .done = &report.candidates.back()});
  }
  report.complete = static_cast<int>(report.candidates.size()) == report.total;
  ChooseBest(report);
  if (report.complete || !written) OPSCOPE_RETURN_IF_ERROR(save().WithContext("writing " + r.cache_file));
  return report;
}

}  // namespace opscope
