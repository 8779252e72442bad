// OpSchema's checks (attrs, inputs, shape inference) and the OpDef builder.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "opscope/op.h"
#include "core/text_distance.h"
#include "core/text_format.h"
#include "ops/registry_internal.h"
#include "ops/undeclared_reads.h"

namespace opscope {

// ---- schema ------------------------------------------------------------------------

const AttrDef* OpSchema::FindAttr(std::string_view attr) const {
  for (const auto& a : attrs) if (a.name == attr) return &a;
  return nullptr;
}

const TunableDef* OpSchema::FindTunable(std::string_view t) const {
  for (const auto& d : tunables) if (d.name == t) return &d;
  return nullptr;
}

int OpSchema::MinInputs() const {
  int n = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].kind == ArgDef::Kind::kSingle) n = static_cast<int>(i) + 1;
    if (inputs[i].kind == ArgDef::Kind::kVariadic) n = static_cast<int>(i) + 1;
  }
  return n;
}

int OpSchema::MaxInputs() const {
  if (!inputs.empty() && inputs.back().kind == ArgDef::Kind::kVariadic) return INT32_MAX;
  return static_cast<int>(inputs.size());
}

int OpSchema::MinOutputs() const {
  int n = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].kind != ArgDef::Kind::kOptional) n = static_cast<int>(i) + 1;
  }
  return n;
}

int OpSchema::MaxOutputs() const {
  if (!outputs.empty() && outputs.back().kind == ArgDef::Kind::kVariadic) return INT32_MAX;
  return static_cast<int>(outputs.size());
}

static bool AttrTypeAccepts(AttrType want, const AttrValue& v) {
  AttrType got = AttrTypeOf(v);
  if (got == want) return true;
  // An int where a float is declared is the user's obvious meaning.
  return want == AttrType::kFloat && got == AttrType::kInt;
}

Status OpSchema::ValidateAttrs(Attrs& a) const {
  a.check_ = nullptr;  // what another op declared says nothing about this one
  for (const auto& [k, v] : a.all()) {
    const AttrDef* def = FindAttr(k);
    if (!def) {
      std::vector<std::string> names;
      for (const auto& d : attrs) names.push_back(d.name);
      std::string msg = "op " + name + " has no attribute '" + k + "'";
      auto close = ClosestStrings(k, names, 3);
      if (!close.empty()) msg += "; did you mean " + JoinStrings(close, ", ") + "?";
      else if (names.empty()) msg += " (it takes none)";
      else msg += "; it takes " + JoinStrings(names, ", ");
      return InvalidArgumentError(msg);
    }
    if (!AttrTypeAccepts(def->type, v)) {
      return InvalidArgumentError("op " + name + " attribute '" + k + "': expected " +
                                  AttrTypeName(def->type) + ", got " + AttrTypeName(AttrTypeOf(v)) +
                                  " (" + AttrValueToString(v) + ")");
    }
    if (!def->allowed.empty() && def->type == AttrType::kString) {
      const auto& s = std::get<std::string>(v);
      if (std::find(def->allowed.begin(), def->allowed.end(), s) == def->allowed.end()) {
        return InvalidArgumentError("op " + name + " attribute '" + k + "': '" + s + "' is not one of " +
                                    JoinStrings(def->allowed, ", "));
      }
    }
  }
  // Promote ints given for float attrs, fill defaults, check required.
  for (const auto& def : attrs) {
    const AttrValue* v = a.Find(def.name);
    if (v) {
      if (def.type == AttrType::kFloat && AttrTypeOf(*v) == AttrType::kInt) {
        a.Set(def.name, static_cast<double>(std::get<int64_t>(*v)));
      }
      continue;
    }
    if (def.default_value) {
      a.Set(def.name, *def.default_value);
    } else if (def.required) {
      return InvalidArgumentError("op " + name + " needs attribute '" + def.name + "' (" +
                                  AttrTypeName(def.type) + ")");
    }
  }
  // From now on, reading a name the op does not declare is an error.
  std::vector<std::string> declared;
  for (const auto& def : attrs) declared.push_back(def.name);
  a.check_ = std::make_shared<UndeclaredReads>(name, std::move(declared));
  return Status::Ok();
}

