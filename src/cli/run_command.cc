#include "cli/run_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "capture/dispatcher.h"
#include "cli/flag_parsing.h"
#include "cli/plugin_flags.h"
#include "opscope/fill.h"
#include "opscope/npy.h"

namespace opscope::cli {

namespace {

const char* FillKindName(FillKind k) {
  switch (k) {
    case FillKind::kUniform: return "uniform";
    case FillKind::kNormal: return "normal";
    case FillKind::kInt: return "int";
    case FillKind::kConstant: return "constant";
    case FillKind::kSequential: return "sequential";
  }
  return "?";
}

const ArgDef& InputArg(const OpSchema& op, size_t i) { return op.inputs[std::min(i, op.inputs.size() - 1)]; }
const ArgDef& OutputArg(const OpSchema& op, size_t i) { return op.outputs[std::min(i, op.outputs.size() - 1)]; }

std::string ArgName(const ArgDef& arg, size_t i, size_t first_index) {
  return arg.kind == ArgDef::Kind::kVariadic ? arg.name + std::to_string(i - first_index) : arg.name;
}

std::string InputName(const OpSchema& op, size_t i) {
  return ArgName(InputArg(op, i), i, std::min(i, op.inputs.size() - 1));
}

std::string OutputName(const OpSchema& op, size_t i) {
  return ArgName(OutputArg(op, i), i, std::min(i, op.outputs.size() - 1));
}

std::vector<DType> AllowedDTypes(const OpSchema& op, const ArgDef& arg) {
  if (arg.type_var.empty()) return AllDTypes();
  auto it = op.type_constraints.find(arg.type_var);
  return it != op.type_constraints.end() ? it->second : FloatDTypes();
}

// float32 where the input allows it, else the first type it allows.
DType DefaultDType(const OpSchema& op, size_t i) {
  std::vector<DType> allowed = AllowedDTypes(op, InputArg(op, i));
  if (allowed.empty() || std::find(allowed.begin(), allowed.end(), DType::kF32) != allowed.end()) return DType::kF32;
  return allowed.front();
}

std::string InputList(const OpSchema& op) {
  std::string s;
  for (const ArgDef& a : op.inputs) {
    s += (s.empty() ? "" : ", ") + a.name;
    if (a.kind == ArgDef::Kind::kOptional) s += " (optional)";
    if (a.kind == ArgDef::Kind::kVariadic) s += "...";
  }
  return s;
}

std::string CountText(const OpSchema& op) {
  int lo = op.MinInputs(), hi = op.MaxInputs();
  if (lo == hi) return std::to_string(lo);
  if (hi == INT32_MAX) return "at least " + std::to_string(lo);
  return std::to_string(lo) + " to " + std::to_string(hi);
}

Status CheckInputCount(const OpSchema& op, const std::string& flag, size_t n, const char* what) {
  if (static_cast<int>(n) >= op.MinInputs() && static_cast<int>(n) <= op.MaxInputs()) return Status::Ok();
  return InvalidArgumentError(flag + ": op " + op.name + " takes " + CountText(op) + " input(s) (" + InputList(op) +
                              "), got " + std::to_string(n) + " " + what + (n == 1 ? "" : "s"));
}

// One dtype applies to every input sharing input 0's type variable (the
// others keep their default); a list gives one per input.
StatusOr<std::vector<DType>> ResolveDTypes(const OpSchema& op, const std::string& text, size_t n) {
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<DType> given, ParseDTypeList("--dtype", text));
  std::vector<DType> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = DefaultDType(op, i);
  if (given.empty() || n == 0) return out;
  if (given.size() == 1) {
    for (size_t i = 0; i < n; ++i) {
      if (InputArg(op, i).type_var == InputArg(op, 0).type_var) out[i] = given[0];
    }
    return out;
  }
  if (given.size() != n) {
    return InvalidArgumentError("--dtype: " + std::to_string(given.size()) + " dtypes for " + std::to_string(n) +
                                " inputs (give one for all, or one per input)");
  }
  return given;
}

StatusOr<std::vector<RunInput>> BuildInputs(const OpSchema& op, const RunFlags& f) {
  std::vector<RunInput> inputs;
  if (!f.inputs.empty()) {
    if (!f.input_shapes.empty()) return InvalidArgumentError("--input-shapes: not used with --inputs (the .npy files carry their shapes)");
    if (!f.dtypes.empty()) return InvalidArgumentError("--dtype: not used with --inputs (the .npy files carry their dtypes)");
    OPSCOPE_RETURN_IF_ERROR(CheckInputCount(op, "--inputs", f.inputs.size(), "file"));
    for (size_t i = 0; i < f.inputs.size(); ++i) {
      auto t = ReadNpy(f.inputs[i]);
      if (!t.ok()) return std::move(t).status().WithContext("--inputs");
      inputs.push_back({InputName(op, i), *t, f.inputs[i]});
    }
    return inputs;
  }
  if (f.input_shapes.empty() && op.MinInputs() > 0) {
    return InvalidArgumentError("--input-shapes: required unless --inputs is given (op " + op.name + " takes " +
                                InputList(op) + ")");
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<Shape> shapes, ParseShapeList("--input-shapes", f.input_shapes));
  OPSCOPE_RETURN_IF_ERROR(CheckInputCount(op, "--input-shapes", shapes.size(), "shape"));
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<DType> dtypes, ResolveDTypes(op, f.dtypes, shapes.size()));
  auto kind = ParseFillKind(f.fill);
  if (!kind.ok()) return std::move(kind).status().WithContext("--fill");
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (InputArg(op, i).value_input) {
      return InvalidArgumentError("--input-shapes: op " + op.name + " reads the values of input '" +
                                  InputArg(op, i).name + "': give the inputs as .npy files with --inputs");
    }
    OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtypes[i], shapes[i]));
    FillSpec spec{.kind = *kind, .seed = f.seed + i};
    OPSCOPE_RETURN_IF_ERROR(Fill(t, spec).WithContext("input " + InputName(op, i)));
    inputs.push_back({InputName(op, i), t, std::string(FillKindName(*kind)) + " seed " + std::to_string(f.seed + i)});
  }
  return inputs;
}

