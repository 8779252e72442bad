// File: opscope/calibrate.h
// Measured peaks of a device, the roof a kernel's time is held against: the
// memory bandwidth (read, write, copy and a STREAM-style triad on buffers far
// larger than the last-level cache), the FLOP/s of an FMA loop at the vector
// width the compiler gives, the rate OpenBLAS's GEMM reaches (the practical
// roof), and the cost of one empty launch. Every figure is measured with the
// worker threads the backend really uses, best of `repetitions` (as STREAM
// reports). Results are cached per machine (CPU model, thread count, opscope
// version) under $XDG_CACHE_HOME/opscope (or ~/.cache/opscope). On a device
// the host cannot run kernels on (cuda), kernels of our own measure the same
// figures on the device, the GEMM aside (see `method`).
//
//   OPSCOPE_ASSIGN_OR_RETURN(DevicePeaks p, CalibrateDevice({.device = "cpu"}));
//   double bound_us = bytes / (p.triad_gbs * 1e3);
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "opscope/status.h"

namespace opscope {

struct CalibrateRequest {
  std::string device = "cpu";   // --device
  int64_t buffer_bytes = 0;     // per array; 0: 8x the last-level cache, at least 256 MiB
  int64_t gemm_n = 1024;        // the square GEMM's size
  int repetitions = 5;          // best of
  int64_t fma_steps = 1 << 20;  // the FMA loop's steps per worker block (x 64 lanes): a second's work here
  bool use_cache = true;        // read the cached figures when the machine's key matches
  bool refresh = false;         // --refresh: measure again and rewrite the cache
};

struct DevicePeaks {
  std::string device, description;  // "cpu", "AMD EPYC ... "
  std::string key;                  // what the cache is keyed on
  int threads = 1;                  // worker threads used
  int64_t buffer_bytes = 0, last_level_cache_bytes = 0;
  double read_gbs = 0, write_gbs = 0, copy_gbs = 0, triad_gbs = 0;  // GB/s (1e9 bytes)
  double fma_gflops_f32 = 0, fma_gflops_f64 = 0;                    // the FMA loop
  double gemm_gflops_f32 = 0, gemm_gflops_f64 = 0;                  // the fastest GEMM each dtype has
  int64_t gemm_n = 0;
  // Which GEMM gemm_gflops_f32 is: "OpenBLAS", or our own packed GEMM where
  // it is faster (the one MatMul, Gemm and Conv run in float32:
  // "opscope packed GEMM, AVX-512" or ", AVX2"); float64 is OpenBLAS's.
  std::string gemm_f32_kernel = "OpenBLAS";
  double launch_us = 0;     // one empty launch and its synchronisation
  // How the figures were got:
  //  "host kernels" (cpu): everything above measured on the host's threads;
  //  "device kernels" (cuda): read/write/copy/triad and FMA kernels of our
  //    own (PTX, JIT-compiled by the driver) and an empty kernel's launch,
  //    measured on the device; no GEMM runs there, so gemm_* = fma_* and
  //    gemm_n = 0; threads = the device's multiprocessors;
  //  "device copy + specification" (a device the host cannot touch that
  //    compiles no PTX): copy_gbs = triad_gbs from a device-to-device copy,
  //    read/write 0 (not measured), the FMA and GEMM figures the
  //    specification's, launch_us an event round trip.
  std::string method = "host kernels";
  std::vector<std::pair<std::string, std::string>> properties;  // the device's own (DeviceInfo::properties)
  // From the specification, for comparison; 0: not known (the cpu's).
  double spec_bandwidth_gbs = 0, spec_gflops_f32 = 0, spec_gflops_f64 = 0;
  bool from_cache = false;  // read from cache_file, not measured now
  std::string cache_file;
  // When and under what the figures were measured, so a roof is never taken
  // on trust: the time (Unix seconds; 0 in a cache older than the field),
  // the 1-minute load average then, and the triad's spread over its rounds
  // (median / best - 1, in percent; a loaded machine spreads widely).
  int64_t measured_at = 0;
  double load_average = -1;
  double triad_spread_pct = -1;
  int rounds = 0;
};

// "calibrated 3 h ago under load 0.4, triad spread 3% over 5 rounds" (or
// "calibrated now ..."): what profile and sweep print beside the roofs.
std::string CalibrationProvenance(const DevicePeaks& peaks, int64_t now_unix);

StatusOr<DevicePeaks> CalibrateDevice(const CalibrateRequest& request);
std::string DevicePeaksJson(const DevicePeaks& peaks);  // "opscope.peaks/1"

}  // namespace opscope
