// File: python/op_run.h
// The op harness from Python: opscope.run_op, profile_op, sweep_op and
// diagnose_op. One dict of run arguments (the package builds it from
// keywords) becomes the OpRunRequest `ops-debug run` would make of its
// flags; each returns (exit code, the text the matching ops-debug command
// prints, its JSON file's text[, the outputs as (name, actual, expected)]).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opscope::python {

pybind11::tuple RunOp(const pybind11::dict& run);
pybind11::tuple ProfileOp(const pybind11::dict& run, int warmup, int iterations, bool cold_cache, double peak_bw,
                          double peak_flops);
pybind11::tuple SweepOp(const pybind11::dict& run, const std::map<std::string, std::vector<int64_t>>& values,
                        int warmup, int iterations, double peak_bw, double peak_flops, const std::string& cache_file);
// `argv`: the ops-debug run command the supervised child runs.
pybind11::tuple DiagnoseOp(const std::vector<std::string>& argv, const std::string& output_dir, double timeout_s,
                           const std::string& run_report);

}  // namespace opscope::python
