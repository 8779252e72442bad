// Golden files for the JSON the tools write (graph.json, summary.json,
// trace.json from `inspector-cli run`, report.json from `ops-debug run`): the
// real binaries run on small example models and ops, what differs from run to
// run (times, addresses, op_ids, run ids, paths) is masked, and the rest must equal
// tests/golden/<case>.json exactly, so that a format change shows up in
// review as a diff of those files.
//
// The inputs stay under 64K elements: the compare engine then runs on one
// thread, so its sums (mean error, rmse, cosine) do not depend on the core count.
//
// On a difference the test prints a line diff and how to accept it:
//   OPSCOPE_UPDATE_GOLDEN=1 build/bin/golden_test   (then review git diff tests/golden)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tool_test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace ::opscope::testing;  // tool_test_util.h

const std::string kSource = OPSCOPE_SOURCE_DIR;
const std::string kBin = std::string(OPSCOPE_BINARY_DIR) + "/bin/";

// Keys whose value is a time, a rate derived from a time, or a share of time:
// numbers that differ on every run (an efficiency is a bound over a time;
// which iteration is the median one depends on the times too).
// The key stays, its value becomes "<time>".
bool IsTimeKey(const std::string& key) {
  static const std::regex time_key(
      "(^|_)(us|ms|ns|sec|seconds|ts|dur|time|elapsed|pct|share|gbps|gflops|bandwidth|throughput|calibrated|"
      "offset|start|end|device_ms|host_ms|efficiency|iteration)($|_)");
  return std::regex_search(key, time_key);
}

// Keys whose value depends on addresses or the process (op_id hashes input
// addresses, see DESIGN.md section 1).
bool IsProcessKey(const std::string& key) {
  static const std::set<std::string> keys = {"op_id", "address", "addr", "ptr", "hostname", "timestamp", "date",
                                             "created"};
  return keys.count(key) > 0;
}

struct Masker {
  std::vector<std::pair<std::string, std::string>> paths;  // text -> placeholder, longest first

  std::string MaskString(std::string s) const {
    for (const auto& [text, placeholder] : paths) {
      for (size_t at; (at = s.find(text)) != std::string::npos;) s.replace(at, text.size(), placeholder);
    }
    // Whole or elided ("0x561d…9440") addresses.
    static const std::regex addr("0x[0-9a-fA-F]{4,}(\u2026[0-9a-fA-F]+)?");
    static const std::regex micros("[0-9]+(\\.[0-9]+)? ?(us|ms|ns|s)\\b");
    s = std::regex_replace(s, addr, "<addr>");
    return std::regex_replace(s, micros, "<time>");
  }

  json Mask(const json& j, const std::string& key) const {
    if (IsProcessKey(key)) return j.is_null() ? j : json("<" + key + ">");
    // Which nodes' times vary tenfold between iterations is the machine's
    // doing on the day: the key stays, its findings do not.
    if (key == "variance") return "<findings of the run's times>";
    // A run's identity (graph/run/run_identity.h): its id is new every
    // run; the model's fingerprint stays, it is the example's bytes.
    if (key == "run" && j.is_object() && j.contains("id")) {
      json out = Mask(j, "");
      out["id"] = "<run_id>";
      return out;
    }
    if (j.is_object()) {
      json out = json::object();
      for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = Mask(it.value(), it.key());
      return out;
    }
    if (j.is_array()) {
      json out = json::array();
      for (const auto& e : j) out.push_back(Mask(e, key));
      return out;
    }
    if (j.is_number() && IsTimeKey(key)) return "<time>";
    if (j.is_string()) return MaskString(j.get<std::string>());
    return j;
  }
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream is(text);
  for (std::string line; std::getline(is, line);) out.push_back(line);
  return out;
}

// A line diff (longest common subsequence), "-" golden, "+" actual, with two
// lines of context around each change; at most `limit` lines.
std::string Diff(const std::string& golden, const std::string& actual, int limit = 80) {
  const std::vector<std::string> a = Lines(golden), b = Lines(actual);
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  std::vector<std::pair<char, std::string>> script;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      script.push_back({' ', a[i++]});
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      script.push_back({'-', a[i++]});
    } else {
      script.push_back({'+', b[j++]});
    }
  }
  std::vector<bool> show(script.size(), false);
  for (size_t k = 0; k < script.size(); ++k) {
    if (script[k].first == ' ') continue;
    for (size_t c = k >= 2 ? k - 2 : 0; c <= k + 2 && c < script.size(); ++c) show[c] = true;
  }
  std::string out;
  int lines = 0;
  bool gap = false;
  for (size_t k = 0; k < script.size(); ++k) {
    if (!show[k]) {
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out += "  ...\n";
    gap = false;
    if (++lines > limit) {
      out += "  (diff cut at " + std::to_string(limit) + " lines)\n";
      break;
    }
    out += std::string(1, script[k].first) + " " + script[k].second + "\n";
  }
  return out;
}

