#include "cli/describe_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>

#include "cli/plugin_flags.h"
#include "core/text_format.h"
#include "opscope/op.h"
#include "ops/plugin_hint.h"

namespace opscope::cli {

namespace {

std::string DTypeList(const std::vector<DType>& dtypes) {
  const std::string s = JoinMapped(dtypes, ", ", [](DType d) { return std::string(DTypeName(d)); });
  return s;
}

void PrintArgs(const char* title, const std::vector<ArgDef>& args, std::ostream& out) {
  out << title << "\n";
  if (args.empty()) out << "  (none)\n";
  for (const ArgDef& a : args) {
    out << "  " << a.name << ": " << (a.type_var.empty() ? "any dtype" : a.type_var);
    if (a.kind == ArgDef::Kind::kOptional) out << "  optional";
    if (a.kind == ArgDef::Kind::kVariadic) out << "  variadic";
    if (a.value_input) out << "  (its values are read by shape inference)";
    out << "\n";
  }
}

}  // namespace

Status DescribeOp(const DescribeFlags& flags, std::ostream& out) {
  OPSCOPE_RETURN_IF_ERROR(LoadPluginFlags(flags.plugins));
  auto found = LookupTypedOp(flags.op);
  if (!found.ok()) return std::move(found).status().WithContext("describe");
  const OpSchema& op = **found;

  out << op.name << (op.domain.empty() ? "" : "  domain " + op.domain) << "  source " << op.source << "\n";
  if (!op.doc.empty()) out << "  " << op.doc << "\n";
  PrintArgs("inputs", op.inputs, out);
  PrintArgs("outputs", op.outputs, out);

  out << "type constraints\n";
  std::vector<std::string> vars;
  for (const auto& args : {op.inputs, op.outputs}) {
    for (const ArgDef& a : args) {
      if (!a.type_var.empty() && std::find(vars.begin(), vars.end(), a.type_var) == vars.end()) vars.push_back(a.type_var);
    }
  }
  if (vars.empty()) out << "  (none)\n";
  for (const std::string& v : vars) {
    auto it = op.type_constraints.find(v);
    out << "  " << v << ": " << DTypeList(it != op.type_constraints.end() ? it->second : FloatDTypes()) << "\n";
  }

  out << "attrs\n";
  if (op.attrs.empty()) out << "  (none)\n";
  for (const AttrDef& a : op.attrs) {
    out << "  " << a.name << ": " << AttrTypeName(a.type);
    if (a.default_value) out << " = " << AttrValueToString(*a.default_value);
    else out << (a.required ? "  required" : "  optional, no default");
    if (!a.allowed.empty()) {
      std::string allowed;
      for (const std::string& s : a.allowed) allowed += (allowed.empty() ? "" : ", ") + s;
      out << "  (one of " << allowed << ")";
    }
    out << "\n";
  }

  out << "tunables\n";
  if (op.tunables.empty()) out << "  (none)\n";
  for (const TunableDef& t : op.tunables) {
    out << "  " << t.name << ":";
    for (size_t i = 0; i < t.values.size(); ++i) out << (i ? ", " : " ") << t.values[i] << (i == 0 ? " (default)" : "");
    out << "\n";
  }

  out << "kernels\n";
  for (const auto& [device, fn] : op.kernels) {
    auto name = op.kernel_names.find(device);
    out << "  " << device << ": " << (name != op.kernel_names.end() ? name->second : "") << "\n";
  }
  out << "  reference: " << (op.reference ? "yes (host, float64)" : "none") << "\n";
  out << "cost model: " << (op.cost ? "yes" : "none") << "\n";
  return Status::Ok();
}

CLI::App* AddDescribeCommand(CLI::App& app, DescribeFlags& flags) {
  CLI::App* describe = app.add_subcommand("describe", "Show an op's inputs, outputs, attributes, tunables and kernels");
  describe->add_option("op", flags.op, "the op name")->required();
  describe->add_option("--plugin", flags.plugins, "a .so with custom ops (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return describe;
}

}  // namespace opscope::cli
