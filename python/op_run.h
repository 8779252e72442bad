// File: python/op_run.h
// The op harness from Python (opscope.run_op): (exit code, the text `ops-debug
// run` prints, report.json's text, [(output name, actual, expected)]).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace opscope::python {

pybind11::tuple RunOp(const std::string& op, const std::vector<pybind11::array>& inputs,
                      const std::vector<std::vector<int64_t>>& shapes, const std::vector<std::string>& dtypes,
                      const std::string& attrs, const std::vector<std::string>& plugins, const std::string& device,
                      const std::map<std::string, int64_t>& tunables, const std::vector<pybind11::array>& expected,
                      const std::string& rule, std::optional<double> atol, std::optional<double> rtol,
                      std::optional<int64_t> max_ulp, uint64_t seed, const std::string& fill, int outputs, int repeat,
                      double timeout_s);

}  // namespace opscope::python
