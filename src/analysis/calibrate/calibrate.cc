// CalibrateDevice (opscope/calibrate.h): the roofs, measured on the device
// with the threads its backend uses, and cached per machine.
#include "opscope/calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <type_traits>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "ops/builtin/dense_blas.h"
#include "ops/builtin/dense_smallk.h"
#include "opscope/device.h"
#include "opscope/npy.h"

namespace opscope {
namespace {

constexpr char kSchema[] = "opscope.peaks/1";
constexpr int64_t kMinBufferBytes = int64_t{256} << 20;
constexpr int64_t kMaxBufferBytes = int64_t{1} << 30;  // three arrays: 3 GiB at most

// The rounds' median over their best (1 for one round): the spread a roof is
// stated with.
double SpreadPct(std::vector<double> seconds) {
  if (seconds.size() < 2) return 0;
  std::sort(seconds.begin(), seconds.end());
  return (seconds[seconds.size() / 2] / seconds.front() - 1) * 100;
}

// Runs `body(block, blocks)` on `threads` blocks of the device's pool, `reps`
// times, and returns the best wall time in seconds (events around the launch);
// every round's time goes to `rounds` when given.
StatusOr<double> BestSeconds(Device* device, int threads, int reps, const std::function<void(int64_t, int64_t)>& body,
                             std::vector<double>* rounds = nullptr) {
  Stream& s = device->default_stream();
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> start, device->CreateEvent());
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> end, device->CreateEvent());
  KernelLaunch k{.name = "opscope_calibrate",
                 .config = {.grid = {threads, 1, 1}, .block = {1, 1, 1}},
                 .host = [&](const BlockContext& b) { body(b.linear_block(), threads); }};
  double best = INFINITY;
  for (int r = 0; r < reps; ++r) {
    OPSCOPE_RETURN_IF_ERROR(s.Record(*start));
    OPSCOPE_RETURN_IF_ERROR(s.Launch(k));
    OPSCOPE_RETURN_IF_ERROR(s.Record(*end));
    OPSCOPE_RETURN_IF_ERROR(s.Synchronize());
    OPSCOPE_ASSIGN_OR_RETURN(double us, end->ElapsedUsSince(*start));
    best = std::min(best, std::max(us, 1e-3) * 1e-6);
    if (rounds != nullptr) rounds->push_back(std::max(us, 1e-3) * 1e-6);
  }
  return best;
}

// The 1-minute load average (-1 where /proc/loadavg cannot be read).
double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  if (!(in >> load)) return -1;
  return load;
}

// Block `b` of `n` takes elements [lo, hi) of `count`.
std::pair<int64_t, int64_t> Share(int64_t b, int64_t n, int64_t count) { return {count * b / n, count * (b + 1) / n}; }

// The FMA loop: `lanes` independent accumulators, each multiplied and added
// in place every step. Enough chains must be in flight to cover the FMA's
// latency on both pipes (about 10 on Zen 2, 8 on Intel's AVX-512 cores), and
// no more than the registers hold, so the lane count is the ISA's: with the
// same 64 for all, Zen 2's AVX2 float32 loop reached 85.3 GFLOP/s a core
// against 107.7 with 96 (and 90.6 with 128, which spills), below the 196
// OpenBLAS's GEMM reached on two cores, so the "paper" peak read under the
// practical one. Each clone is its own function, dispatched at run time
// (not an ifunc: ThreadSanitizer's runtime is not up when ifunc resolvers
// run), each compiled with contraction into FMA on (ISO C++ mode leaves it
// off) and full vectorization.
#define OPSCOPE_FMA_LOOP(NAME, T, LANES, TARGET)                                          \
  __attribute__((TARGET optimize("O3", "fp-contract=fast"))) T NAME(int64_t steps) {     \
    T acc[LANES];                                                                         \
    for (int j = 0; j < LANES; ++j) acc[j] = T(1) + T(j) * T(1e-3);                       \
    const T m = T(0.999999), c = T(1e-7);                                                 \
    for (int64_t i = 0; i < steps; ++i) {                                                 \
      for (int j = 0; j < LANES; ++j) acc[j] = acc[j] * m + c;                            \
    }                                                                                     \
    T total = 0;                                                                          \
    for (int j = 0; j < LANES; ++j) total += acc[j];                                      \
    return total; /* the result is used: the loop cannot be dropped */                    \
  }
