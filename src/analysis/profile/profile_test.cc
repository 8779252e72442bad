// ops-debug profile as a library caller meets it: the order statistics, the
// phases the dispatcher measured, the roofline at the median, the profile
// section of report.json, timeline.json as Perfetto's importer needs it, and
// the bad requests that fail before anything runs or is written. Nothing here
// asserts a speed: only what the numbers must satisfy among themselves.
#include "opscope/profile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "opscope/dispatch.h"
#include "opscope/npy.h"

namespace opscope {
namespace {

class ProfileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("opscope_profile_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

// Given roofs: no calibration, and bounds computable by hand.
ProfileRequest ReluRequest(int64_t n, int iterations) {
  return ProfileRequest{.run = {.op = "Relu", .input_shapes = {Shape({n})}}, .warmup = 1, .iterations = iterations,
                        .peak_bw_gbs = 10, .peak_gflops = 100};
}

nlohmann::json ReadJson(const std::string& path) {
  auto bytes = ReadFile(path);
  EXPECT_TRUE(bytes.ok()) << path;
  return nlohmann::json::parse(bytes.ok() ? *bytes : std::string("null"));
}

TEST(TimingStats, QuantilesInterpolateBetweenRanksAsNumpyDoes) {
  // numpy.percentile([4, 1, 3, 2], [25, 50, 75]) == [1.75, 2.5, 3.25]
  TimingStats s = ComputeTimingStats({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.p25, 1.75);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.p75, 3.25);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.iqr(), 1.5);
  TimingStats one = ComputeTimingStats({7});
  EXPECT_DOUBLE_EQ(one.median, 7);
  EXPECT_DOUBLE_EQ(one.iqr(), 0);
  EXPECT_EQ(ComputeTimingStats({}).count, 0);
}

TEST(Profile, EveryCallIsTimedByPhaseAndHeldAgainstTheRoofline) {
  auto r = ProfileOpInstance(ReluRequest(1 << 16, 6));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->passed());
  ASSERT_TRUE(r->profile);
  const OpProfile& p = *r->profile;
  EXPECT_EQ(p.iterations, 6);
  EXPECT_EQ(p.api_us.count, 6);
  EXPECT_EQ(p.device_us.count, 6);
  EXPECT_EQ(p.unrecorded_api_us.count, 6);  // one unrecorded call per recorded one
  // The dispatcher's phases in order, then what lies around them.
  std::vector<std::string> names;
  for (const PhaseProfile& ph : p.phases) names.push_back(ph.name);
  EXPECT_EQ(names, (std::vector<std::string>{"validate", "infer", "place inputs", "allocate", "setup", "enqueue", "wait",
                                             "finish", "call"}));
  for (const PhaseProfile& ph : p.phases) {
    EXPECT_EQ(ph.us.count, 6) << ph.name;
    EXPECT_GE(ph.us.min, 0) << ph.name;
  }
  // The host waits for the kernel: the wait phase cannot be much shorter than
  // the device time minus the hand-off it overlaps; and no phase outlasts the call.
  for (const PhaseProfile& ph : p.phases) EXPECT_LE(ph.us.max, p.api_us.max) << ph.name;
  EXPECT_LE(p.device_us.min, p.api_us.max);
  // Relu: 4 bytes in, 4 out per element, 1 FLOP; at 10 GB/s the bound is the memory's.
  ASSERT_TRUE(p.cost);
  EXPECT_EQ(p.cost->bytes_read, 4 << 16);
  EXPECT_EQ(p.cost->bytes_written, 4 << 16);
  EXPECT_EQ(p.roofline.bound, Bound::kMemory);
  EXPECT_DOUBLE_EQ(p.roofline.lower_bound_us, (8 << 16) / 10e3);
  EXPECT_DOUBLE_EQ(p.roofline.measured_us, p.device_us.median);
  EXPECT_NEAR(p.roofline.efficiency(), p.roofline.lower_bound_us / p.device_us.median, 1e-12);
  EXPECT_EQ(p.launches.size(), 1u);
}

// --mode kernel reads no phase clock, --mode api records no device event:
// each scope measures what it names and says so, and claims nothing else.
TEST(Profile, TheScopeMeasuresWhatItNamesAndNothingElse) {
  ProfileRequest kernel = ReluRequest(1 << 14, 4);
  kernel.scope = ProfileScope::kKernel;
  auto k = ProfileOpInstance(kernel);
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  ASSERT_TRUE(k->profile);
  EXPECT_EQ(k->profile->scope, ProfileScope::kKernel);
  EXPECT_EQ(k->profile->device_us.count, 4);
  EXPECT_EQ(k->profile->api_us.count, 4) << "the whole call is still the caller's time";
  EXPECT_TRUE(k->profile->phases.empty());
  EXPECT_DOUBLE_EQ(k->profile->roofline.measured_us, k->profile->device_us.median);

  ProfileRequest api = ReluRequest(1 << 14, 4);
  api.scope = ProfileScope::kApi;
  auto a = ProfileOpInstance(api);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(a->profile);
  EXPECT_EQ(a->profile->device_us.count, 0);
  EXPECT_LT(a->profile->roofline.measured_us, 0) << "no device time, no point on the roofline";
  EXPECT_TRUE(a->profile->suspects.empty());
  ASSERT_FALSE(a->profile->phases.empty());
  EXPECT_EQ(a->profile->phases.front().us.count, 4);

  std::ostringstream kt, at;
  PrintProfile(*k, kt, false);
  PrintProfile(*a, at, false);
  EXPECT_NE(kt.str().find("scope kernel"), std::string::npos) << kt.str();
  EXPECT_NE(kt.str().find("phases not timed"), std::string::npos) << kt.str();
  EXPECT_NE(at.str().find("device time not measured"), std::string::npos) << at.str();
  EXPECT_EQ(at.str().find("device    kernel"), std::string::npos) << at.str();
  EXPECT_EQ(ParseProfileScope("api").value(), ProfileScope::kApi);
  EXPECT_EQ(ParseProfileScope("full").value(), ProfileScope::kFull);
  EXPECT_EQ(ParseProfileScope("kernels").status().message().rfind("scope 'kernels': expected full", 0), 0u);
}

// Roofs given as they are (a sweep's): each dtype meets its own compute roof.
TEST(Profile, GivenRoofsKeepEachDtypesComputeRoof) {
  const RoofPeaks roofs{.bandwidth_gbs = 1000, .gflops_f32 = 1000, .gflops_f64 = 0.001, .source = "given by the test"};
  for (DType dtype : {DType::kF32, DType::kF64}) {
    ProfileRequest req{.run = {.op = "Add", .input_shapes = {Shape({4096}), Shape({4096})}, .dtypes = {dtype}},
                       .warmup = 0, .iterations = 2, .peaks = roofs};
    auto r = ProfileOpInstance(req);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->profile);
    const RooflinePoint& p = r->profile->roofline;
    EXPECT_EQ(r->profile->peaks_note, "given by the test");
    EXPECT_DOUBLE_EQ(p.compute_bound_us, 4096 / (roofs.GflopsFor(dtype) * 1e3)) << DTypeName(dtype);
    EXPECT_EQ(p.bound, dtype == DType::kF64 ? Bound::kCompute : Bound::kMemory) << DTypeName(dtype);
  }
}

