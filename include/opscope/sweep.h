// File: opscope/sweep.h
// `ops-debug sweep` as one library call: every combination of the tunables an
// op declares (or the subset asked for) run through ProfileOpInstance
// (opscope/profile.h), the same method `ops-debug profile` uses: the op
// harness judges each candidate's outputs against the golden with the op's
// tolerance, then its calls are timed. A candidate whose outputs are wrong is
// FAILED and never the best, however fast it is.
//
//   SweepRequest req{.base = {.run = {.op = "window_l2norm_v1", .plugins = {"libperf_ops.so"},
//                                     .input_shapes = {Shape({1, 8, 256, 256})}}},
//                    .cache_file = "out/sweep.json"};
//   OPSCOPE_ASSIGN_OR_RETURN(SweepReport r, RunSweep(req));
//   if (r.faster) std::printf("%s is %.0f%% faster\n", CandidateText(r.best_candidate()->tunables).c_str(), r.gain_pct);
//
// The noise rule: a candidate is faster than the current configuration only
// when the difference of their median device times exceeds the noise, half
// the sum of the two interquartile ranges, (IQR_current + IQR_candidate) / 2:
// the medians then lie further apart than the half-widths of the two boxes
// around them, so the middle halves of the two sets of calls barely touch.
// With one timed call both IQRs are 0 and any difference counts.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "opscope/profile.h"
#include "opscope/report.h"
#include "opscope/roofline.h"
#include "opscope/status.h"

namespace opscope {

using TunableValues = std::map<std::string, int64_t>;

enum class CandidateStatus { kPassed, kFailed, kError };
const char* CandidateStatusName(CandidateStatus s);  // "passed", "FAILED", "error"

struct SweepCandidate {
  TunableValues tunables;            // every tunable the op declares
  CandidateStatus status = CandidateStatus::kError;
  std::string why;                   // FAILED: what mismatched; error: the kernel's error
  TimingStats device_us;             // count 0: not timed (an error)
  RooflinePoint roofline;            // at the median device time
  std::string kernel;
  bool cached = false;               // reused from the cache file, not measured in this run
  bool passed() const { return status == CandidateStatus::kPassed; }
};

// One swept tunable and its values in the order they are run.
struct SweepAxis {
  std::string name;
  std::vector<int64_t> values;
};

struct SweepProgress {
  int index = 0, total = 0;          // 1-based: candidate index of total
  const TunableValues* tunables = nullptr;
  const SweepCandidate* done = nullptr;  // null: the candidate starts now
};

struct SweepRequest {
  // The op instance and how to time it; base.run.tunables is the current
  // configuration (unset tunables: their first declared value). The peaks are
  // calibrated once when not both given, never per candidate.
  ProfileRequest base;
  // The values to sweep per tunable; a tunable left out takes every value it
  // declares. Each name and value must be declared by the op.
  std::map<std::string, std::vector<int64_t>> values;
  // The sweep.json of an earlier run: candidates of the same instance (op,
  // device, shapes, dtypes, attrs, inputs) are reused ("cached"). Rewritten
  // atomically after every candidate, so a killed or cancelled run resumes.
  std::string cache_file;
  bool use_cache = true;
  std::function<void(const SweepProgress&)> progress;
  // Set (e.g. from a SIGINT handler): stop after the current candidate; the
  // report and cache file then say complete = false.
  const std::atomic<bool>* cancel = nullptr;
  // The command line that runs this sweep again, kept in the report; empty:
  // SweepCommand(request).
  std::string repro;
};

struct SweepReport {
  std::string op, device, key;       // key: what the cache is matched on
  // The files the kernels came from, as they were (libopscope.so and the op's
  // plugin: path, size, modification time): a cache measured with another
  // build of them is not reused.
  std::string build;
  std::string instance;              // "[1,8,256,256] float32"
  std::vector<SweepAxis> axes;       // every declared tunable, the current value included
  std::vector<SweepCandidate> candidates;  // in the order run; the current one first
  int total = 0;                     // candidates planned
  int current = -1;                  // index into candidates of the current configuration
  int best = -1;                     // the fastest passed one, or the current when none is faster beyond noise
  int fastest = -1;                  // the fastest passed one, beyond the noise or not (then it is not called best)
  bool faster = false;               // best is not current and beats it beyond noise (or current FAILED)
  double gain_pct = 0;               // current median / best median - 1, in percent
  double noise_us = 0;               // of best against current
  std::string direction;             // when gain_pct > 50: what the change means
  bool complete = false;
  int cached = 0, measured = 0;
  int warmup = 0, iterations = 0;
  RoofPeaks peaks;
  std::string cache_note;            // why the cache file was or was not reused
  std::string repro;                 // SweepRequest::repro
  const SweepCandidate* current_candidate() const { return At(current); }
  const SweepCandidate* best_candidate() const { return At(best); }
  const SweepCandidate* At(int i) const {
    return i >= 0 && i < static_cast<int>(candidates.size()) ? &candidates[i] : nullptr;
  }
};

// Errors (exit 2), before anything is run or written: an undeclared tunable or
// value (in `values` or base.run.tunables), a sweep with no candidates, every
// check of ProfileOpInstance (--iters < 1, ...), and the first candidate's
// request errors (shapes, attrs).
StatusOr<SweepReport> RunSweep(const SweepRequest& request);

// The rules, apart so that they are tested on synthetic times.
double NoiseUs(const TimingStats& current, const TimingStats& candidate);  // (IQR + IQR) / 2
// Beyond the noise: the medians apart by more than NoiseUs, or the
// candidate's p75 below the current's p25 (the IQRs do not overlap).
bool IsFaster(const TimingStats& candidate, const TimingStats& current);
// Fills best, fastest, faster, gain_pct, noise_us and direction from the candidates and current.
void ChooseBest(SweepReport& report);
// "larger blocks: fewer scheduling steps" for the tunables that changed; "" when none.
std::string DirectionHint(const TunableValues& from, const TunableValues& to);
std::string CandidateText(const TunableValues& t);  // "block=256 vec=4"

// `ops-debug sweep ...` with this request's op instance, values, timing and
// output folder (cache_file's), every value quoted (core/command_line.h).
std::string SweepCommand(const SweepRequest& request);

// The flag of a tunable in errors: --block, --vec, else --tunable NAME.
std::string SweepFlagFor(const std::string& tunable);

// sweep.json ("opscope.sweep/1") and back (for the cache).
std::string SweepJson(const SweepReport& report);
StatusOr<SweepReport> ParseSweepJson(const std::string& text);

// The heatmap as one inline <svg>: the first two swept tunables with more
// than one value (x, then y; one row when only one varies), colour = median
// over the fastest passed median, FAILED cells crossed and labelled.
std::string SweepHeatmapSvg(const SweepReport& report);
// One self-contained page: the comparison, the heatmap, every candidate.
std::string SweepHtml(const SweepReport& report);
// The report as sweep.json at `cache_file` (its final state) and as
// sweep.html beside it, both atomically; returns the page's path.
StatusOr<std::string> WriteSweepFiles(const SweepReport& report, const std::string& cache_file);
// The text: one line per candidate, then current and best side by side.
void PrintSweep(const SweepReport& report, std::ostream& out, bool color);

}  // namespace opscope