namespace {

// The tensor an attribute stands for: int64 for integer attrs, else `dtype`.
StatusOr<Tensor> AttrAsTensor(const AttrValue& v, DType dtype) {
  std::vector<double> values;
  bool scalar = true;
  switch (AttrTypeOf(v)) {
    case AttrType::kInt: {
      // Built as int64 directly: an axis or size beyond 2^53 must not round.
      OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kI64, Shape()));
      *t.data<int64_t>() = std::get<int64_t>(v);
      if (dtype == DType::kI64) return t;
      return t.CastTo(dtype);
    }
    case AttrType::kInts: {
      const auto& ints = std::get<std::vector<int64_t>>(v);
      OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kI64, Shape({static_cast<int64_t>(ints.size())})));
      std::copy(ints.begin(), ints.end(), t.data<int64_t>());
      if (dtype == DType::kI64) return t;
      return t.CastTo(dtype);
    }
    case AttrType::kFloat: values = {std::get<double>(v)}; break;
    case AttrType::kFloats:
      values = std::get<std::vector<double>>(v);
      scalar = false;
      break;
    default: return InvalidArgumentError(std::string("a ") + AttrTypeName(AttrTypeOf(v)) + " attribute has no tensor form");
  }
  Shape shape = scalar ? Shape() : Shape({static_cast<int64_t>(values.size())});
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtype, shape));
  for (size_t i = 0; i < values.size(); ++i) t.FlatSetFromDouble(static_cast<int64_t>(i), values[i]);
  return t;
}

}  // namespace

namespace {

Status BothForms(const OpSchema& op, const AttrInputDef& def) {
  const std::string input_name = op.inputs[std::min<size_t>(def.input, op.inputs.size() - 1)].name;
  return InvalidArgumentError("op " + op.name + ": '" + def.attr + "' given both as attribute and as input " +
                              std::to_string(def.input) + " (" + input_name + "); give one");
}

StatusOr<Tensor> AttrInputTensor(const OpSchema& op, const AttrInputDef& def, const AttrValue& v, DType input0) {
  const bool is_int = AttrTypeOf(v) == AttrType::kInt || AttrTypeOf(v) == AttrType::kInts;
  StatusOr<Tensor> t = AttrAsTensor(v, is_int ? DType::kI64 : def.dtype.value_or(input0));
  if (!t.ok()) return std::move(t).status().WithContext("op " + op.name + " attribute '" + def.attr + "'");
  return t;
}

Attrs Without(const Attrs& a, const std::string& name) {
  Attrs rest;
  for (const auto& [k, value] : a.all()) {
    if (k != name) rest.Set(k, value);
  }
  return rest;
}

}  // namespace

Status OpSchema::MoveAttrsToInputs(std::vector<Tensor>& in, Attrs& a) const {
  for (const AttrInputDef& def : attr_inputs) {
    const AttrValue* v = a.Find(def.attr);
    if (!v) continue;
    if (def.input < static_cast<int>(in.size()) && in[def.input].defined()) return BothForms(*this, def);
    const DType input0 = in.empty() || !in[0].defined() ? DType::kF32 : in[0].dtype();
    OPSCOPE_ASSIGN_OR_RETURN(Tensor t, AttrInputTensor(*this, def, *v, input0));
    if (static_cast<int>(in.size()) <= def.input) in.resize(def.input + 1);
    in[def.input] = std::move(t);
    a = Without(a, def.attr);
  }
  return Status::Ok();
}

