#include "cli/run_command.h"

#include <CLI/CLI.hpp>

#include "cli/app_driver.h"
#include "cli/flag_parsing.h"
#include "opscope/diagnose.h"  // ParseDuration

namespace opscope::cli {

StatusOr<OpRunRequest> RequestFromFlags(const RunFlags& f) {
  OpRunRequest r{.op = f.op, .plugins = f.plugins, .input_files = f.inputs, .seed = f.seed, .attrs = f.attrs,
                 .device = f.device, .checked = f.checked, .reference = f.reference, .expected_files = f.expected,
                 .baseline = f.baseline, .num_outputs = f.outputs, .tolerance = f.tolerance, .repeat = f.repeat,
                 .trace = f.trace, .report = f.report, .repro_dir = f.repro_dir, .save_outputs = f.save_outputs};
  if (f.op.empty()) return InvalidArgumentError("--op: required (an op name; ops-debug list shows them)");
  // "x.npy,,max.npy": an empty entry leaves an optional input out, so the list is split here.
  r.input_files.clear();
  for (const std::string& item : f.inputs) {
    for (std::string& part : SplitList(item, ',')) r.input_files.push_back(std::move(part));
  }
  OPSCOPE_ASSIGN_OR_RETURN(r.input_shapes, ParseShapeList("--input-shapes", f.input_shapes, &r.omitted_inputs));
  OPSCOPE_ASSIGN_OR_RETURN(r.dtypes, ParseDTypeList("--dtype", f.dtypes));
  auto fill = ParseFillKind(f.fill);
  if (!fill.ok()) return std::move(fill).status().WithContext("--fill");
  r.fill = *fill;
  OPSCOPE_ASSIGN_OR_RETURN(r.tunables, ParseIntAssignments("--tunables", f.tunables));
  OPSCOPE_ASSIGN_OR_RETURN(r.readback, ParseReadbackName(f.readback));
  r.timeout_s = 0;
  if (f.timeout != "0") {
    OPSCOPE_ASSIGN_OR_RETURN(r.timeout_s, ParseDuration(f.timeout));
  }
  if (f.outputs < -1 || f.outputs == 0) {
    return InvalidArgumentError("--outputs: must be >= 1, got " + std::to_string(f.outputs));
  }
  return r;
}

StatusOr<OpRunReport> RunOp(const RunFlags& flags) {
  OPSCOPE_ASSIGN_OR_RETURN(OpRunRequest request, RequestFromFlags(flags));
  return RunOpInstance(request);
}

CLI::App* AddRunCommand(CLI::App& app, RunFlags& f) {
  CLI::App* run = app.add_subcommand("run", "Run one op on a device and compare every output with a golden");
  AddRunFlags(*run, f);
  // Not a run flag diagnose and verify forward: theirs is the supervisor's own --timeout.
  run->add_option("--timeout", f.timeout, "a kernel launch past it is stopped, naming the kernel: 60s, 500ms, 2m; 0: never "
                                          "(default 60s)");
  return run;
}

std::vector<std::string> ArgsForRun(const CLI::App& command, int argc, const char* const* argv) {
  // run's own option names, from a throwaway command holding only them.
  CLI::App run_only;
  RunFlags unused;
  AddRunFlags(run_only, unused);
  const auto is_run_option = [&](const std::string& name) { return run_only.get_option_no_throw(name) != nullptr; };
  std::vector<std::string> out;
  int i = 1;
  while (i < argc && command.get_name() != argv[i]) ++i;
  for (++i; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") break;
    const std::string name = a.substr(0, a.find('='));
    const CLI::Option* own = name.starts_with("-") ? command.get_option_no_throw(name) : nullptr;
    if (own != nullptr && !is_run_option(name)) {
      const bool takes_value = own->get_items_expected_max() > 0;  // a flag takes none
      if (takes_value && a.find('=') == std::string::npos) ++i;  // its value is the next word
      continue;
    }
    out.push_back(a);
  }
  return out;
}

void AddRunFlags(CLI::App& command, RunFlags& f) {
  CLI::App* run = &command;
  run->add_option("--op", f.op, "the op to run (ops-debug list shows them)")->required();
  run->add_option("--input-shapes", f.input_shapes,
                  "one shape per input: \"[4,256,64];[64]\"; an empty one between two leaves an optional input out");
  run->add_option("--dtype", f.dtypes, "float32, or one per input: float32,float16");
  run->add_option("--attrs", f.attrs, "attributes: \"eps=1e-6,axis=-1,kernel_shape=[3,3]\"");
  run->add_option("--inputs", f.inputs, "inputs from .npy files, comma-separated; an empty entry leaves an optional input out");
  AddSeedOption(run, f.seed, "seed of the generated inputs (input i uses seed + i)");
  run->add_option("--fill", f.fill, "normal | uniform | int | constant | sequential");
  run->add_option("--device", f.device, "device to run the kernel on (cpu, cuda)");
  run->add_option("--plugin", f.plugins, "a .so with custom ops (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_option("--tunables", f.tunables, "tunable values: block=256,vec=4");
  run->add_flag("--reference", f.reference, "the golden is the op's reference kernel (the default)");
  run->add_option("--expected", f.expected, "the golden from .npy files, one per output")->delimiter(',');
  run->add_option("--baseline", f.baseline, "the golden from another op or chain: \"Add>Gelu{approximate=tanh}@cpu\"");
  run->add_option("--outputs", f.outputs, "how many outputs to ask the op for, optional ones included "
                                           "(default: one per --expected file, else the required ones)");
  AddToleranceFlags(*run, f.tolerance);
  run->add_option("--repeat", f.repeat, "run the kernel N times on the same inputs; any bit that differs is reported first");
  run->add_option("--readback", f.readback, "full | stats | sample: what of the outputs comes back from the device");
  run->add_flag("--trace", f.trace, "record the kernel's and reference's OPSCOPE_TRACE tracepoints");
  run->add_option("--report", f.report, "write report.json (schema opscope.report/1) here");
  run->add_option("--repro-dir", f.repro_dir, "on failure, write cropped inputs that still fail here");
  run->add_flag("--checked", f.checked, "guard-page allocation: an out-of-bounds access faults at once");
  run->add_option("--save-outputs", f.save_outputs, "folder for <output>.npy and <output>.expected.npy");
  run->footer(std::string(kToleranceHelp) +
              "\nReadback: full copies every output back; stats has the device summarise each output (count, NaN,"
              "\nInf, min, max, mean, rms) and copies only that; sample copies 4096 evenly spaced elements.");
}

}  // namespace opscope::cli
