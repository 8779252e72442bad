// The static kernel checks on purpose-built fixtures (tests/static_check/:
// one buggy file and its fixed twin per check, and a .cu with one bug per
// check), and on every real kernel of this project, where they must stay
// silent: a check that cries wolf on the kernels it is shown with is not used.
#include "analysis/static_check/static_check.h"

#include "analysis/static_check/libclang_leaks.h"  // the one file of opscope_unit_tests that includes it

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace opscope {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = OPSCOPE_SOURCE_DIR;
const std::vector<std::string> kFlags = {"-I", (kSource / "include").string(), "-I", (kSource / "src").string()};

struct Expected {
  int line, column;
  std::string check, kernel;
};

std::vector<Expected> Found(const StaticCheckResult& r) {
  std::vector<Expected> out;
  for (const StaticFinding& f : r.findings) out.push_back({f.line, f.column, f.check, f.kernel});
  return out;
}

void ExpectFindings(const std::string& fixture, const std::vector<Expected>& expected) {
  const std::string path = (kSource / "tests" / "static_check" / fixture).string();
  auto r = CheckKernelSource(path, kFlags);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->parse_errors.empty()) << r->parse_errors.front();
  const std::vector<Expected> found = Found(*r);
  ASSERT_EQ(found.size(), expected.size()) << fixture;
  for (size_t i = 0; i < found.size(); ++i) {
    EXPECT_EQ(std::tie(found[i].line, found[i].column, found[i].check, found[i].kernel),
              std::tie(expected[i].line, expected[i].column, expected[i].check, expected[i].kernel))
        << fixture << " finding " << i << ": " << r->findings[i].message;
    EXPECT_EQ(r->findings[i].file, path);
    EXPECT_EQ(r->findings[i].message.find('\n'), std::string::npos) << "one line";
  }
}

TEST(StaticCheck, ByteOffsetWithoutElementSize) {
  ExpectFindings("byte_offset.cc", {{21, 52, "byte-offset-without-element-size", "BytesToDoubleCpu"},
                                    {30, 31, "byte-offset-without-element-size", "CopyRowCpu"}});
  ExpectFindings("byte_offset_fixed.cc", {});
}

TEST(StaticCheck, LoopBoundInclusive) {
  ExpectFindings("loop_bound.cc", {{19, 25, "loop-bound-inclusive", "CumsumCpu"},
                                   {30, 27, "loop-bound-inclusive", "SquareCpu"}});
  ExpectFindings("loop_bound_fixed.cc", {});
}

TEST(StaticCheck, MissingTailGuard) {
  ExpectFindings("tail_guard.cc", {{25, 37, "missing-tail-guard", "ScaleCpu"}});
  ExpectFindings("tail_guard_fixed.cc", {});
}

TEST(StaticCheck, IndexReadBeforeSet) {
  ExpectFindings("read_before_set.cc", {{21, 47, "index-read-before-set", "PickRowCpu"},
                                        {30, 20, "index-read-before-set", "TailCpu"}});
  ExpectFindings("read_before_set_fixed.cc", {});
}

TEST(StaticCheck, CudaKernelsOneBugPerCheck) {
  ExpectFindings("kernels.cu", {{9, 3, "missing-tail-guard", "scale_kernel"},
                                {14, 62, "byte-offset-without-element-size", "unpack_kernel"},
                                {18, 57, "loop-bound-inclusive", "clear_kernel"},
                                {26, 12, "index-read-before-set", "shift_kernel"}});
  ExpectFindings("kernels_fixed.cu", {});
}

TEST(StaticCheck, MessagesNameTheVariablesAndTheFix) {
  auto r = CheckKernelSource((kSource / "tests/static_check/byte_offset.cc").string(), kFlags);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->findings.size(), 2u);
  EXPECT_NE(r->findings[0].message.find("`i`"), std::string::npos) << r->findings[0].message;
  EXPECT_NE(r->findings[0].message.find("`raw`"), std::string::npos) << r->findings[0].message;
  EXPECT_NE(r->findings[0].message.find("sizeof(float)"), std::string::npos) << r->findings[0].message;
  EXPECT_EQ(r->findings[0].severity, "error");
}