std::string Repro(const RunFlags& f, const OpSchema& op, const Attrs& attrs, const std::vector<RunInput>& inputs) {
  std::string s = "ops-debug run";
  for (const std::string& p : f.plugins) s += " --plugin " + ShellQuote(p);
  s += " --op " + ShellQuote(op.name);
  if (!f.inputs.empty()) {
    std::string files;
    for (const std::string& p : f.inputs) files += (files.empty() ? "" : ",") + p;
    s += " --inputs " + ShellQuote(files);
  } else if (!inputs.empty()) {
    std::string shapes, dtypes;
    for (const RunInput& in : inputs) {
      shapes += (shapes.empty() ? "" : ";") + in.tensor.shape().ToString();
      dtypes += (dtypes.empty() ? "" : ",") + std::string(DTypeName(in.tensor.dtype()));
    }
    s += " --input-shapes " + ShellQuote(shapes) + " --dtype " + dtypes;
    auto kind = ParseFillKind(f.fill);
    s += std::string(" --fill ") + (kind.ok() ? FillKindName(*kind) : f.fill) + " --seed " + std::to_string(f.seed);
  }
  if (!attrs.empty()) s += " --attrs " + ShellQuote(attrs.ToString());
  s += " --device " + ShellQuote(f.device);
  if (!f.tunables.empty()) s += " --tunables " + ShellQuote(f.tunables);
  if (f.checked) s += " --checked";
  char buf[64];
  if (f.atol) std::snprintf(buf, sizeof buf, " --atol %.17g", *f.atol), s += buf;
  if (f.rtol) std::snprintf(buf, sizeof buf, " --rtol %.17g", *f.rtol), s += buf;
  return s;
}

// Turns checked allocation off again on the way out, so a library caller's
// device is left as it was found.
class CheckedAllocationScope {
 public:
  CheckedAllocationScope(Device* d, bool on) : device_(on && !d->checked_allocation() ? d : nullptr) {}
  ~CheckedAllocationScope() { if (device_) (void)device_->SetCheckedAllocation(false); }

 private:
  Device* device_;
};