// The input count and every required input present: what an op's shape
// inference takes for granted when it reads input(i).
static Status CheckArity(const OpSchema& op, const std::vector<TensorDesc>& in) {
  const int n = static_cast<int>(in.size());
  if (n < op.MinInputs() || n > op.MaxInputs()) {
    std::string want = op.MaxInputs() == INT32_MAX ? "at least " + std::to_string(op.MinInputs())
                       : op.MinInputs() == op.MaxInputs() ? std::to_string(op.MinInputs())
                       : std::to_string(op.MinInputs()) + " to " + std::to_string(op.MaxInputs());
    return InvalidArgumentError("op " + op.name + " takes " + want + " input(s), got " + std::to_string(n));
  }
  for (int i = 0; i < n; ++i) {
    const ArgDef& arg = op.inputs[std::min<size_t>(i, op.inputs.size() - 1)];
    if (!in[i].present && arg.kind == ArgDef::Kind::kSingle) {
      return InvalidArgumentError("op " + op.name + " input " + std::to_string(i) + " (" + arg.name + ") is required");
    }
  }
  return Status::Ok();
}

Status OpSchema::CheckInputs(const std::vector<TensorDesc>& in) const {
  OPSCOPE_RETURN_IF_ERROR(CheckArity(*this, in));
  const int n = static_cast<int>(in.size());
  std::map<std::string, DType> bound;
  for (int i = 0; i < n; ++i) {
    const ArgDef& arg = inputs[std::min<size_t>(i, inputs.size() - 1)];
    if (!in[i].present) continue;
    if (arg.type_var.empty()) continue;
    auto tc = type_constraints.find(arg.type_var);
    std::vector<DType> allowed = tc != type_constraints.end() ? tc->second : FloatDTypes();
    if (std::find(allowed.begin(), allowed.end(), in[i].dtype) == allowed.end()) {
      const std::string list = JoinMapped(allowed, " ", [](DType t) { return std::string(DTypeName(t)); });
      return InvalidArgumentError("op " + name + " input " + std::to_string(i) + " (" + arg.name +
                                  ") has dtype " + DTypeName(in[i].dtype) + "; the op supports " + list);
    }
    auto [it, inserted] = bound.emplace(arg.type_var, in[i].dtype);
    if (!inserted && it->second != in[i].dtype) {
      return InvalidArgumentError("op " + name + " input " + std::to_string(i) + " (" + arg.name +
                                  ") has dtype " + DTypeName(in[i].dtype) + " but an earlier input of type " +
                                  arg.type_var + " has " + DTypeName(it->second));
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<TensorDesc>> OpSchema::InferOutputs(const std::vector<TensorDesc>& in,
                                                         const std::vector<const Tensor*>& values,
                                                         const Attrs& a, int num_outputs) const {
  // An older opset's attribute is seen as the input it stands for, so shape
  // inference reads one form only (the dispatcher does the same for kernels).
  for (const AttrInputDef& def : attr_inputs) {
    const AttrValue* v = a.Find(def.attr);
    if (!v) continue;
    if (def.input < static_cast<int>(in.size()) && in[def.input].present) return BothForms(*this, def);
    const DType input0 = in.empty() || !in[0].present ? DType::kF32 : in[0].dtype;
    OPSCOPE_ASSIGN_OR_RETURN(Tensor t, AttrInputTensor(*this, def, *v, input0));
    std::vector<TensorDesc> in2 = in;
    std::vector<const Tensor*> values2 = values;
    const size_t size = std::max<size_t>(in.size(), def.input + 1);
    in2.resize(size, TensorDesc{DType::kF32, Shape(), false});
    values2.resize(size, nullptr);
    in2[def.input] = TensorDesc{t.dtype(), t.shape()};
    values2[def.input] = &t;
    return InferOutputs(in2, values2, Without(a, def.attr), num_outputs);  // t outlives the call
  }
  // Every caller (the dispatcher, the compiler's shape inference) gets this
  // check, so no op's inference reads past the end of its inputs.
  OPSCOPE_RETURN_IF_ERROR(CheckArity(*this, in));
  if (num_outputs < MinOutputs() || num_outputs > MaxOutputs()) {
    return InvalidArgumentError("op " + name + " produces " + std::to_string(MinOutputs()) +
                                (MaxOutputs() == MinOutputs() ? "" : " or more") + " output(s), " +
                                std::to_string(num_outputs) + " requested");
  }
  if (!infer) return InternalError("op " + name + " has no shape inference");
  InferContext ctx(name, in, values, a, num_outputs);
  Status st = infer(ctx);
  if (!st.ok()) return std::move(st).WithContext("op " + name + " shape inference");
  std::vector<TensorDesc> out = ctx.outputs();
  for (auto& d : out) {
    Status v = d.shape.Validate();
    if (!v.ok()) return std::move(v).WithContext("op " + name + " output");
  }
  return out;
}

Cost OpSchema::EstimateCost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                            const Attrs& a) const {
  if (cost) return cost(OpCall(in, out, a));
  // Without a model: every input read once, every output written once, no FLOPs claimed.
  opscope::Cost c;
  for (const auto& d : in) if (d.present) c.bytes_read += d.bytes();
  for (const auto& d : out) c.bytes_written += d.bytes();
  return c;
}

// ---- --attrs text -----------------------------------------------------------------------

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Unquote(std::string_view s) {
  s = Trim(s);
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) s = s.substr(1, s.size() - 2);
  return std::string(s);
}

// Splits on commas outside [] and quotes.
std::vector<std::string_view> SplitTop(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) { if (c == quote) quote = 0; continue; }
    if (c == '"' || c == '\'') quote = c;
    else if (c == '[') depth++;
    else if (c == ']') depth--;
    else if (c == ',' && depth == 0) { parts.push_back(s.substr(start, i - start)); start = i + 1; }
  }
  parts.push_back(s.substr(start));
  return parts;
}