#if defined(__x86_64__)
// Chains in 8 of the 32 zmm registers; 12 of the 16 ymm; 12 of the 16 xmm.
#define OPSCOPE_AVX512 target("avx512f"),
#define OPSCOPE_AVX2 target("avx2,fma"),
OPSCOPE_FMA_LOOP(FmaF32Avx512, float, 128, OPSCOPE_AVX512)
OPSCOPE_FMA_LOOP(FmaF64Avx512, double, 64, OPSCOPE_AVX512)
OPSCOPE_FMA_LOOP(FmaF32Avx2, float, 96, OPSCOPE_AVX2)
OPSCOPE_FMA_LOOP(FmaF64Avx2, double, 48, OPSCOPE_AVX2)
#undef OPSCOPE_AVX512
#undef OPSCOPE_AVX2
#endif
OPSCOPE_FMA_LOOP(FmaF32Base, float, 48, )
OPSCOPE_FMA_LOOP(FmaF64Base, double, 24, )
#undef OPSCOPE_FMA_LOOP

template <typename T>
struct FmaLoop {
  T (*run)(int64_t steps);
  int lanes;  // FLOPs per step: 2 per lane
};

// The loop for the widest vectors this CPU has.
bool HasAvx512() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}
bool HasAvx2Fma() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}
FmaLoop<float> PickFmaF32() {
#if defined(__x86_64__)
  if (HasAvx512()) return {FmaF32Avx512, 128};
  if (HasAvx2Fma()) return {FmaF32Avx2, 96};
#endif
  return {FmaF32Base, 48};
}
FmaLoop<double> PickFmaF64() {
#if defined(__x86_64__)
  if (HasAvx512()) return {FmaF64Avx512, 64};
  if (HasAvx2Fma()) return {FmaF64Avx2, 48};
#endif
  return {FmaF64Base, 24};
}
#undef OPSCOPE_ISA_CLONES

// The GEMM dense_blas.h runs: OpenBLAS's, or the minimal build's plain loops.
#if defined(OPSCOPE_MINIMAL)
constexpr char kBlasGemm[] = "plain fallback GEMM (no OpenBLAS in this build)";
#else
constexpr char kBlasGemm[] = "OpenBLAS";
#endif

// An n x n x n GEMM as the dense kernels run one (ops/builtin/dense_blas.h):
// single-threaded OpenBLAS on each of `threads` row bands of the output, all
// at once on the device's pool, so the peak is the one those kernels can
// reach. The first round warms OpenBLAS's buffers and is not counted.
// With `packed`, float32 on dense_smallk.h's packed GEMM instead, each band
// packing B's panels as MatMul does on every call.
StatusOr<double> GemmGflops(Device* device, int threads, int64_t n, int reps, bool f32,
                            dense::PackedGemmFn packed = nullptr) {
  std::vector<double> a64, b64, c64;
  std::vector<float> a32, b32, c32;
  const size_t count = static_cast<size_t>(n * n);
  if (f32) a32.assign(count, 0.5f), b32.assign(count, 0.25f), c32.assign(count, 0.f);
  else a64.assign(count, 0.5), b64.assign(count, 0.25), c64.assign(count, 0.);
  std::vector<double> rounds;
  OPSCOPE_RETURN_IF_ERROR(BestSeconds(device, threads, reps + 1, [&](int64_t blk, int64_t blocks) {
    const int64_t r0 = n * blk / blocks, r1 = n * (blk + 1) / blocks;
    if (packed != nullptr) {
      const float inf = std::numeric_limits<float>::infinity();
      packed(r1 - r0, n, a32.data() + r0 * n, n, nullptr, b32.data(), n, false, 0, n, c32.data() + r0 * n, n, -inf, inf);
    } else if (f32) {
      dense::Gemm(false, false, r1 - r0, n, n, 1.f, a32.data() + r0 * n, n, b32.data(), n, 0.f, c32.data() + r0 * n, n);
    } else {
      dense::Gemm(false, false, r1 - r0, n, n, 1.0, a64.data() + r0 * n, n, b64.data(), n, 0.0, c64.data() + r0 * n, n);
    }
  }, &rounds).status());
  const double best = *std::min_element(rounds.begin() + 1, rounds.end());
  return 2.0 * n * n * n / best * 1e-9;
}