bool UpdateRequested() {
  const char* v = std::getenv("OPSCOPE_UPDATE_GOLDEN");
  return v && *v && std::string(v) != "0";
}

// Compares the masked `actual` with tests/golden/<name>.json, or rewrites it
// under OPSCOPE_UPDATE_GOLDEN=1.
void ExpectGolden(const std::string& name, const json& masked) {
  const fs::path golden = fs::path(kSource) / "tests" / "golden" / (name + ".json");
  const std::string actual = masked.dump(1) + "\n";
  if (UpdateRequested()) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << actual;
    std::cout << "wrote " << golden.string() << "\n";
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden.string()
                                  << " is missing: run with OPSCOPE_UPDATE_GOLDEN=1 to write it, then review it";
  const std::string expected = Slurp(golden);
  if (expected != actual) {
    ADD_FAILURE() << name << ".json differs from its golden file (- golden, + this run, after masking):\n"
                  << Diff(expected, actual) << "If the change is intended: OPSCOPE_UPDATE_GOLDEN=1 "
                  << kBin << "golden_test, then review git diff tests/golden/";
  }
}

json ReadJson(const fs::path& p) {
  std::ifstream f(p);
  EXPECT_TRUE(f.good()) << p.string() << " was not written";
  if (!f.good()) return json();
  try {
    return json::parse(f);
  } catch (const json::exception& e) {
    ADD_FAILURE() << p.string() << ": " << e.what();
    return json();
  }
}

class Golden : public ::testing::Test {
 protected:
  Masker MaskerFor(const TempDir& dir) const {
    Masker m;
    m.paths = {{dir.path().string(), "<out>"}, {std::string(OPSCOPE_BINARY_DIR), "<build>"}, {kSource, "<src>"}};
    std::sort(m.paths.begin(), m.paths.end(), [](auto& x, auto& y) { return x.first.size() > y.first.size(); });
    return m;
  }
};

// summary.json lists op types and top tasks by time, which differs from run to
// run: sorted by name and task id here, so only their content is compared.
json CanonicalSummary(json j) {
  auto sort_by = [](json& array, const char* key) {
    if (!array.is_array()) return;
    std::stable_sort(array.begin(), array.end(), [key](const json& a, const json& b) { return a[key] < b[key]; });
  };
  sort_by(j["op_types"], "op_type");
  sort_by(j["top_tasks"], "task_id");
  // Which suspects a run has depends on its times (a small grid counts only
  // far below its bound), so the golden keeps the key, not the list, nor
  // the fields (they depend on the kinds present); tests/hot_chain_test.cc
  // checks the contents.
  if (j["suspects"].is_array()) j["suspects"] = "<array: timing-dependent>";
  return j;
}

TEST_F(Golden, InspectorRunConstIf) {
  TempDir dir;
  ToolResult r = Shell(kBin + "inspector-cli run " + kSource + "/examples/models/const_if.onnx --output-dir " +
                       dir.path().string() + " --peak-bw 10 --peak-flops 50");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Masker m = MaskerFor(dir);
  for (const std::string file : {"graph", "summary", "trace"}) {
    SCOPED_TRACE(file);
    json masked = m.Mask(ReadJson(dir.path() / (file + ".json")), "");
    ExpectGolden("const_if." + file, file == "summary" ? CanonicalSummary(masked) : masked);
  }
}

TEST_F(Golden, OpsDebugRunReportRelu) {
  TempDir dir;
  const fs::path report = dir.path() / "report.json";
  ToolResult r = Shell(kBin + "ops-debug run --op Relu --input-shapes '[2,3]' --report " + report.string());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ExpectGolden("ops_debug_relu.report", MaskerFor(dir).Mask(ReadJson(report), ""));
}

// A failing op: the compare, the mismatch pattern and the reproducer.
TEST_F(Golden, OpsDebugRunReportFailingPool) {
  TempDir dir;
  const fs::path report = dir.path() / "report.json";
  ToolResult r = Shell(kBin + "ops-debug run --plugin " + OPSCOPE_BINARY_DIR + "/lib/libbuggy_ops.so" +
                       " --op bug_avgpool2d --input-shapes '[1,2,6,6]' --seed 3 --repro-dir " +
                       (dir.path() / "repro").string() + " --report " + report.string());
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  ExpectGolden("ops_debug_bug_avgpool2d.report", MaskerFor(dir).Mask(ReadJson(report), ""));
}

}  // namespace