// A chain's later stage runs on what the stage before it wrote, not on fresh
// data of that shape: Neg's outputs (the seed's values negated) are Relu's inputs.
TEST(Profile, AChainStageRunsOnTheOutputsOfTheStageBefore) {
  ProfileRequest base{.run = {.input_shapes = {Shape({1024})}}, .warmup = 0, .iterations = 2, .peak_bw_gbs = 10,
                      .peak_gflops = 100};
  auto c = ProfileChain(base, "Neg>Relu");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->stages.size(), 2u);
  const OpRunReport& neg = c->stages[0].report;
  const OpRunReport& relu = c->stages[1].report;
  ASSERT_TRUE(neg.passed() && relu.passed());
  EXPECT_TRUE(c->stages[0].note.empty()) << c->stages[0].note;
  ASSERT_EQ(relu.inputs.size(), 1u);
  const Tensor& fed = relu.inputs[0].tensor;
  const Tensor& wrote = neg.outputs[0].actual;
  ASSERT_EQ(fed.shape(), wrote.shape());
  ASSERT_EQ(fed.nbytes(), wrote.nbytes());
  EXPECT_EQ(std::memcmp(fed.raw_data(), wrote.raw_data(), fed.nbytes()), 0);
  // And those are the negated inputs of stage 1, element by element.
  const float* x = neg.inputs[0].tensor.data<float>();
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(fed.data<float>()[i], -x[i]) << i;
}