bool ParseInt(std::string_view s, int64_t* out) {
  s = Trim(s);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

// A float attribute is float32 in ONNX. "inf" and "nan" are taken as
// written; a finite literal beyond float32's range (1e999, 1e39) is refused
// rather than silently becoming infinity.
bool ParseFloat(std::string_view s, double* out) {
  std::string t(Trim(s));
  if (t.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(t.c_str(), &end);  // accepts inf, nan, 1e-6
  if (end != t.c_str() + t.size()) return false;
  const bool literal_inf = t.find_first_of("iI") != std::string::npos;
  return literal_inf || std::isnan(*out) || std::fabs(*out) <= std::numeric_limits<float>::max();
}

std::vector<std::string_view> ListItems(std::string_view v, bool* bracketed) {
  v = Trim(v);
  *bracketed = v.size() >= 2 && v.front() == '[' && v.back() == ']';
  if (*bracketed) v = Trim(v.substr(1, v.size() - 2));
  if (v.empty()) return {};
  return SplitTop(v);
}

}  // namespace

StatusOr<Attrs> OpSchema::ParseAttrs(std::string_view text) const {
  Attrs out;
  if (Trim(text).empty()) return out;
  for (std::string_view part : SplitTop(text)) {
    part = Trim(part);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgumentError("attrs: '" + std::string(part) + "' is not name=value");
    }
    std::string key(Trim(part.substr(0, eq)));
    std::string_view val = Trim(part.substr(eq + 1));
    const AttrDef* def = FindAttr(key);
    if (!def) {
      Attrs probe;
      probe.Set(key, int64_t{0});
      Status st = ValidateAttrs(probe);  // produces the "did you mean" message
      return std::move(st).WithContext("attrs");
    }
    auto bad = [&](const char* what) {
      return InvalidArgumentError("attrs: " + key + "=" + std::string(val) + ": expected " + what +
                                  " for op " + name);
    };
    bool bracketed = false;
    switch (def->type) {
      case AttrType::kInt: {
        int64_t v;
        if (!ParseInt(val, &v)) return bad("an integer");
        out.Set(key, v);
        break;
      }
      case AttrType::kFloat: {
        double v;
        if (!ParseFloat(val, &v)) return bad("a number within float32's range (inf and nan as words)");
        out.Set(key, v);
        break;
      }
      case AttrType::kString: out.Set(key, Unquote(val)); break;
      case AttrType::kInts: {
        std::vector<int64_t> v;
        for (auto item : ListItems(val, &bracketed)) {
          int64_t x;
          if (!ParseInt(item, &x)) return bad("a list of integers like [1,2]");
          v.push_back(x);
        }
        out.Set(key, v);
        break;
      }
      case AttrType::kFloats: {
        std::vector<double> v;
        for (auto item : ListItems(val, &bracketed)) {
          double x;
          if (!ParseFloat(item, &x)) return bad("a list of numbers like [0.5,2]");
          v.push_back(x);
        }
        out.Set(key, v);
        break;
      }
      case AttrType::kStrings: {
        std::vector<std::string> v;
        for (auto item : ListItems(val, &bracketed)) v.push_back(Unquote(item));
        out.Set(key, v);
        break;
      }
      case AttrType::kTensor: {
        // A list of numbers becomes a 1-D tensor: float32 unless every item is an integer.
        std::vector<double> v;
        bool all_int = true;
        for (auto item : ListItems(val, &bracketed)) {
          double x;
          int64_t xi;
          if (!ParseFloat(item, &x)) return bad("a number or a list of numbers");
          if (!ParseInt(item, &xi)) all_int = false;
          v.push_back(x);
        }
        DType dt = all_int ? DType::kI64 : DType::kF32;
        OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dt, Shape({static_cast<int64_t>(v.size())})));
        for (size_t i = 0; i < v.size(); ++i) t.FlatSetFromDouble(static_cast<int64_t>(i), v[i]);
        out.Set(key, t);
        break;
      }
    }
  }
  Attrs checked = out;
  OPSCOPE_RETURN_IF_ERROR(ValidateAttrs(checked).WithContext("attrs"));
  return out;
}