std::string FormatTime(double us) {
  char buf[64];
  if (us < 0) return "n/a";
  if (us < 1000) std::snprintf(buf, sizeof buf, "%.1f us", us);
  else std::snprintf(buf, sizeof buf, "%.3f ms", us / 1000);
  return buf;
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

std::string Coords(const std::vector<int64_t>& c) {
  std::string s = "[";
  for (size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
  return s + "]";
}

}  // namespace

bool RunReport::passed() const {
  if (!kernel_error.empty()) return false;
  for (const RunOutput& o : outputs) {
    if (!o.compare.passed()) return false;
  }
  return true;
}

StatusOr<RunReport> RunOp(const RunFlags& f) {
  OPSCOPE_RETURN_IF_ERROR(LoadPluginFlags(f.plugins));
  if (f.op.empty()) return InvalidArgumentError("--op: required (an op name; ops-debug list shows them)");
  auto found = OpRegistry::Global().Lookup(f.op);
  if (!found.ok()) return std::move(found).status().WithContext("--op");
  const OpSchema& op = **found;
  OPSCOPE_ASSIGN_OR_RETURN(Attrs attrs, op.ParseAttrs(f.attrs));  // its errors name --attrs

  OPSCOPE_ASSIGN_OR_RETURN(auto tunables, ParseIntAssignments("--tunables", f.tunables));
  for (const auto& [name, value] : tunables) {
    if (op.FindTunable(name)) continue;
    std::string have;
    for (const TunableDef& t : op.tunables) have += (have.empty() ? "" : ", ") + t.name;
    return InvalidArgumentError("--tunables: op " + op.name + " has no tunable '" + name + "'" +
                                (have.empty() ? " (it has none)" : " (it has: " + have + ")"));
  }

  auto device_or = GetDevice(f.device);
  if (!device_or.ok()) return std::move(device_or).status().WithContext("--device");
  Device* device = *device_or;
  const std::string backend = device->name().substr(0, device->name().find(':'));
  if (!op.kernels.count(backend)) {
    std::string have;
    for (const auto& [k, v] : op.kernels) have += (have.empty() ? "" : ", ") + k;
    return InvalidArgumentError("--device: op " + op.name + " has no " + backend + " kernel" +
                                (have.empty() ? "" : " (it has: " + have + ")"));
  }
  if (!op.reference) return InvalidArgumentError("--op: op " + op.name + " has no reference kernel to compare with");

  OPSCOPE_ASSIGN_OR_RETURN(std::vector<RunInput> inputs, BuildInputs(op, f));
  std::vector<Tensor> tensors;
  for (const RunInput& in : inputs) tensors.push_back(in.tensor);
  // Attribute types, dtypes and shape inference: all before anything runs.
  Attrs validated = attrs;
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<TensorDesc> out_desc,
                           Dispatcher::Global().InferOutputs(op, tensors, validated, -1));

  CheckedAllocationScope checked_scope(device, f.checked);
  if (f.checked) {
    Status st = device->SetCheckedAllocation(true);
    if (!st.ok()) return std::move(st).WithContext("--checked");
  }
  const std::string save_dir = f.save_outputs;
  if (!save_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(save_dir, ec);
    if (ec) return InvalidArgumentError("--save-outputs: cannot create folder " + save_dir + ": " + ec.message());
  }

  RunReport report;
  report.op = op.name;
  report.device = device->name();
  report.kernel = op.kernel_names.count(backend) ? op.kernel_names.at(backend) : op.name + "_" + backend;
  report.inputs = inputs;
  report.repro = Repro(f, op, attrs, inputs);

  auto run = Dispatcher::Global().Run(op, tensors, attrs, RunOptions{.device = device, .tunables = tunables});
  if (!run.ok()) {
    report.kernel_error = run.status().ToString();
    return report;
  }
  report.kernel = run->kernel;
  report.launches = run->launches;
  report.device_us = run->device_us;
  report.op_id = run->op_id;
  auto ref = Dispatcher::Global().Run(op, tensors, attrs, RunOptions{.tunables = tunables});
  if (!ref.ok()) {
    report.kernel_error = "reference: " + ref.status().ToString();
    return report;
  }

  for (size_t i = 0; i < run->outputs.size() && i < ref->outputs.size(); ++i) {
    if (!run->outputs[i].defined() || !ref->outputs[i].defined()) continue;
    RunOutput out;
    out.name = OutputName(op, i);
    OPSCOPE_ASSIGN_OR_RETURN(out.actual, ToHost(run->outputs[i]));
    out.expected = ref->outputs[i];
    Tolerance tol = DefaultTolerance(out.actual.dtype());
    if (f.atol) tol.atol = *f.atol;
    if (f.rtol) tol.rtol = *f.rtol;
    OPSCOPE_ASSIGN_OR_RETURN(out.compare, CompareTensors(out.actual, out.expected, tol));
    report.outputs.push_back(std::move(out));
  }
  if (!save_dir.empty()) {
    for (const RunOutput& out : report.outputs) {
      const std::string actual = (std::filesystem::path(save_dir) / (out.name + ".npy")).string();
      const std::string expected = (std::filesystem::path(save_dir) / (out.name + ".expected.npy")).string();
      OPSCOPE_RETURN_IF_ERROR(WriteNpy(actual, out.actual).WithContext("--save-outputs"));
      OPSCOPE_RETURN_IF_ERROR(WriteNpy(expected, out.expected).WithContext("--save-outputs"));
      report.saved_files.push_back(actual);
      report.saved_files.push_back(expected);
    }
  }
  return report;
}