nlohmann::json ToJson(const DevicePeaks& p) {
  return {{"schema", kSchema},
          {"key", p.key},
          {"device", p.device},
          {"description", p.description},
          {"threads", p.threads},
          {"buffer_bytes", p.buffer_bytes},
          {"last_level_cache_bytes", p.last_level_cache_bytes},
          {"bandwidth_gbs", {{"read", p.read_gbs}, {"write", p.write_gbs}, {"copy", p.copy_gbs}, {"triad", p.triad_gbs}}},
          {"fma_gflops", {{"float32", p.fma_gflops_f32}, {"float64", p.fma_gflops_f64}}},
          {"gemm_gflops", {{"float32", p.gemm_gflops_f32}, {"float64", p.gemm_gflops_f64}, {"n", p.gemm_n}}},
          {"gemm_float32_kernel", p.gemm_f32_kernel},
          {"launch_us", p.launch_us},
          {"method", p.method},
          {"properties", p.properties},
          {"spec_bandwidth_gbs", p.spec_bandwidth_gbs},
          {"spec_gflops", {{"float32", p.spec_gflops_f32}, {"float64", p.spec_gflops_f64}}},
          {"measured_at", p.measured_at},
          {"load_average", p.load_average},
          {"triad_spread_pct", p.triad_spread_pct},
          {"rounds", p.rounds}};
}

// The cached figures, when the file is ours and its key is this machine's.
std::optional<DevicePeaks> ReadCache(const std::string& path, const std::string& key) {
  auto text = ReadFile(path);
  if (!text.ok()) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != kSchema || j.value("key", "") != key) {
    return std::nullopt;
  }
  try {
    DevicePeaks p{.device = j.at("device").get<std::string>(),
                  .description = j.at("description").get<std::string>(),
                  .key = key,
                  .threads = j.at("threads").get<int>(),
                  .buffer_bytes = j.at("buffer_bytes").get<int64_t>(),
                  .last_level_cache_bytes = j.at("last_level_cache_bytes").get<int64_t>(),
                  .read_gbs = j.at("bandwidth_gbs").at("read").get<double>(),
                  .write_gbs = j.at("bandwidth_gbs").at("write").get<double>(),
                  .copy_gbs = j.at("bandwidth_gbs").at("copy").get<double>(),
                  .triad_gbs = j.at("bandwidth_gbs").at("triad").get<double>(),
                  .fma_gflops_f32 = j.at("fma_gflops").at("float32").get<double>(),
                  .fma_gflops_f64 = j.at("fma_gflops").at("float64").get<double>(),
                  .gemm_gflops_f32 = j.at("gemm_gflops").at("float32").get<double>(),
                  .gemm_gflops_f64 = j.at("gemm_gflops").at("float64").get<double>(),
                  .gemm_n = j.at("gemm_gflops").at("n").get<int64_t>(),
                  .launch_us = j.at("launch_us").get<double>(),
                  .from_cache = true,
                  .cache_file = path};
    // Required: a file from before it was written held OpenBLAS's figure
    // alone, which our own GEMM may beat (measure again).
    p.gemm_f32_kernel = j.at("gemm_float32_kernel").get<std::string>();
    p.method = j.value("method", p.method);
    p.properties = j.value("properties", p.properties);
    p.measured_at = j.value("measured_at", int64_t{0});
    p.load_average = j.value("load_average", -1.0);
    p.triad_spread_pct = j.value("triad_spread_pct", -1.0);
    p.rounds = j.value("rounds", 0);
    p.spec_bandwidth_gbs = j.value("spec_bandwidth_gbs", 0.0);
    if (j.contains("spec_gflops") && j["spec_gflops"].is_object()) {
      p.spec_gflops_f32 = j["spec_gflops"].value("float32", 0.0);
      p.spec_gflops_f64 = j["spec_gflops"].value("float64", 0.0);
    }
    return p;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // an older or damaged file: measure again
  }
}

