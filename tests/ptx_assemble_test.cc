// Every PTX text the project ships (calibration kernels, the example plugin's
// cuda kernel, the conformance suite's kernels) goes through the toolkit's
// own assembler, ptxas, for each GPU architecture from Turing to Blackwell:
// the check of the device code that needs no GPU. The driver JIT-compiles the
// same text at run time; a text ptxas refuses would fail there, on the user's
// GPU. Built only where the CUDA toolkit is (OPSCOPE_PTXAS names its ptxas).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "device/cuda/calibrate_ptx.h"
#include "conformance_kernels_ptx.h"
#include "../examples/diagnose_ops/diagnose_ptx.h"
#include "../examples/my_ops/my_norm_ptx.h"

namespace {

struct PtxText {
  const char* name;
  const char* text;
  std::vector<std::string> entries;
  int most_registers;  // per thread at sm_90: what the launch's occupancy assumes
};

const std::vector<PtxText>& Texts() {
  static const std::vector<PtxText> texts = {
      // calibrate.cc launches 8 blocks of 256 per SM: 2048 threads fit an SM
      // only at 32 registers a thread or fewer (65536 registers per SM).
      {"calibrate",
       opscope::kCalibratePtx,
       {"opscope_calibrate_read", "opscope_calibrate_write", "opscope_calibrate_copy", "opscope_calibrate_triad",
        "opscope_calibrate_fma_f32", "opscope_calibrate_fma_f64", "opscope_calibrate_empty"},
       32},
      {"my_norm", kMyNormPtx, {"my_norm_f32"}, 64},
      {"conformance", kTestKernelsPtx, {"opscope_test_sleep", "opscope_test_affine"}, 64},
      {"diagnose", kDiagnosePtx, {"ramp_tail_f32", "mantissa_f32"}, 64},
  };
  return texts;
}

struct Assembled {
  int exit_code = -1;
  std::string log;
  std::map<std::string, int> registers;  // entry -> registers per thread, as ptxas -v reports
};

Assembled Assemble(const PtxText& t, const std::string& arch) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("opscope_ptxas_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path ptx = dir / (std::string(t.name) + ".ptx");
  std::ofstream(ptx) << t.text;
  const std::string cmd = std::string(OPSCOPE_PTXAS) + " --gpu-name " + arch + " -v -o " +
                          (dir / "out.cubin").string() + " " + ptx.string() + " 2>&1";
  Assembled a;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) a.log.append(buf, got);
    const int st = ::pclose(p);
    a.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  std::filesystem::remove_all(dir);
  // ptxas info    : Compiling entry function 'NAME' for 'sm_90'
  // ptxas info    : Used 16 registers, used 0 barriers, ...
  static const std::regex entry_re("Compiling entry function '([A-Za-z0-9_]+)'");
  static const std::regex used_re("Used ([0-9]+) registers");
  std::string current;
  std::istringstream lines(a.log);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, entry_re)) current = m[1];
    else if (std::regex_search(line, m, used_re) && !current.empty()) a.registers[current] = std::stoi(m[1]);
  }
  return a;
}

class PtxAssembles : public ::testing::TestWithParam<std::string> {};

TEST_P(PtxAssembles, EveryEntryOfEveryText) {
  const std::string arch = GetParam();
  for (const PtxText& t : Texts()) {
    SCOPED_TRACE(std::string(t.name) + " for " + arch);
    const Assembled a = Assemble(t, arch);
    ASSERT_EQ(a.exit_code, 0) << a.log;
    EXPECT_EQ(a.log.find("warning"), std::string::npos) << a.log;
    for (const std::string& e : t.entries) {
      ASSERT_TRUE(a.registers.count(e)) << "ptxas compiled no entry " << e << ":\n" << a.log;
      EXPECT_GT(a.registers.at(e), 0) << e;
      if (arch == "sm_90") EXPECT_LE(a.registers.at(e), t.most_registers) << e << "\n" << a.log;
    }
    EXPECT_EQ(a.registers.size(), t.entries.size()) << "an entry the list above does not name:\n" << a.log;
  }
}

INSTANTIATE_TEST_SUITE_P(Architectures, PtxAssembles,
                         ::testing::Values("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The check itself: a text with an error is refused, so the passes above mean something.
TEST(PtxAssembler, RefusesABrokenText) {
  const PtxText broken{"broken", ".version 7.8\n.target sm_75\n.address_size 64\n"
                                 ".visible .entry broken() { mov.u32 %r1, 1; ret; }\n", {"broken"}, 64};
  const Assembled a = Assemble(broken, "sm_90");
  EXPECT_NE(a.exit_code, 0) << a.log;
  EXPECT_NE(a.log.find("%r1"), std::string::npos) << "ptxas names the undeclared register:\n" << a.log;
}

}  // namespace