TEST(Profile, AnOpWithoutACostModelIsTimedAndSaidToHaveNone) {
  auto body = [](KernelContext& ctx) {
    return ctx.ParallelFor("nocost", ctx.in(0).numel(), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ctx.out(0).FlatSetFromDouble(i, ctx.in(0).FlatGetAsDouble(i));
    });
  };
  static const bool registered = OpRegistry::Global()
                                     .Register(OpDef("profile_test_nocost").Input("x").Output("y").SameShape()
                                                   .Kernel("cpu", body).Reference(body).schema())
                                     .ok();
  ASSERT_TRUE(registered);
  ProfileRequest req = ReluRequest(256, 3);
  req.run.op = "profile_test_nocost";
  auto r = ProfileOpInstance(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->profile);
  EXPECT_FALSE(r->profile->cost);
  EXPECT_FALSE(r->profile->roofline.has_cost);
  EXPECT_EQ(r->profile->roofline.bound, Bound::kNone);
  EXPECT_EQ(r->profile->roofline.efficiency(), -1);
  EXPECT_EQ(r->profile->device_us.count, 3);
  std::ostringstream text;
  PrintProfile(*r, text, false);
  EXPECT_NE(text.str().find("no cost model: timed only, no bound"), std::string::npos) << text.str();
}