std::string CacheDir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/opscope";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/opscope";
  return "";
}

std::string FileSafe(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  }
  return s;
}

// The launch cost on a device the host cannot run kernels on: `launch`
// enqueued and waited for, the median of 200.
StatusOr<double> MedianLaunchUs(Stream& s, const std::function<Status()>& launch) {
  std::vector<double> us;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    OPSCOPE_RETURN_IF_ERROR(launch());
    OPSCOPE_RETURN_IF_ERROR(s.Synchronize());
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

// The best of `reps` timed runs of `work` on the default stream (events
// around it), after one untimed run: the first launch of a kernel also loads
// its module onto the device.
StatusOr<double> BestDeviceSeconds(Device* device, int reps, const std::function<Status(Stream&)>& work) {
  Stream& s = device->default_stream();
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> start, device->CreateEvent());
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> end, device->CreateEvent());
  double best = INFINITY;
  for (int i = 0; i <= reps; ++i) {
    OPSCOPE_RETURN_IF_ERROR(s.Record(*start));
    OPSCOPE_RETURN_IF_ERROR(work(s));
    OPSCOPE_RETURN_IF_ERROR(s.Record(*end));
    OPSCOPE_RETURN_IF_ERROR(s.Synchronize());
    OPSCOPE_ASSIGN_OR_RETURN(double us, end->ElapsedUsSince(*start));
    if (i > 0) best = std::min(best, std::max(us, 1e-3) * 1e-6);
  }
  return best;
}

