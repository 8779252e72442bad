#include "cli/calibrate_command.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <ctime>

namespace opscope::cli {

namespace {

// Which GEMM the cpu's float64 figure is of: OpenBLAS's, or the minimal
// build's plain loops (ops/builtin/plain_gemm.h), which are no roof to hold
// a kernel to. float32's says its own (DevicePeaks::gemm_f32_kernel).
#if defined(OPSCOPE_MINIMAL)
constexpr char kGemmName[] = "plain fallback GEMM (no OpenBLAS in this build)";
#else
constexpr char kGemmName[] = "OpenBLAS";
#endif

void PrintHostFigures(const DevicePeaks& p, std::ostream& out) {
  char line[256];
  out << p.device << "  " << p.description << "  " << p.threads << " worker thread(s)\n";
  std::snprintf(line, sizeof line, "memory   read %.1f  write %.1f  copy %.1f  triad %.1f GB/s  (%.0f MiB arrays, LLC %.0f MiB)\n",
                p.read_gbs, p.write_gbs, p.copy_gbs, p.triad_gbs, p.buffer_bytes / 1048576.0,
                p.last_level_cache_bytes / 1048576.0);
  out << line;
  std::snprintf(line, sizeof line,
                "compute  FMA loop %.1f GFLOP/s float32, %.1f float64;  GEMM %lldx%lld %.1f GFLOP/s float32 (%s), %.1f "
                "float64 (%s)\n",
                p.fma_gflops_f32, p.fma_gflops_f64, static_cast<long long>(p.gemm_n), static_cast<long long>(p.gemm_n),
                p.gemm_gflops_f32, p.gemm_f32_kernel.c_str(), p.gemm_gflops_f64, kGemmName);
  out << line;
  std::snprintf(line, sizeof line, "launch   %.2f us per empty launch + synchronize\n", p.launch_us);
  out << line;
}

// cuda: the device's properties, then what our kernels measured on it beside
// what its specification says.
void PrintDeviceFigures(const DevicePeaks& p, std::ostream& out) {
  char line[320];
  out << p.device << "  " << p.description << "  (" << p.method << ")\n";
  for (const auto& [k, v] : p.properties) out << "  " << k << "  " << v << "\n";
  if (p.method == "device kernels") {
    std::snprintf(line, sizeof line,
                  "memory   read %.1f  write %.1f  copy %.1f  triad %.1f GB/s  (%.0f MiB arrays; %.1f GB/s by the specification)\n",
                  p.read_gbs, p.write_gbs, p.copy_gbs, p.triad_gbs, p.buffer_bytes / 1048576.0, p.spec_bandwidth_gbs);
    out << line;
    std::snprintf(line, sizeof line,
                  "compute  FMA kernel %.1f GFLOP/s float32, %.1f float64  (%.1f and %.1f by the specification; no GEMM runs here: the FMA rate is the roof)\n",
                  p.fma_gflops_f32, p.fma_gflops_f64, p.spec_gflops_f32, p.spec_gflops_f64);
    out << line;
    std::snprintf(line, sizeof line, "launch   %.2f us per empty kernel launch + synchronize\n", p.launch_us);
    out << line;
    return;
  }
  std::snprintf(line, sizeof line, "memory   device-to-device copy %.1f GB/s measured (%.0f MiB), %.1f GB/s by the specification\n",
                p.copy_gbs, p.buffer_bytes / 1048576.0, p.spec_bandwidth_gbs);
  out << line;
  std::snprintf(line, sizeof line, "compute  %.1f GFLOP/s float32, %.1f float64 by the specification (FMA lanes x SMs x clock)\n",
                p.gemm_gflops_f32, p.gemm_gflops_f64);
  out << line;
  std::snprintf(line, sizeof line, "launch   %.2f us per event recorded and waited for\n", p.launch_us);
  out << line;
}

}  // namespace

Status RunCalibrate(const CalibrateFlags& flags, std::ostream& out) {
  OPSCOPE_ASSIGN_OR_RETURN(DevicePeaks p, CalibrateDevice(flags.request));
  if (flags.json) {
    out << DevicePeaksJson(p);
    return Status::Ok();
  }
  if (p.method == "host kernels") PrintHostFigures(p, out);
  else PrintDeviceFigures(p, out);
  out << "measured " << CalibrationProvenance(p, static_cast<int64_t>(std::time(nullptr))) << "\n";
  if (p.from_cache) out << "cached   " << p.cache_file << " (--refresh measures again)\n";
  else if (!p.cache_file.empty()) out << "measured now, cached in " << p.cache_file << "\n";
  return Status::Ok();
}

CLI::App* AddCalibrateCommand(CLI::App& app, CalibrateFlags& f) {
  CLI::App* c = app.add_subcommand("calibrate", "Measure the device's peak bandwidth, FLOP/s and launch cost (cached)");
  c->add_option("--device", f.request.device, "the device to measure (cpu)");
  c->add_flag("--json", f.json, "print the figures as JSON (schema opscope.peaks/1)");
  c->add_flag("--refresh", f.request.refresh, "measure again even when this machine's figures are cached");
  c->add_option("--repetitions", f.request.repetitions, "best of N runs of each measurement (default 5)");
  return c;
}

}  // namespace opscope::cli
