// Correctness against data nobody here wrote: every multi-node model of
// libonnx-testdata (pytorch-converted, pytorch-operator, simple) whose ops
// opscope runs goes through the whole runtime (import, compile with fusion,
// schedule on two streams, execute, map) on test_data_set_0's inputs, and
// its outputs are checked against the set's expected outputs with ONNX's
// backend-test tolerance (rtol 1e-3; atol 1e-5 here, looser than ONNX's 1e-7
// for float32 results near zero) and against an unfused, in-order run of the
// framework graph. Models skipped are counted with their reasons; a model
// that does not import is a failure, not a skip.
//
// Every model's outcome (pass, or skip with its reason) is pinned in
// tests/onnx_model_expected.txt: a model that does not reach its listed status
// fails the test by name. OPSCOPE_UPDATE_EXPECTED=1 rewrites the list from
// this run (review the diff).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>

#include "expected_status.h"
#include "graph/onnx/onnx_convert.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/run/mapping.h"
#include "graph/runtime/executor.h"
#include "graph/runtime/inorder_eval.h"
#include "graph/runtime/scheduler.h"

namespace opscope::graph {
namespace {

namespace fs = std::filesystem;
constexpr char kTestData[] = "/usr/share/libonnx-testdata/data";
constexpr double kRtol = 1e-3, kAtol = 1e-5;

// First mismatch as text; "" when every element is within tolerance.
std::string Compare(const Tensor& got, const Tensor& want, const std::string& what) {
  if (got.shape() != want.shape()) return what + ": shape " + got.shape().ToString() + " vs " + want.shape().ToString();
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.FlatGetAsDouble(i), w = want.FlatGetAsDouble(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (!(std::fabs(g - w) <= kAtol + kRtol * std::fabs(w))) {
      return what + "[" + std::to_string(i) + "]: got " + std::to_string(g) + ", expected " + std::to_string(w);
    }
  }
  return "";
}

std::vector<fs::path> SortedPb(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

struct Outcome {
  enum Kind { kPassed, kFailed, kSkipped } kind;
  std::string reason;
};

Outcome RunModel(const fs::path& dir, Device* cpu) {
  const fs::path data = dir / "test_data_set_0";
  if (!fs::exists(dir / "model.onnx") || !fs::exists(data)) return {Outcome::kSkipped, "no model.onnx / test_data_set_0"};
  StatusOr<Model> imported = ImportOnnx((dir / "model.onnx").string());
  if (!imported.ok()) return {Outcome::kFailed, "import: " + imported.status().ToString()};
  Model m = std::move(imported).value();
  for (const Node& n : m.framework.nodes()) {
    if (!n.executable) return {Outcome::kSkipped, "unsupported op " + n.op_type};
  }
  std::vector<std::string> inputs;
  for (const std::string& in : m.framework.inputs()) {
    const Value* v = m.framework.FindValue(in);
    if (v && !v->constant) inputs.push_back(in);
  }
  std::vector<fs::path> in_files = SortedPb(data, "input_"), out_files = SortedPb(data, "output_");
  if (in_files.size() != inputs.size()) return {Outcome::kSkipped, "test data input count differs from the graph's"};
  std::map<std::string, Tensor> fed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto t = ReadTensorProtoFile(in_files[i].string());
    if (!t.ok()) return {Outcome::kSkipped, "input data: " + std::string(StatusCodeName(t.status().code()))};
    fed[inputs[i]] = *t;
  }
  Status compiled = Compile(m);
  if (!compiled.ok()) return {Outcome::kFailed, "compile: " + compiled.ToString()};
  auto schedule = ScheduleGraph(m.compiled, {.compute_streams = 2});
  if (!schedule.ok()) return {Outcome::kFailed, "schedule: " + schedule.status().ToString()};
  auto run = Execute(m.compiled, *schedule, {.device = cpu, .inputs = fed});
  if (!run.ok()) return {Outcome::kFailed, "execute: " + run.status().ToString()};
  if (Status st = MapTasks(m, *schedule); !st.ok()) return {Outcome::kFailed, "map: " + st.ToString()};
  const auto& outs = m.compiled.outputs();
  if (out_files.size() != outs.size()) return {Outcome::kFailed, "output count differs from the test data's"};
  auto unfused = EvaluateInOrder(m.framework, fed, cpu);
  if (!unfused.ok()) return {Outcome::kFailed, "unfused run: " + unfused.status().ToString()};
  for (size_t i = 0; i < outs.size(); ++i) {
    auto want = ReadTensorProtoFile(out_files[i].string());
    if (!want.ok()) return {Outcome::kSkipped, "output data: " + std::string(StatusCodeName(want.status().code()))};
    auto got = run->outputs.find(outs[i]);
    if (got == run->outputs.end()) return {Outcome::kFailed, "no output '" + outs[i] + "'"};
    if (std::string e = Compare(got->second, *want, "output '" + outs[i] + "'"); !e.empty()) return {Outcome::kFailed, e};
    if (std::string e = Compare(got->second, unfused->at(outs[i]), "fused vs unfused '" + outs[i] + "'"); !e.empty()) {
      return {Outcome::kFailed, e};
    }
  }
  return {Outcome::kPassed, ""};
}

TEST(RuntimeOnnxModels, EverySupportedModelMatchesItsTestData) {
  if (!fs::exists(kTestData)) GTEST_FAIL() << kTestData << " is missing: apt-get install libonnx-testdata";
  const fs::path expected_path = fs::path(OPSCOPE_SOURCE_DIR) / "tests" / "onnx_model_expected.txt";
  ::opscope::testing::ExpectedList expected;
  std::string load_error;
  const bool update = ::opscope::testing::UpdateExpectedRequested();
  if (!expected.Load(expected_path, &load_error) && !update) GTEST_FAIL() << load_error;

  Device* cpu = GetDevice("cpu").value();
  int run = 0, passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int> skip_reasons;
  std::map<std::string, ::opscope::testing::CaseOutcome> observed;
  for (const char* set : {"pytorch-converted", "pytorch-operator", "simple"}) {
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(fs::path(kTestData) / set)) {
      if (e.is_directory()) dirs.push_back(e.path());
    }
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& dir : dirs) {
      Outcome o = RunModel(dir, cpu);
      const std::string name = std::string(set) + "/" + dir.filename().string();
      if (o.kind == Outcome::kSkipped) {
        ++skipped;
        ++skip_reasons[o.reason];
        observed[name] = {"skip", o.reason};
        continue;
      }
      ++run;
      if (o.kind == Outcome::kPassed) {
        ++passed;
        observed[name] = {"pass", ""};
      } else {
        ++failed;
        observed[name] = {"fail", o.reason};
        ADD_FAILURE() << name << ": " << o.reason;
      }
    }
  }
  std::cout << "ONNX model tests: " << run << " run, " << passed << " passed, " << failed << " failed, " << skipped
            << " skipped\n";
  for (const auto& [reason, count] : skip_reasons) std::cout << "  skipped " << count << ": " << reason << "\n";
  EXPECT_EQ(failed, 0);
  if (update) {
    const std::string error =
        expected.Write(observed, "# Expected status of every ONNX model test (tests/runtime_onnx_models_test.cc).\n");
    ASSERT_EQ(error, "");
    std::cout << "wrote " << expected_path.string() << " (" << observed.size() << " models): review the diff\n";
    return;
  }
  for (const std::string& line : expected.Differences(observed, /*complete=*/true)) ADD_FAILURE() << line;
}

}  // namespace
}  // namespace opscope::graph