// ---- builder ---------------------------------------------------------------------------

OpDef::OpDef(std::string name) { schema_.name = std::move(name); }
OpDef& OpDef::Domain(std::string d) { schema_.domain = std::move(d); return *this; }
OpDef& OpDef::PrefersLayout(std::string layout) { schema_.preferred_layout = std::move(layout); return *this; }
OpDef& OpDef::Doc(std::string d) { schema_.doc = std::move(d); return *this; }

OpDef& OpDef::Input(std::string n, std::string t) {
  schema_.inputs.push_back({std::move(n), std::move(t), ArgDef::Kind::kSingle, false});
  return *this;
}
OpDef& OpDef::OptionalInput(std::string n, std::string t) {
  schema_.inputs.push_back({std::move(n), std::move(t), ArgDef::Kind::kOptional, false});
  return *this;
}
OpDef& OpDef::VariadicInput(std::string n, std::string t) {
  schema_.inputs.push_back({std::move(n), std::move(t), ArgDef::Kind::kVariadic, false});
  return *this;
}
OpDef& OpDef::ValueInput(std::string n, std::string t, bool optional) {
  schema_.inputs.push_back({std::move(n), std::move(t), optional ? ArgDef::Kind::kOptional : ArgDef::Kind::kSingle, true});
  return *this;
}
OpDef& OpDef::Output(std::string n, std::string t) {
  schema_.outputs.push_back({std::move(n), std::move(t), ArgDef::Kind::kSingle, false});
  return *this;
}
OpDef& OpDef::OptionalOutput(std::string n, std::string t) {
  schema_.outputs.push_back({std::move(n), std::move(t), ArgDef::Kind::kOptional, false});
  return *this;
}
OpDef& OpDef::VariadicOutput(std::string n, std::string t) {
  schema_.outputs.push_back({std::move(n), std::move(t), ArgDef::Kind::kVariadic, false});
  return *this;
}
OpDef& OpDef::OutputWrittenOnlyWhen(std::string n, std::string when, WrittenFn written, std::string t) {
  schema_.outputs.push_back({std::move(n), std::move(t), ArgDef::Kind::kSingle, false, std::move(when), std::move(written)});
  return *this;
}
OpDef& OpDef::TypeConstraint(std::string v, std::vector<DType> d) {
  schema_.type_constraints[std::move(v)] = std::move(d);
  return *this;
}