void PrintRunReport(const RunReport& r, std::ostream& out) {
  out << r.op << "  " << r.device << "  kernel " << r.kernel;
  if (!r.launches.empty()) out << "  " << r.launches[0].config.ToString();
  out << "  device " << FormatTime(r.device_us) << "  op_id " << ShortHex(r.op_id) << "\n";
  for (size_t i = 1; i < r.launches.size(); ++i) {
    out << "  launch " << r.launches[i].name << "  " << r.launches[i].config.ToString() << "\n";
  }
  for (const RunInput& in : r.inputs) {
    out << "  input " << in.name << "  " << in.tensor.Describe() << "  " << in.origin << "  @"
        << MaskAddress(in.tensor.raw_data()) << "\n";
  }
  if (!r.kernel_error.empty()) out << "kernel FAILED  " << OneLine(r.kernel_error) << "\n";
  for (const RunOutput& o : r.outputs) {
    const CompareResult& c = o.compare;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.2f%%", c.total ? 100.0 * c.mismatched / c.total : 0.0);
    out << "output " << o.name << "  " << o.actual.Describe() << "  " << (c.passed() ? "PASSED" : "FAILED") << "  "
        << WithThousands(c.mismatched) << " / " << WithThousands(c.total) << " mismatched (" << pct << ")"
        << "  |a-e| <= " << Num(c.tolerance.atol) << " + " << Num(c.tolerance.rtol) << "*|e|\n";
    if (c.max_abs_index >= 0) {
      out << "  max abs err " << Num(c.max_abs_err) << " at " << Coords(c.max_abs_coords) << "  expected "
          << Num(c.expected_at_max_abs) << "  actual " << Num(c.actual_at_max_abs) << "\n";
    }
    if (c.max_rel_index >= 0) out << "  max rel err " << Num(c.max_rel_err) << "\n";
    if (c.nan_actual || c.nan_expected || c.inf_actual || c.inf_expected) {
      out << "  NaN " << c.nan_actual << "/" << c.nan_expected << "  Inf " << c.inf_actual << "/" << c.inf_expected
          << "  (actual/expected)\n";
    }
    if (!c.passed() && c.first_mismatch_index >= 0 && c.first_mismatch_index != c.max_abs_index) {
      out << "  first mismatch at " << Coords(UnravelIndex(c.first_mismatch_index, o.actual.shape())) << "\n";
    }
  }
  for (const std::string& file : r.saved_files) out << "saved " << file << "\n";
  out << "repro: " << r.repro << "\n";
}

CLI::App* AddRunCommand(CLI::App& app, RunFlags& f) {
  CLI::App* run = app.add_subcommand("run", "Run one op on a device and compare every output with its reference");
  run->add_option("--op", f.op, "the op to run (ops-debug list shows them)")->required();
  run->add_option("--input-shapes", f.input_shapes, "one shape per input: \"[4,256,64];[64]\"");
  run->add_option("--dtype", f.dtypes, "float32, or one per input: float32,float16");
  run->add_option("--attrs", f.attrs, "attributes: \"eps=1e-6,axis=-1,kernel_shape=[3,3]\"");
  run->add_option("--inputs", f.inputs, "inputs from .npy files, comma-separated")->delimiter(',');
  run->add_option("--seed", f.seed, "seed of the generated inputs (input i uses seed + i)");
  run->add_option("--fill", f.fill, "normal | uniform | int | constant | sequential");
  run->add_option("--device", f.device, "device to run the kernel on (cpu, cuda)");
  run->add_option("--plugin", f.plugins, "a .so with custom ops (repeatable)")->expected(1);
  run->add_flag("--checked", f.checked, "guard-page allocation: an out-of-bounds access faults at once");
  run->add_option("--tunables", f.tunables, "tunable values: block=256,vec=4");
  run->add_option("--save-outputs", f.save_outputs, "folder for <output>.npy and <output>.expected.npy");
  run->add_option_function<double>("--atol", [&f](const double& v) { f.atol = v; }, "absolute tolerance");
  run->add_option_function<double>("--rtol", [&f](const double& v) { f.rtol = v; }, "relative tolerance");
  return run;
}

}  // namespace opscope::cli
