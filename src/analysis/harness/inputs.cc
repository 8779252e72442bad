#include "analysis/harness/inputs.h"

#include <algorithm>

#include "core/text_format.h"
#include "opscope/npy.h"

namespace opscope {

namespace {

const ArgDef& InputArg(const OpSchema& op, size_t i) { return op.inputs[std::min(i, op.inputs.size() - 1)]; }

const ArgDef& OutputArg(const OpSchema& op, size_t i) { return op.outputs[std::min(i, op.outputs.size() - 1)]; }

std::string ArgName(const ArgDef& arg, size_t i, size_t first_index) {
  return arg.kind == ArgDef::Kind::kVariadic ? arg.name + std::to_string(i - first_index) : arg.name;
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

StatusOr<std::vector<DType>> ResolveDTypes(const OpSchema& op, const std::vector<DType>& given, size_t n) {
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
    return InvalidArgumentError("dtypes: " + std::to_string(given.size()) + " dtypes for " + std::to_string(n) +
                                " inputs (give one for all, or one per input)");
  }
  return given;
}

}  // namespace

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

std::string InputName(const OpSchema& op, size_t i) {
  return ArgName(InputArg(op, i), i, std::min(i, op.inputs.size() - 1));
}

std::string OutputName(const OpSchema& op, size_t i) {
  return ArgName(OutputArg(op, i), i, std::min(i, op.outputs.size() - 1));
}

StatusOr<std::vector<OpRunInput>> BuildInputs(const OpSchema& op, const OpRunRequest& f) {
  std::vector<OpRunInput> inputs;
  const int sources = !f.input_files.empty() + !f.input_tensors.empty() + !f.input_shapes.empty();
  if (sources > 1) {
    return InvalidArgumentError(!f.input_files.empty() && !f.input_shapes.empty()
                                    ? "input_shapes: not used with `input_files` (the .npy files carry their shapes)"
                                    : "inputs: give files, tensors or shapes, not several of them");
  }
  if (!f.input_files.empty() || !f.input_tensors.empty()) {
    if (!f.dtypes.empty()) {
      return InvalidArgumentError(!f.input_files.empty() ? "dtypes: not used with `input_files` (the .npy files carry their dtypes)"
                                                         : "dtypes: not used with given tensors (they carry their dtypes)");
    }
    const bool files = !f.input_files.empty();
    const size_t n = files ? f.input_files.size() : f.input_tensors.size();
    OPSCOPE_RETURN_IF_ERROR(CheckInputCount(op, files ? "input_files" : "inputs", n, files ? "file" : "tensor"));
    for (size_t i = 0; i < n; ++i) {
      if (!files) {
        inputs.push_back({InputName(op, i), f.input_tensors[i], "given"});
        continue;
      }
      // An empty entry ("x.npy,,max.npy") leaves an optional input out, as an ONNX node's "" does.
      if (f.input_files[i].empty()) {
        if (i >= op.inputs.size() || op.inputs[i].kind != ArgDef::Kind::kOptional) {
          return InvalidArgumentError("input_files: entry " + std::to_string(i + 1) + " is empty, but input " +
                                      InputName(op, i) + " of op " + op.name + " is required (only optional inputs can be left out)");
        }
        inputs.push_back({InputName(op, i), Tensor(), "omitted"});
        continue;
      }
      auto t = ReadNpy(f.input_files[i]);
      if (!t.ok()) return std::move(t).status().WithContext("input_files");
      inputs.push_back({InputName(op, i), *t, f.input_files[i]});
    }
    return inputs;
  }
  if (f.input_shapes.empty() && op.MinInputs() > 0) {
    return InvalidArgumentError("input_shapes: required unless `input_files` is given (op " + op.name + " takes " +
                                InputList(op) + ")");
  }
  OPSCOPE_RETURN_IF_ERROR(CheckInputCount(op, "input_shapes", f.input_shapes.size(), "shape"));
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<DType> dtypes, ResolveDTypes(op, f.dtypes, f.input_shapes.size()));
  for (size_t i = 0; i < f.input_shapes.size(); ++i) {
    // "[4,8];;[4,8]": an optional input left out, as --inputs' empty entry.
    if (std::find(f.omitted_inputs.begin(), f.omitted_inputs.end(), static_cast<int>(i)) != f.omitted_inputs.end()) {
      if (i >= op.inputs.size() || op.inputs[i].kind != ArgDef::Kind::kOptional) {
        return InvalidArgumentError("input_shapes: entry " + std::to_string(i + 1) + " is empty, but input " +
                                    InputName(op, i) + " of op " + op.name +
                                    " is required (only optional inputs can be left out)");
      }
      inputs.push_back({InputName(op, i), Tensor(), "omitted"});
      continue;
    }
    if (InputArg(op, i).value_input) {
      return InvalidArgumentError("input_shapes: op " + op.name + " reads the values of input '" +
                                  InputArg(op, i).name + "': give the inputs as .npy files with `input_files`");
    }
    StatusOr<Tensor> made = Tensor::Empty(dtypes[i], f.input_shapes[i]);
    if (!made.ok()) return std::move(made).status().WithContext("input_shapes: input " + InputName(op, i));
    Tensor t = std::move(made).value();
    FillSpec spec{.kind = f.fill, .seed = f.seed + i};
    OPSCOPE_RETURN_IF_ERROR(Fill(t, spec).WithContext("input " + InputName(op, i)));
    inputs.push_back({InputName(op, i), t, std::string(FillKindName(f.fill)) + " seed " + std::to_string(f.seed + i)});
  }
  return inputs;
}

}  // namespace opscope