static OpDef& AddAttr(OpDef& def, OpSchema& s, std::string n, AttrType t, std::optional<AttrValue> v,
                      bool required, std::vector<std::string> allowed = {}) {
  s.attrs.push_back({std::move(n), t, std::move(v), required, std::move(allowed)});
  return def;
}

OpDef& OpDef::Attr(std::string n, int64_t v) { return AddAttr(*this, schema_, std::move(n), AttrType::kInt, v, false); }
OpDef& OpDef::Attr(std::string n, double v) { return AddAttr(*this, schema_, std::move(n), AttrType::kFloat, v, false); }
OpDef& OpDef::Attr(std::string n, std::string v, std::vector<std::string> allowed) {
  return AddAttr(*this, schema_, std::move(n), AttrType::kString, std::move(v), false, std::move(allowed));
}
OpDef& OpDef::Attr(std::string n, std::vector<int64_t> v) {
  return AddAttr(*this, schema_, std::move(n), AttrType::kInts, std::move(v), false);
}
OpDef& OpDef::Attr(std::string n, std::vector<double> v) {
  return AddAttr(*this, schema_, std::move(n), AttrType::kFloats, std::move(v), false);
}
OpDef& OpDef::RequiredAttr(std::string n, AttrType t) { return AddAttr(*this, schema_, std::move(n), t, std::nullopt, true); }
OpDef& OpDef::OptionalAttr(std::string n, AttrType t) { return AddAttr(*this, schema_, std::move(n), t, std::nullopt, false); }

OpDef& OpDef::AttrAsInput(std::string n, AttrType t, int input, std::optional<DType> dtype) {
  schema_.attr_inputs.push_back(AttrInputDef{n, input, dtype});
  return OptionalAttr(std::move(n), t);
}

OpDef& OpDef::SameShape() {
  schema_.infer = [](InferContext& c) {
    for (int i = 0; i < c.num_outputs(); ++i) c.SetOutput(i, c.input(0).dtype, c.input(0).shape);
    return Status::Ok();
  };
  return *this;
}
OpDef& OpDef::Infer(ShapeFn fn) { schema_.infer = std::move(fn); return *this; }
OpDef& OpDef::Cost(CostFn fn) { schema_.cost = std::move(fn); return *this; }
OpDef& OpDef::InputRegion(RegionFn fn) { schema_.input_region = std::move(fn); return *this; }

OpDef& OpDef::Tunable(std::string n, std::vector<int64_t> v) {
  schema_.tunables.push_back({std::move(n), std::move(v)});
  return *this;
}
OpDef& OpDef::Reference(KernelFn fn) { schema_.reference = std::move(fn); return *this; }
OpDef& OpDef::Kernel(std::string device, KernelFn fn, std::string kernel_name) {
  if (kernel_name.empty()) kernel_name = schema_.name + "_" + device;
  schema_.kernel_names[device] = std::move(kernel_name);
  schema_.kernels[std::move(device)] = std::move(fn);
  return *this;
}

OpRegistrar::OpRegistrar(const OpDef& def, int abi_version) {
  // A plugin of another ABI may lay out OpDef differently: do not touch `def`.
  if (abi_version != kPluginAbiVersion) {
    registry_internal::AddPendingError(InvalidArgumentError(
        "built against opscope plugin ABI version " + std::to_string(abi_version) + ", but this libopscope has " +
        std::to_string(kPluginAbiVersion) + ": rebuild it against this opscope's include/opscope/"));
    return;
  }
  Status st = OpRegistry::Global().Register(def.schema());
  if (!st.ok()) registry_internal::AddPendingError(std::move(st));
}

}  // namespace opscope