// Every kernel source of the examples and the built-in ops: parsed without an
// error (so the silence means something) and with no finding.
// The project's own kernel files, one case each: libclang takes over a
// second a file, and ctest runs the cases side by side.
std::vector<std::string> ProjectKernelFiles() {
  std::vector<std::string> files;
  for (const char* dir : {"examples/my_ops", "examples/perf_ops", "examples/harness_demo", "src/ops/builtin"}) {
    for (const fs::directory_entry& e : fs::directory_iterator(kSource / dir)) {
      // Kernel sources, not their tests (gtest's headers would double the parse for no kernel).
      const std::string name = e.path().filename().string();
      if (e.path().extension() == ".cc" && !name.ends_with("_test.cc")) files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(StaticCheck, TheProjectsKernelFilesAreAllThere) {
  EXPECT_GT(ProjectKernelFiles().size(), 30u) << "the folders lost their kernels";
}

class StaticCheckProjectKernel : public ::testing::TestWithParam<std::string> {};

TEST_P(StaticCheckProjectKernel, HasNoFinding) {
  // A file named *_avx2.cc is built with -mavx2 -mfma (src/CMakeLists.txt): parsed as it is compiled.
  std::vector<std::string> flags = kFlags;
  if (GetParam().ends_with("_avx2.cc")) flags.insert(flags.end(), {"-mavx2", "-mfma"});
  auto r = CheckKernelSource(GetParam(), flags);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->parse_errors.empty()) << GetParam() << ": " << r->parse_errors.front();
  for (const StaticFinding& f : r->findings) {
    ADD_FAILURE() << f.file << ":" << f.line << ":" << f.column << ": " << f.message << " [" << f.check << "]";
  }
}

// Named by folder and file: perf_ops_window_l2norm_cc.
INSTANTIATE_TEST_SUITE_P(Files, StaticCheckProjectKernel, ::testing::ValuesIn(ProjectKernelFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           const fs::path p(info.param);
                           std::string name = p.parent_path().filename().string() + "_" + p.filename().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

class StaticCheckInput : public ::testing::Test {
 protected:
  fs::path Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("static_check_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(StaticCheckInput, MissingFileIsAnErrorNamingIt) {
  auto r = CheckKernelSource((dir_ / "absent.cc").string(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("absent.cc"), std::string::npos) << r.status().ToString();
}

TEST_F(StaticCheckInput, NotASourceIsAnError) {
  auto r = CheckKernelSource(Write("notes.txt", "int main() {}\n").string(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected a kernel source"), std::string::npos) << r.status().ToString();
}

TEST_F(StaticCheckInput, NothingParsableIsAnError) {
  auto r = CheckKernelSource(Write("garbage.cc", "\x7f\x45\x4c\x46 }}} ((( \n").string(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("garbage.cc"), std::string::npos) << r.status().ToString();
}

// A missing header: clang's errors are listed, and the checks still run on
// what it parsed (here the loop bound, which needs no header).
TEST_F(StaticCheckInput, ParseErrorsAreListedAndTheChecksStillRun) {
  const fs::path p = Write("partial.cc",
                           "#include \"not_there.h\"\n"
                           "struct Buffer { long numel() const; };\n"
                           "void Fill(const Buffer& b, float* y) {\n"
                           "  for (long i = 0; i <= b.numel(); ++i) y[i] = 0;\n"
                           "}\n");
  auto r = CheckKernelSource(p.string(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_FALSE(r->parse_errors.empty());
  EXPECT_NE(r->parse_errors.front().find("not_there.h"), std::string::npos) << r->parse_errors.front();
  ASSERT_EQ(r->findings.size(), 1u);
  EXPECT_EQ(r->findings[0].check, "loop-bound-inclusive");
  EXPECT_EQ(r->findings[0].kernel, "Fill");
}

TEST_F(StaticCheckInput, FindingsInHeadersAreNotReported) {
  Write("bad.h", "inline void Clear(float* y, int n) { for (int i = 0; i <= n; ++i) y[i] = 0; }\n");
  const fs::path p = Write("uses_header.cc", "#include \"bad.h\"\nvoid Use(float* y) { Clear(y, 4); }\n");
  auto r = CheckKernelSource(p.string(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->parse_errors.empty());
  EXPECT_TRUE(r->findings.empty()) << r->findings.front().message;
}

TEST(StaticCheckJson, SchemaFileFindingsAndParseErrors) {
  StaticCheckResult r;
  r.findings.push_back({.file = "k.cu", .line = 3, .column = 7, .severity = "warning", .kernel = "scale",
                        .check = "missing-tail-guard", .message = "m"});
  r.parse_errors.push_back("k.cu:1:10: error: x");
  const nlohmann::json j = nlohmann::json::parse(StaticCheckJson("k.cu", r));
  EXPECT_EQ(j["schema"], "opscope.static-check/1");
  EXPECT_EQ(j["file"], "k.cu");
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["line"], 3);
  EXPECT_EQ(j["findings"][0]["column"], 7);
  EXPECT_EQ(j["findings"][0]["kernel"], "scale");
  EXPECT_EQ(j["findings"][0]["check"], "missing-tail-guard");
  EXPECT_EQ(j["parse_errors"][0], "k.cu:1:10: error: x");
}

}  // namespace
}  // namespace opscope