TEST_F(ProfileFiles, ReportHoldsTheRunAndItsProfileUnderOneOpId) {
  ProfileRequest req = ReluRequest(4096, 4);
  req.run.report = Path("report.json");
  auto r = ProfileOpInstance(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  nlohmann::json j = ReadJson(req.run.report);
  EXPECT_EQ(j["schema"], "opscope.report/1");
  EXPECT_EQ(j["status"], "passed");
  ASSERT_TRUE(j.contains("profile"));
  const nlohmann::json& p = j["profile"];
  EXPECT_EQ(p["scope"], "full");
  EXPECT_EQ(p["iterations"], 4);
  EXPECT_EQ(p["device"]["count"], 4);
  EXPECT_EQ(p["roofline"]["bound"], "memory");
  EXPECT_EQ(p["cost"]["bytes_read"], 4096 * 4);
  EXPECT_DOUBLE_EQ(p["peaks"]["bandwidth_gbs"].get<double>(), 10);
  EXPECT_EQ(p["phases"].size(), 9u);
  EXPECT_LE(p["api"]["p25_us"].get<double>(), p["api"]["median_us"].get<double>());
  EXPECT_LE(p["api"]["median_us"].get<double>(), p["api"]["p75_us"].get<double>());
}

// What Perfetto's JSON importer needs: X events with ts and dur, M events
// naming every process and thread used, durations nested per thread, and
// each flow's start and finish paired.
TEST_F(ProfileFiles, TimelineIsATraceEventFilePerfettoCanImport) {
  ProfileRequest req = ReluRequest(1 << 14, 5);
  req.timeline = Path("timeline.json");
  auto r = ProfileOpInstance(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->profile->timeline_file, req.timeline);
  nlohmann::json doc = ReadJson(req.timeline);
  EXPECT_EQ(doc["schema"], "opscope.timeline/1");
  const nlohmann::json& events = doc["traceEvents"];
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;
  std::map<int64_t, int> flow_ends;
  int api = 0, kernels = 0, phases = 0;
  for (const nlohmann::json& e : events) {
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
      if (e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
      continue;
    }
    if (ph == "X") {
      ASSERT_TRUE(e.contains("ts") && e.contains("dur")) << e.dump();
      ASSERT_GE(e["dur"].get<double>(), 0) << e.dump();
      spans[{e["pid"], e["tid"]}].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
      api += e["cat"] == "api";
      phases += e["cat"] == "phase";
      if (e["cat"] == "kernel") {
        ++kernels;
        const nlohmann::json& a = e["args"];
        EXPECT_EQ(a["op"], "Relu");
        EXPECT_EQ(a["op_id"], nlohmann::json::parse(OpReportJson(*r))["op_id"]);  // the instance's op_id
        EXPECT_EQ(a["grid"].size(), 3u);
        EXPECT_EQ(a["block"].size(), 3u);
        EXPECT_TRUE(a.contains("vector_width"));
        ASSERT_EQ(a["inputs"].size(), 1u);
        EXPECT_EQ(a["inputs"][0]["bytes"], 4 << 14);
        EXPECT_EQ(a["outputs"][0]["address"].get<std::string>().rfind("0x", 0), 0u);
        EXPECT_EQ(a["bytes_read"], 4 << 14);
        EXPECT_EQ(a["flops"], 1 << 14);
        EXPECT_EQ(a["bound"], "memory");
      }
      continue;
    }
    if (ph == "s") flow_ends[e["id"]] += 1;
    if (ph == "f") {
      EXPECT_EQ(e["bp"], "e");
      flow_ends[e["id"]] += 2;
    }
  }
  EXPECT_EQ(api, 5);
  EXPECT_EQ(kernels, 5);
  EXPECT_EQ(phases, 5 * kDispatchPhaseCount);
  EXPECT_EQ(flow_ends.size(), 5u);
  for (const auto& [id, ends] : flow_ends) EXPECT_EQ(ends, 3) << "flow " << id << " lacks its start or its finish";
  for (const auto& [lane, list] : spans) {
    EXPECT_TRUE(processes.count(lane.first)) << "pid " << lane.first << " is not named";
    EXPECT_TRUE(threads.count(lane)) << "tid " << lane.second << " of pid " << lane.first << " is not named";
    // Nested per thread: sorted by start (longest first on ties), each span
    // either ends before the next starts or contains it.
    std::vector<std::pair<double, double>> sorted = list;
    std::sort(sorted.begin(), sorted.end(), [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
    // Times are whole nanoseconds written as microseconds: compare to within a fraction of one.
    constexpr double kNs = 1e-3, kSlack = kNs / 4;
    std::vector<double> open_ends;
    for (const auto& [b, e] : sorted) {
      while (!open_ends.empty() && open_ends.back() <= b + kSlack) open_ends.pop_back();
      if (!open_ends.empty()) EXPECT_LE(e, open_ends.back() + kSlack) << "span [" << b << ", " << e << "] overlaps its parent";
      open_ends.push_back(e);
    }
  }
}

TEST_F(ProfileFiles, BadRequestsFailBeforeAnythingRunsOrIsWritten) {
  auto message = [&](ProfileRequest req) {
    req.timeline = req.timeline.empty() ? Path("timeline.json") : req.timeline;
    req.run.report = Path("report.json");
    auto r = ProfileOpInstance(req);
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(std::filesystem::is_empty(dir_)) << "a bad request wrote a file";
    return r.ok() ? std::string() : r.status().message();
  };
  ProfileRequest zero = ReluRequest(16, 0);
  EXPECT_EQ(message(zero), "iterations: expected at least 1 call to time, got 0");
  ProfileRequest warm = ReluRequest(16, 2);
  warm.warmup = -1;
  EXPECT_EQ(message(warm), "warmup: expected 0 or more calls, got -1");
  ProfileRequest bw = ReluRequest(16, 2);
  bw.peak_bw_gbs = -3;
  EXPECT_EQ(message(bw).rfind("peak_bw_gbs: expected a positive number of GB/s", 0), 0u);
  ProfileRequest nowhere = ReluRequest(16, 2);
  nowhere.timeline = Path("missing/timeline.json");
  EXPECT_EQ(message(nowhere), "timeline " + nowhere.timeline + ": no folder " + Path("missing"));
  ProfileRequest tunable = ReluRequest(16, 2);
  tunable.run.tunables = {{"blok", 64}};
  EXPECT_EQ(message(tunable).rfind("tunables: op Relu has no tunable 'blok'", 0), 0u);
}

}  // namespace
}  // namespace opscope