// A device that compiles PTX (cuda): every figure from kernels of our own
// (Device::calibration_kernels: device/cuda/calibrate_ptx.h), run on the device over buffers far larger than its L2:
// read, write, copy and triad over float4s, FMA chains in float32 and
// float64, and an empty kernel's launch. No GEMM library runs there from
// here, so the FMA kernels' rate is the compute roof too.
StatusOr<DevicePeaks> CalibrateByDeviceKernels(Device* device, const CalibrateRequest& r, DevicePeaks p) {
  p.method = "device kernels";
  p.threads = std::max(1, device->info().compute_units);
  p.last_level_cache_bytes = 0;  // the host's says nothing here; the device's L2 is among its properties
  const int64_t most = std::max<int64_t>(int64_t{64} << 20, device->info().memory_bytes / 8);
  p.buffer_bytes = (r.buffer_bytes ? r.buffer_bytes : std::min<int64_t>(kMaxBufferBytes, most)) / 16 * 16;
  if (p.buffer_bytes < 16) return InvalidArgumentError("calibrate: the buffers must hold at least 16 bytes");
  const CalibrationKernels kernels = device->calibration_kernels();
  if (kernels.text.empty()) return UnimplementedError("device " + device->name() + " ships no calibration kernels");
  std::map<std::string, const void*> fn;
  for (const char* entry : {"read", "write", "copy", "triad", "fma_f32", "fma_f64", "empty"}) {
    OPSCOPE_ASSIGN_OR_RETURN(fn[entry], device->LoadKernel(kernels.language, std::string(kernels.text),
                                                            std::string("opscope_calibrate_") + entry));
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> a, AllocateBuffer(device, p.buffer_bytes));
  OPSCOPE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> b, AllocateBuffer(device, p.buffer_bytes));
  OPSCOPE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> c, AllocateBuffer(device, p.buffer_bytes));
  OPSCOPE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> sink, AllocateBuffer(device, 16));
  // Eight blocks of 256 per SM: 2048 threads, a full SM at the kernels' few registers.
  const LaunchConfig grid{.grid = {8 * p.threads, 1, 1}, .block = {256, 1, 1}};
  auto run = [&](const std::string& entry, std::vector<void*> args) {
    return [&fn, entry, args, grid](Stream& s) mutable {
      return s.Launch({.name = "opscope_calibrate_" + entry, .config = grid,
                       .device = {.function = fn.at(entry), .args = args.data()}});
    };
  };
  void *pa = a->data(), *pb = b->data(), *pc = c->data(), *psink = sink->data();
  uint64_t n = static_cast<uint64_t>(p.buffer_bytes / 16);
  float value = 1.0f, never = -1.0f, scale = 3.0f;  // the buffers hold non-negative sums: never -1
  Stream& s = device->default_stream();
  OPSCOPE_RETURN_IF_ERROR(run("write", {&pb, &n, &value})(s));  // b and c are read below
  OPSCOPE_RETURN_IF_ERROR(run("write", {&pc, &n, &value})(s));
  OPSCOPE_ASSIGN_OR_RETURN(double t_write, BestDeviceSeconds(device, r.repetitions, run("write", {&pa, &n, &value})));
  OPSCOPE_ASSIGN_OR_RETURN(double t_read, BestDeviceSeconds(device, r.repetitions, run("read", {&pa, &n, &never, &psink})));
  OPSCOPE_ASSIGN_OR_RETURN(double t_copy, BestDeviceSeconds(device, r.repetitions, run("copy", {&pb, &pa, &n})));
  // a = b + 3c keeps every value finite and positive however often it runs.
  OPSCOPE_ASSIGN_OR_RETURN(double t_triad, BestDeviceSeconds(device, r.repetitions, run("triad", {&pa, &pb, &pc, &n, &scale})));
  const double bytes = static_cast<double>(p.buffer_bytes);
  p.read_gbs = bytes / t_read * 1e-9;
  p.write_gbs = bytes / t_write * 1e-9;
  p.copy_gbs = 2 * bytes / t_copy * 1e-9;
  p.triad_gbs = 3 * bytes / t_triad * 1e-9;

  // A device has thousands of threads where the cpu has a few: a sixteenth of
  // the cpu's steps per thread still keeps each run at tens of milliseconds.
  uint32_t steps = static_cast<uint32_t>(std::clamp<int64_t>(r.fma_steps / 16, 1, 1 << 30));
  double never64 = -1.0;
  OPSCOPE_ASSIGN_OR_RETURN(double t_f32, BestDeviceSeconds(device, r.repetitions, run("fma_f32", {&steps, &never, &psink})));
  OPSCOPE_ASSIGN_OR_RETURN(double t_f64, BestDeviceSeconds(device, r.repetitions, run("fma_f64", {&steps, &never64, &psink})));
  const double fma_flops = static_cast<double>(kernels.fma_flops_per_step) * steps * static_cast<double>(grid.grid.x * grid.block.x);
  p.fma_gflops_f32 = p.gemm_gflops_f32 = fma_flops / t_f32 * 1e-9;
  p.fma_gflops_f64 = p.gemm_gflops_f64 = fma_flops / t_f64 * 1e-9;
  p.gemm_n = 0;  // no GEMM ran

  OPSCOPE_ASSIGN_OR_RETURN(p.launch_us, MedianLaunchUs(s, [&]() {
    return s.Launch({.name = "opscope_calibrate_empty", .config = {}, .device = {.function = fn.at("empty")}});
  }));
  return p;
}

