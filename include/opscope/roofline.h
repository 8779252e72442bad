// File: opscope/roofline.h
// How far one kernel's time is from what the machine allows. From the op's
// cost model (bytes read and written, FLOPs) and the device's measured peaks
// (opscope/calibrate.h): the memory-bound time (bytes / bandwidth), the
// compute-bound time (FLOPs / the peak for that dtype), the lower bound (the
// larger of the two), which bound applies, and the efficiency (lower bound /
// measured time). ops-debug profile, sweep and inspector-cli's summary all
// ask this one component; an op without a cost model is timed and said to
// have none, nothing is guessed.
//
//   OPSCOPE_ASSIGN_OR_RETURN(DevicePeaks p, CalibrateDevice({.device = "cpu"}));
//   RoofPeaks roof = RoofPeaksFrom(p);
//   RooflinePoint r = Roofline(op.EstimateCost(in, out, attrs), DType::kF32, measured_us, roof);
//   if (r.slowdown() > 2) std::printf("%.1fx its lower bound\n", r.slowdown());
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "opscope/calibrate.h"
#include "opscope/dtype.h"
#include "opscope/op.h"

namespace opscope {

// The roofs a kernel is held against. Bandwidth is the STREAM triad (the
// rate a kernel that reads and writes streams reaches); compute is the rate
// the fastest GEMM calibrate found reaches (OpenBLAS's, or our own packed
// one in float32: the practical roof the bound is taken from). The FMA
// loop's rate, the hardware's peak, is kept beside it: a kernel faster than
// the practical roof but not than the hardware's beat that GEMM, one faster
// than both says the roofs were measured under load.
struct RoofPeaks {
  double bandwidth_gbs = 0;   // 1e9 bytes/s
  double gflops_f32 = 0;      // float32 and every narrower float
  double gflops_f64 = 0;
  double fma_gflops_f32 = 0, fma_gflops_f64 = 0;  // the FMA loop's; 0: unknown (a roof given by flag)
  std::string source;         // "calibrated (cache file)", "--peak-bw/--peak-flops"
  double GflopsFor(DType dtype) const { return dtype == DType::kF64 ? gflops_f64 : gflops_f32; }
  double FmaGflopsFor(DType dtype) const { return dtype == DType::kF64 ? fma_gflops_f64 : fma_gflops_f32; }
};

RoofPeaks RoofPeaksFrom(const DevicePeaks& peaks);

// The roofs of `device` with the user's overrides (a value > 0 replaces the
// calibrated roof, the compute one for every dtype): calibrated (cached per
// machine; the first use measures) unless both are given. `source` says
// where each came from ("calibrated now (first use on this machine), cached
// in F; memory roof given (--peak-bw)"). The error is calibration's.
StatusOr<RoofPeaks> ObtainRoofPeaks(const std::string& device, double peak_bw_gbs = 0, double peak_gflops = 0);

enum class Bound { kNone, kMemory, kCompute };  // kNone: no cost model
const char* BoundName(Bound b);                  // "none", "memory", "compute"

struct RooflinePoint {
  bool has_cost = false;
  int64_t bytes = 0;          // read + written
  double flops = 0;
  double measured_us = -1;    // -1: not timed
  double memory_bound_us = 0, compute_bound_us = 0, lower_bound_us = 0;
  Bound bound = Bound::kNone;
  double achieved_gbs = 0, achieved_gflops = 0;  // over measured_us; 0 when untimed
  double intensity = 0;       // FLOPs per byte; 0 when no bytes
  double fma_bound_us = 0;    // the FLOPs at the FMA loop's peak; 0 when that peak is unknown
  // lower bound / measured, in (0, ...): above 1 means faster than the DRAM
  // roof (the data stayed in cache). -1 when untimed or without a cost model.
  double efficiency() const;
  // measured / lower bound: "4.8x its lower bound". -1 when unknown.
  double slowdown() const;
};

// The op's cost model asked about one call; empty when the op has none
// (OpSchema::EstimateCost would fall back to counting tensor bytes).
std::optional<Cost> CostOf(const OpSchema& op, const std::vector<TensorDesc>& inputs,
                           const std::vector<TensorDesc>& outputs, const Attrs& attrs);

// Past an efficiency of 100% the lower bound was beaten: which roof and why,
// for the line that prints it ("above the memory roof: its data came from
// cache, not DRAM"; above the compute roof, either faster than the
// calibrated GEMM but under the FMA loop's peak, or faster than both: roofs measured under
// load); empty at or under 100%.
std::string AboveRoofNote(const RooflinePoint& r);

// The same as a kind, for files (a trace's args.above_roof): kNo at or under
// 100%; kCache above the memory roof; kBeatsGemm above the practical compute
// roof, under the FMA loop's; kRoofTooLow above both, or above a given one.
enum class AboveRoof { kNo, kCache, kBeatsGemm, kRoofTooLow };
AboveRoof AboveRoofOf(const RooflinePoint& r);
const char* AboveRoofName(AboveRoof a);  // "no", "cache", "beats_gemm", "roof_too_low"

// Names (op types, sweep candidates) beside their AboveRoofNote, grouped by
// note in the order first met, one line each: "<indent>Add, Relu: above the
// memory roof: ..." (past six names, "and N more"). Empty notes are skipped;
// "" when none is left.
std::string AboveRoofGroups(const std::vector<std::pair<std::string, std::string>>& named_notes,
                            const std::string& indent);

// `cost` empty: the op has no cost model (has_cost = false, bound kNone).
RooflinePoint Roofline(const std::optional<Cost>& cost, DType dtype, double measured_us, const RoofPeaks& peaks);

// A roofline chart as one inline <svg> element: log-log axes (FLOPs/byte
// against GFLOP/s), the memory roof's slope and the compute roofs of the
// dtypes present, one labelled point per kernel (with a <title> tooltip).
// Points without a cost model or a time are left out and counted in a note.
struct RooflineChartPoint {
  std::string label;  // "Relu_cpu"
  DType dtype = DType::kF32;
  RooflinePoint point;
};
std::string RooflineSvg(const RoofPeaks& peaks, const std::vector<RooflineChartPoint>& points);

}  // namespace opscope
