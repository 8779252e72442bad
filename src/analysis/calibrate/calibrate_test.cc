// CalibrateDevice: every figure measured and positive, the cache keyed on the
// machine and read back, a damaged cache measured again. No test depends on
// how fast this machine is.
#include "opscope/calibrate.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "ops/builtin/dense_smallk.h"

namespace opscope {
namespace {

class Calibrate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("opscope_calibrate_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    const char* old = std::getenv("XDG_CACHE_HOME");
    if (old) old_ = old;
    had_ = old != nullptr;
    ::setenv("XDG_CACHE_HOME", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_) ::setenv("XDG_CACHE_HOME", old_.c_str(), 1);
    else ::unsetenv("XDG_CACHE_HOME");
    std::filesystem::remove_all(dir_);
  }
  // Small sizes: the behaviour, not the figures, is under test.
  CalibrateRequest Small() const {
    return {.device = "cpu", .buffer_bytes = 4 << 20, .gemm_n = 64, .repetitions = 2, .fma_steps = 1 << 14};
  }
  std::filesystem::path dir_;
  std::string old_;
  bool had_ = false;
};

TEST_F(Calibrate, EveryFigureIsMeasuredAndCached) {
  auto p = CalibrateDevice(Small());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->from_cache);
  for (double v : {p->read_gbs, p->write_gbs, p->copy_gbs, p->triad_gbs, p->fma_gflops_f32, p->fma_gflops_f64,
                   p->gemm_gflops_f32, p->gemm_gflops_f64, p->launch_us}) {
    EXPECT_TRUE(std::isfinite(v) && v > 0) << v;
  }
  EXPECT_EQ(p->buffer_bytes, 4 << 20);
  EXPECT_GE(p->threads, 1);
  EXPECT_NE(p->key.find("opscope "), std::string::npos) << p->key;
  ASSERT_EQ(p->cache_file.rfind((dir_ / "opscope").string(), 0), 0u) << p->cache_file;
  EXPECT_TRUE(std::filesystem::exists(p->cache_file));

  // When and under what it was measured, kept with the figures.
  EXPECT_GT(p->measured_at, 0);
  EXPECT_GE(p->triad_spread_pct, 0);
  EXPECT_EQ(p->rounds, 2);

  auto again = CalibrateDevice(Small());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->triad_gbs, p->triad_gbs);
  EXPECT_EQ(again->gemm_gflops_f32, p->gemm_gflops_f32);
  EXPECT_EQ(again->measured_at, p->measured_at);
  EXPECT_EQ(again->load_average, p->load_average);
  EXPECT_EQ(again->triad_spread_pct, p->triad_spread_pct);
  // The provenance says how old: two hours after the measurement.
  DevicePeaks aged = *again;
  aged.load_average = 0.25, aged.triad_spread_pct = 4, aged.rounds = 5, aged.threads = 2;
  EXPECT_EQ(CalibrationProvenance(aged, aged.measured_at + 2 * 3600 + 5),
            "calibrated 2 h ago under load 0.25, triad spread 4% over 5 rounds");
  aged.load_average = 1.5;  // of 2 threads: a loaded machine
  EXPECT_NE(CalibrationProvenance(aged, aged.measured_at + 30).find("calibrated 30 s ago under load 1.50"), std::string::npos);
  EXPECT_NE(CalibrationProvenance(aged, aged.measured_at + 30).find("a loaded machine: `ops-debug calibrate --refresh`"),
            std::string::npos);
  aged.measured_at = 0;  // a cache written before the field
  EXPECT_EQ(CalibrationProvenance(aged, 1000).rfind("calibrated at an unknown time", 0), 0u);

  CalibrateRequest refresh = Small();
  refresh.refresh = true;
  auto measured = CalibrateDevice(refresh);
  ASSERT_TRUE(measured.ok());
  EXPECT_FALSE(measured->from_cache);
}

TEST_F(Calibrate, ADamagedCacheIsMeasuredAgain) {
  auto p = CalibrateDevice(Small());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::ofstream(p->cache_file) << "{\"schema\": \"opscope.peaks/1\", \"key\": \"" << p->key << "\"}";
  auto again = CalibrateDevice(Small());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->from_cache);
  EXPECT_GT(again->triad_gbs, 0);
}

// float32's compute roof is the faster of OpenBLAS's GEMM and our packed
// one, named; a cache from before the name held OpenBLAS's figure alone and
// is measured again.
TEST_F(Calibrate, TheFloat32RoofNamesItsGemmAndAnUnnamedCacheIsMeasuredAgain) {
  auto p = CalibrateDevice(Small());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const std::string& name = p->gemm_f32_kernel;
  if (dense::Avx2PackedGemm() == nullptr) {
    EXPECT_EQ(name.find("opscope"), std::string::npos) << name;
  } else {
    EXPECT_TRUE(name == "OpenBLAS" || name == "plain fallback GEMM (no OpenBLAS in this build)" ||
                name == (dense::WideBlocks() ? "opscope packed GEMM, AVX-512" : "opscope packed GEMM, AVX2"))
        << name;
  }
  auto again = CalibrateDevice(Small());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->gemm_f32_kernel, name);

  std::string text;
  {
    std::ifstream in(p->cache_file);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  nlohmann::json j = nlohmann::json::parse(text);
  ASSERT_TRUE(j.contains("gemm_float32_kernel"));
  j.erase("gemm_float32_kernel");
  std::ofstream(p->cache_file) << j.dump();
  auto older = CalibrateDevice(Small());
  ASSERT_TRUE(older.ok()) << older.status().ToString();
  EXPECT_FALSE(older->from_cache);
}

TEST_F(Calibrate, AnotherSizeIsAnotherEntry) {
  auto p = CalibrateDevice(Small());
  ASSERT_TRUE(p.ok());
  CalibrateRequest bigger = Small();
  bigger.gemm_n = 96;
  auto q = CalibrateDevice(bigger);
  ASSERT_TRUE(q.ok());
  EXPECT_FALSE(q->from_cache);
  EXPECT_NE(q->cache_file, p->cache_file);
  CalibrateRequest longer = Small();
  longer.fma_steps *= 2;  // a longer FMA loop measures another figure
  auto f = CalibrateDevice(longer);
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->from_cache);
  EXPECT_NE(f->cache_file, p->cache_file);
}

TEST_F(Calibrate, BadRequestsNameTheField) {
  CalibrateRequest bad = Small();
  bad.device = "tpu";
  auto d = CalibrateDevice(bad);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("device: "), std::string::npos) << d.status().message();
  CalibrateRequest reps = Small();
  reps.repetitions = 0;
  auto r = CalibrateDevice(reps);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("repetitions: "), std::string::npos);
}

}  // namespace
}  // namespace opscope