// A device whose memory the host cannot touch and which compiles no PTX: the
// memory roof is a measured device-to-device copy between two buffers, the
// compute roof the specification's FMA peak, the launch cost an event
// recorded and waited for.
StatusOr<DevicePeaks> CalibrateByCopies(Device* device, const CalibrateRequest& r, DevicePeaks p) {
  p.method = "device copy + specification";
  p.threads = std::max(1, device->info().compute_units);
  p.last_level_cache_bytes = 0;
  const int64_t most = std::max<int64_t>(int64_t{64} << 20, device->info().memory_bytes / 8);
  p.buffer_bytes = r.buffer_bytes ? r.buffer_bytes : std::min<int64_t>(kMaxBufferBytes, most);
  OPSCOPE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> a, AllocateBuffer(device, p.buffer_bytes));
  OPSCOPE_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> b, AllocateBuffer(device, p.buffer_bytes));
  OPSCOPE_ASSIGN_OR_RETURN(double best, BestDeviceSeconds(device, r.repetitions, [&](Stream& s) {
    return s.Memcpy(b->data(), a->data(), p.buffer_bytes, CopyKind::kDeviceToDevice);
  }));
  p.copy_gbs = p.triad_gbs = 2.0 * static_cast<double>(p.buffer_bytes) / best * 1e-9;
  p.fma_gflops_f32 = p.gemm_gflops_f32 = device->info().spec_gflops_f32;
  p.fma_gflops_f64 = p.gemm_gflops_f64 = device->info().spec_gflops_f64;
  Stream& s = device->default_stream();
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<Event> end, device->CreateEvent());
  OPSCOPE_ASSIGN_OR_RETURN(p.launch_us, MedianLaunchUs(s, [&]() { return s.Record(*end); }));
  return p;
}

}  // namespace

