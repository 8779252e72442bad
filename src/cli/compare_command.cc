#include "cli/compare_command.h"

#include <CLI/CLI.hpp>


namespace opscope::cli {

void AddToleranceFlags(CLI::App& c, ToleranceSpec& f) {
  c.add_option("--mode,--rule", f.rule, "mixed | abs | rel | exact | ulp:N (see below)");
  c.add_option_function<double>("--abserr,--atol", [&f](const double& v) { f.atol = v; }, "absolute tolerance");
  c.add_option_function<double>("--relerr,--rtol", [&f](const double& v) { f.rtol = v; }, "relative tolerance");
  c.add_option_function<int64_t>("--max-ulp", [&f](const int64_t& v) { f.max_ulp = v; }, "ulp rule: steps allowed");
  c.add_option("--worst", f.worst_k, "how many worst elements to list (default 10)");
  c.add_flag("--strict", f.strict, "fail a pass that carries a warning (floor decides, low cosine, signs flipped)");
}

CLI::App* AddCompareCommand(CLI::App& app, CompareFlags& f) {
  CLI::App* c = app.add_subcommand("compare", "Compare two .npy files (or two .npz archives, array by array)");
  c->add_option("expected", f.expected, "the expected tensor (.npy) or arrays (.npz)")->required();
  c->add_option("actual", f.actual, "the actual tensor (.npy) or arrays (.npz)")->required();
  AddToleranceFlags(*c, f.tolerance);
  c->add_option("--report", f.report, "write report.json (schema opscope.report/1) here");
  c->add_option("--inputs", f.inputs, "the op's inputs (.npy, name=path or path) to tie the errors to by value")
      ->delimiter(',');
  c->add_flag("!--no-findings", f.findings, "the numbers and the pattern only: no maps, no value bands");
  c->footer(kToleranceHelp);
  return c;
}

}  // namespace opscope::cli
