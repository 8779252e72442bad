// A kernel author's own test program over the op harness (opscope/harness.h):
// it checks the example plugin's my_norm against its double-precision
// reference at a few shapes and dtypes, and against a --baseline style chain
// of built-in ops for my_bias_gelu, the way `ops-debug run` would, and
// prints one line per case (the whole report of a failing one). It includes
// nothing but opscope's public headers.
//
//   build/bin/harness_demo build/lib/libmy_ops.so
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "opscope/harness.h"

namespace {

using namespace opscope;

struct Case {
  std::string what;
  OpRunRequest request;
};

std::vector<Case> Cases(const std::string& plugin) {
  const std::vector<std::string> plugins = {plugin};
  return {
      {"my_norm float32 [4,256,64]", {.op = "my_norm", .plugins = plugins, .input_shapes = {Shape({4, 256, 64})}}},
      {"my_norm float16 [8,1000]",
       {.op = "my_norm", .plugins = plugins, .input_shapes = {Shape({8, 1000})}, .dtypes = {DType::kF16}}},
      {"my_norm float32 [3,5], block=128",
       {.op = "my_norm", .plugins = plugins, .input_shapes = {Shape({3, 5})}, .tunables = {{"block", 128}}, .repeat = 3}},
      {"my_bias_gelu vs Add>Gelu{approximate=tanh}",
       {.op = "my_bias_gelu", .plugins = plugins, .input_shapes = {Shape({4, 256, 64}), Shape({64})},
        .baseline = "Add>Gelu{approximate=tanh}"}},
  };
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: harness_demo PATH/libmy_ops.so\n");
    return 2;
  }
  int failed = 0;
  for (const Case& c : Cases(argv[1])) {
    StatusOr<OpRunReport> report = RunOpInstance(c.request);
    if (!report.ok()) {
      std::fprintf(stderr, "harness_demo: %s: %s\n", c.what.c_str(), report.status().ToString().c_str());
      return 2;
    }
    const OpRunOutput& y = report->outputs.at(0);
    std::printf("%-46s %-8s %lld / %lld mismatched, max abs err %.3g\n", c.what.c_str(), RunStatusName(report->status()),
                static_cast<long long>(y.compare.mismatched), static_cast<long long>(y.compare.total),
                y.compare.max_abs_err);
    if (!report->passed()) {
      ++failed;
      PrintOpReport(*report, std::cout);
    }
  }
  std::printf("%d passed, %d failed\n", static_cast<int>(Cases(argv[1]).size()) - failed, failed);
  return failed ? 1 : 0;
}