StatusOr<DevicePeaks> CalibrateDevice(const CalibrateRequest& r) {
  if (r.repetitions < 1) return InvalidArgumentError("repetitions: must be >= 1, got " + std::to_string(r.repetitions));
  if (r.buffer_bytes < 0 || r.gemm_n < 1 || r.fma_steps < 1) {
    return InvalidArgumentError("calibrate: buffer size, GEMM size and FMA steps must be positive");
  }
  auto device_or = GetDevice(r.device);
  if (!device_or.ok()) return std::move(device_or).status().WithContext("device");
  Device* device = *device_or;
  DevicePeaks p;
  p.device = device->name();
  p.description = device->info().description;
  p.properties = device->info().properties;
  p.spec_bandwidth_gbs = device->info().spec_bandwidth_gbs;
  p.spec_gflops_f32 = device->info().spec_gflops_f32;
  p.spec_gflops_f64 = device->info().spec_gflops_f64;
  p.threads = std::max(1, device->info().compute_units);
  p.last_level_cache_bytes = device->info().last_level_cache_bytes;
  // 8x the LLC, within [256 MiB, 1 GiB] and an eighth of the memory (a VM may report its host's LLC).
  const int64_t most = std::min(kMaxBufferBytes, std::max(kMinBufferBytes, device->info().memory_bytes / 8));
  p.buffer_bytes = r.buffer_bytes ? r.buffer_bytes : std::clamp(8 * p.last_level_cache_bytes, kMinBufferBytes, most);
  p.gemm_n = r.gemm_n;
  p.key = p.device + "|" + p.description + "|" + std::to_string(p.threads) + " threads|opscope " + OPSCOPE_VERSION;
  const std::string dir = CacheDir();
  // The figures depend on the sizes measured: a non-default size is its own entry.
  const CalibrateRequest defaults;
  const bool other_sizes = r.buffer_bytes || r.gemm_n != defaults.gemm_n || r.fma_steps != defaults.fma_steps;
  if (other_sizes) p.key += "-" + std::to_string(p.buffer_bytes) + "-" + std::to_string(p.gemm_n);
  if (r.fma_steps != defaults.fma_steps) p.key += "-fma" + std::to_string(r.fma_steps);
  if (!dir.empty()) p.cache_file = dir + "/peaks-" + FileSafe(p.device) + "-" + std::to_string(std::hash<std::string>{}(p.key)) + ".json";
  if (r.use_cache && !r.refresh && !p.cache_file.empty()) {
    if (std::optional<DevicePeaks> cached = ReadCache(p.cache_file, p.key)) return *cached;
  }
  // What else ran meanwhile, read before our own threads add to it.
  p.load_average = LoadAverage();
  p.measured_at = static_cast<int64_t>(std::time(nullptr));
  auto save = [&dir](const DevicePeaks& measured) {
    if (measured.cache_file.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    // A cache that cannot be written costs a measurement next time, nothing more.
    if (!ec) (void)WriteFileAtomic(measured.cache_file, JsonText(ToJson(measured), 2) + "\n");
  };
  if (!device->host_accessible()) {
    StatusOr<DevicePeaks> by_kernels = CalibrateByDeviceKernels(device, r, p);
    if (!by_kernels.ok() && by_kernels.status().code() == StatusCode::kUnimplemented) {
      by_kernels = CalibrateByCopies(device, r, std::move(p));  // it runs no PTX
    }
    OPSCOPE_ASSIGN_OR_RETURN(p, std::move(by_kernels));
    save(p);
    return p;
  }

  // Three arrays of doubles, touched once first so page faults are not timed.
  const int64_t n = std::max<int64_t>(p.buffer_bytes / 8, p.threads);
  std::vector<double> a(n, 1.0), b(n, 2.0), c(n, 0.5);
  std::vector<double> sinks(p.threads, 0.0);
  const double bytes = static_cast<double>(n) * 8;
  auto gbs = [&](double seconds, double arrays) { return arrays * bytes / seconds * 1e-9; };
  OPSCOPE_ASSIGN_OR_RETURN(double t_read, BestSeconds(device, p.threads, r.repetitions, [&](int64_t blk, int64_t blocks) {
    auto [lo, hi] = Share(blk, blocks, n);
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = lo;
    for (; i + 4 <= hi; i += 4) s0 += a[i], s1 += a[i + 1], s2 += a[i + 2], s3 += a[i + 3];
    for (; i < hi; ++i) s0 += a[i];
    sinks[blk] = s0 + s1 + s2 + s3;
  }));
  OPSCOPE_ASSIGN_OR_RETURN(double t_write, BestSeconds(device, p.threads, r.repetitions, [&](int64_t blk, int64_t blocks) {
    auto [lo, hi] = Share(blk, blocks, n);
    std::fill(a.begin() + lo, a.begin() + hi, 1.5);
  }));
  OPSCOPE_ASSIGN_OR_RETURN(double t_copy, BestSeconds(device, p.threads, r.repetitions, [&](int64_t blk, int64_t blocks) {
    auto [lo, hi] = Share(blk, blocks, n);
    std::memcpy(c.data() + lo, a.data() + lo, (hi - lo) * sizeof(double));
  }));
  std::vector<double> triad_rounds;
  OPSCOPE_ASSIGN_OR_RETURN(double t_triad, BestSeconds(device, p.threads, r.repetitions, [&](int64_t blk, int64_t blocks) {
    auto [lo, hi] = Share(blk, blocks, n);
    const double s = 3.0;
    for (int64_t i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];
  }, &triad_rounds));
  p.triad_spread_pct = SpreadPct(triad_rounds);
  p.rounds = r.repetitions;
  p.read_gbs = gbs(t_read, 1);
  p.write_gbs = gbs(t_write, 1);
  p.copy_gbs = gbs(t_copy, 2);
  p.triad_gbs = gbs(t_triad, 3);

  std::vector<float> fsinks(p.threads);
  const FmaLoop<float> f32 = PickFmaF32();
  const FmaLoop<double> f64 = PickFmaF64();
  OPSCOPE_ASSIGN_OR_RETURN(double t_f32, BestSeconds(device, p.threads, r.repetitions, [&](int64_t blk, int64_t) {
    fsinks[blk] = f32.run(r.fma_steps);
  }));
  OPSCOPE_ASSIGN_OR_RETURN(double t_f64, BestSeconds(device, p.threads, r.repetitions, [&](int64_t blk, int64_t) {
    sinks[blk] = f64.run(r.fma_steps);
  }));
  const double steps = static_cast<double>(r.fma_steps) * p.threads;
  p.fma_gflops_f32 = 2.0 * f32.lanes * steps / t_f32 * 1e-9;
  p.fma_gflops_f64 = 2.0 * f64.lanes * steps / t_f64 * 1e-9;
  OPSCOPE_ASSIGN_OR_RETURN(p.gemm_gflops_f32, GemmGflops(device, p.threads, r.gemm_n, r.repetitions, true));
  p.gemm_f32_kernel = kBlasGemm;
  // float32's roof is the fastest GEMM the kernels have: our packed one
  // (what MatMul, Gemm and the convolutions run) where it beats OpenBLAS's
  // (on Zen 5, 512-bit: about 450 GFLOP/s on 2 cores against OpenBLAS's
  // 250, and every convolution read "efficiency 180%").
  if (dense::PackedGemmFn packed = dense::Avx2PackedGemm(); packed != nullptr) {
    OPSCOPE_ASSIGN_OR_RETURN(double ours, GemmGflops(device, p.threads, r.gemm_n, r.repetitions, true, packed));
    if (ours > p.gemm_gflops_f32) {
      p.gemm_gflops_f32 = ours;
      p.gemm_f32_kernel = dense::WideBlocks() ? "opscope packed GEMM, AVX-512" : "opscope packed GEMM, AVX2";
    }
  }
  OPSCOPE_ASSIGN_OR_RETURN(p.gemm_gflops_f64, GemmGflops(device, p.threads, r.gemm_n, r.repetitions, false));

  // One empty launch and its synchronisation, the median of 200.
  {
    Stream& s = device->default_stream();
    KernelLaunch empty{.name = "opscope_empty", .config = {.grid = {1, 1, 1}, .block = {1, 1, 1}},
                       .host = [](const BlockContext&) {}};
    std::vector<double> us;
    for (int i = 0; i < 200; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      OPSCOPE_RETURN_IF_ERROR(s.Launch(empty));
      OPSCOPE_RETURN_IF_ERROR(s.Synchronize());
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
    p.launch_us = us[us.size() / 2];
  }

  save(p);
  return p;
}

std::string CalibrationProvenance(const DevicePeaks& p, int64_t now_unix) {
  std::string s = "calibrated";
  if (!p.from_cache) {
    s += " now";
  } else if (p.measured_at <= 0) {
    s += " at an unknown time (an older cache: --refresh states it)";
  } else {
    const int64_t age = std::max<int64_t>(0, now_unix - p.measured_at);
    char when[48];
    if (age < 120) std::snprintf(when, sizeof when, " %lld s ago", static_cast<long long>(age));
    else if (age < 7200) std::snprintf(when, sizeof when, " %lld min ago", static_cast<long long>(age / 60));
    else if (age < 172800) std::snprintf(when, sizeof when, " %lld h ago", static_cast<long long>(age / 3600));
    else std::snprintf(when, sizeof when, " %lld days ago", static_cast<long long>(age / 86400));
    s += when;
  }
  char detail[96];
  if (p.load_average >= 0) {
    std::snprintf(detail, sizeof detail, " under load %.2f", p.load_average);
    s += detail;
  }
  if (p.triad_spread_pct >= 0 && p.rounds > 0) {
    std::snprintf(detail, sizeof detail, ", triad spread %.0f%% over %d rounds", p.triad_spread_pct, p.rounds);
    s += detail;
  }
  // A machine busy with other work gives roofs below its own: say so.
  if (p.load_average >= 0.5 * std::max(1, p.threads)) s += " (a loaded machine: `ops-debug calibrate --refresh` when it is quiet)";
  return s;
}

std::string DevicePeaksJson(const DevicePeaks& p) {
  nlohmann::json j = ToJson(p);
  j["from_cache"] = p.from_cache;
  j["cache_file"] = p.cache_file;
  return JsonText(j, 2) + "\n";
}

}  // namespace opscope
