// File: opscope/op.h
// Defining an operator: its schema (inputs, outputs, typed attributes with
// defaults, shape inference, cost model, tunables), its kernels per backend,
// and a reference kernel that computes in double precision. Built-in ops and
// plugin ops (a .so loaded with --plugin) use this same header:
//
//   OPSCOPE_OP("my_norm")
//       .Input("x").Output("y")
//       .Attr("eps", 1e-6).Attr("axis", -1)
//       .SameShape()
//       .Cost([](const OpCall& c) {
//         return Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(),
//                     .flops = 3.0 * c.in(0).numel()};
//       })
//       .Tunable("block", {64, 128, 256, 512})
//       .Reference(my_norm_reference)   // plain loops, double accumulation
//       .Kernel("cpu", my_norm_cpu);    // the kernel under test
//
// Kernels return Status; no exception may leave a kernel. A kernel that reads
// an attribute or tunable its op does not declare fails its launch, naming
// the op and the name (a typo must not silently read 0).
//
// A plugin is C++ compiled against these headers: std::function, std::map and
// std::variant cross between it and libopscope.so, so both must be built from
// the same version of include/opscope/. Every OPSCOPE_OP registration carries
// the OPSCOPE_PLUGIN_ABI_VERSION it was compiled with, and the plugin loader
// refuses a plugin whose version differs from the library's.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "opscope/device.h"
#include "opscope/dtype.h"
#include "opscope/index_box.h"  // IndexBox: the input elements one output element reads
#include "opscope/status.h"
#include "opscope/tensor.h"

// Bump on any change to include/opscope/ that changes what a compiled plugin
// and libopscope.so exchange (a struct's layout, a signature, an inline
// function's behaviour). Only the negative test (examples/bad_plugin) defines
// it on the command line, to stand for a plugin built against another version.
#ifndef OPSCOPE_PLUGIN_ABI_VERSION
#define OPSCOPE_PLUGIN_ABI_VERSION 7
#endif

namespace opscope {

inline constexpr int kPluginAbiVersion = OPSCOPE_PLUGIN_ABI_VERSION;

class TraceSink;        // opscope/trace.h
struct OpSchema;
class UndeclaredReads;  // src/ops: the op's declared names and the first bad read

// ---- attributes -------------------------------------------------------------

enum class AttrType { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor };
const char* AttrTypeName(AttrType t);  // "int", "float", "string", "ints", ...

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>, Tensor>;
AttrType AttrTypeOf(const AttrValue& v);
std::string AttrValueToString(const AttrValue& v);  // the --attrs syntax: 3, 1e-06, [1,2], linear

class Attrs {
 public:
  // Whether the attr has a value (an OptionalAttr may have none).
  bool has(std::string_view name) const;
  void Set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  const AttrValue* Find(std::string_view name) const;
  const std::map<std::string, AttrValue>& all() const { return values_; }
  bool empty() const { return values_.empty(); }

  // Typed reads. After the dispatcher validated the attrs against the schema,
  // every attr with a default is present. A missing or mistyped attr returns
  // `fallback` (an int read of a float attr converts). Reading (or has()) a
  // name the op does not declare also returns `fallback`, and is recorded:
  // the dispatcher then fails the launch with undeclared_read().
  int64_t i(std::string_view name, int64_t fallback = 0) const;
  double f(std::string_view name, double fallback = 0.0) const;
  std::string s(std::string_view name, const std::string& fallback = "") const;
  std::vector<int64_t> ints(std::string_view name, std::vector<int64_t> fallback = {}) const;
  std::vector<double> floats(std::string_view name, std::vector<double> fallback = {}) const;
  std::vector<std::string> strings(std::string_view name) const;
  const Tensor* tensor(std::string_view name) const;

  std::string ToString() const;  // "axis=-1,eps=1e-06,kernel_shape=[3,3]"

  // The first read of a name the op does not declare since OpSchema::ValidateAttrs
  // ("op my_norm read attribute 'epz', which it does not declare (it declares: eps)"),
  // else Ok. Unvalidated attrs check nothing.
  Status undeclared_read() const;

 private:
  friend struct OpSchema;  // ValidateAttrs attaches the declared names
  void NoteRead(std::string_view name) const;

  std::map<std::string, AttrValue> values_;
  std::shared_ptr<UndeclaredReads> check_;  // shared by copies; replaced by each validation
};

// ---- descriptions and contexts ---------------------------------------------------

// What shape inference and cost models see of a tensor.
struct TensorDesc {
  DType dtype = DType::kF32;
  Shape shape;
  bool present = true;  // false for an omitted optional input
  int64_t numel() const { return shape.numel(); }
  int64_t bytes() const { return shape.numel() * static_cast<int64_t>(DTypeSize(dtype)); }
};

struct Cost {
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  double flops = 0;
};

// The call a cost model is asked about.
class OpCall {
 public:
  OpCall(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, const Attrs& attrs)
      : in_(in), out_(out), attrs_(attrs) {}
  int num_inputs() const { return static_cast<int>(in_.size()); }
  int num_outputs() const { return static_cast<int>(out_.size()); }
  const TensorDesc& in(int i) const { return in_[i]; }
  const TensorDesc& out(int i) const { return out_[i]; }
  const Attrs& attrs() const { return attrs_; }

 private:
  const std::vector<TensorDesc>& in_;
  const std::vector<TensorDesc>& out_;
  const Attrs& attrs_;
};

class InferContext {
 public:
  InferContext(std::string_view op, const std::vector<TensorDesc>& inputs,
               const std::vector<const Tensor*>& values, const Attrs& attrs, int num_outputs)
      : op_(op), inputs_(inputs), values_(values), attrs_(attrs), outputs_(num_outputs) {}
  std::string_view op_name() const { return op_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i].present; }
  const TensorDesc& input(int i) const { return inputs_[i]; }
  // Host values of inputs the schema declared with ValueInput; nullptr otherwise.
  const Tensor* input_value(int i) const {
    return i < static_cast<int>(values_.size()) ? values_[i] : nullptr;
  }
  const Attrs& attrs() const { return attrs_; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  void SetOutput(int i, DType dtype, Shape shape) { outputs_.at(i) = TensorDesc{dtype, std::move(shape)}; }
  const std::vector<TensorDesc>& outputs() const { return outputs_; }

 private:
  std::string_view op_;
  const std::vector<TensorDesc>& inputs_;
  const std::vector<const Tensor*>& values_;
  const Attrs& attrs_;
  std::vector<TensorDesc> outputs_;
};

// One kernel launch an op made, as the dispatcher records it.
struct KernelLaunchInfo {
  std::string name;
  LaunchConfig config;
  // A device kernel's, as its backend tells them (Device::DescribeKernel);
  // -1 for host kernels and where the backend cannot tell.
  int registers_per_thread = -1;
  int64_t shared_bytes_per_block = -1;  // static + the launch's dynamic shared memory
  int active_blocks_per_sm = -1;        // at this launch's block size
  double occupancy = -1;                // active threads / the SM's thread slots
  // "32 registers/thread, 4096 B shared/block, occupancy 50% (4 blocks/SM)";
  // "" when none is known.
  std::string ResourcesText() const;
};

// What a kernel (or reference kernel) sees. Outputs are allocated before the
// kernel runs, from shape inference. A reference kernel runs on the host with
// device() == nullptr, and its floating-point outputs are float64.
class KernelContext {
 public:
  KernelContext(std::string_view op, std::vector<Tensor> inputs, std::vector<Tensor> outputs,
                const Attrs& attrs, Device* device, Stream* stream,
                const std::map<std::string, int64_t>& tunables);

  std::string_view op_name() const { return op_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i].defined(); }
  const Tensor& in(int i) const { return inputs_.at(i); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  bool has_output(int i) const { return i < num_outputs() && outputs_[i].defined(); }
  Tensor& out(int i) { return outputs_.at(i); }
  std::vector<Tensor>& outputs() { return outputs_; }
  const Attrs& attrs() const { return attrs_; }
  Device* device() const { return device_; }  // nullptr: host (reference run)
  Stream* stream() const { return stream_; }
  bool is_reference() const { return device_ == nullptr; }

  // The value chosen for a tunable. A name the op does not declare returns
  // `fallback` and fails the launch (see undeclared_read()).
  int64_t tunable(std::string_view name, int64_t fallback) const;

  // Launches on this call's stream, as the device runs it (the cpu backend:
  // blocks spread over its thread pool). A reference run has no stream: its
  // blocks run inline, one after another, on the calling thread.
  Status Launch(const KernelLaunch& kernel);
  // Splits [0, n) into blocks and runs fn(begin, end) for each, as one launch
  // named `kernel_name`. The block size is the "block" tunable when the op has
  // one, else `default_block`. Launch and wait: returns after all blocks ran.
  Status ParallelFor(std::string_view kernel_name, int64_t n,
                     const std::function<void(int64_t begin, int64_t end)>& fn,
                     int64_t default_block = 16384);
  // Kernels launched so far by this call.
  const std::vector<KernelLaunchInfo>& launches() const { return launches_; }

  // Set by the dispatcher: the call's op_id, and where tracepoints go
  // (nullptr unless the call is traced; see opscope/trace.h).
  uint64_t op_id() const { return op_id_; }
  TraceSink* trace_sink() const { return trace_sink_; }
  void SetTrace(uint64_t op_id, TraceSink* sink) { op_id_ = op_id, trace_sink_ = sink; }

  // The first read of an attribute or tunable the op does not declare, else
  // Ok: the dispatcher turns it into a failed launch once the kernel returns.
  Status undeclared_read() const;

 private:
  std::string_view op_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> outputs_;
  const Attrs& attrs_;
  Device* device_;
  Stream* stream_;
  const std::map<std::string, int64_t>& tunables_;  // every declared tunable has a value
  std::vector<KernelLaunchInfo> launches_;
  mutable std::mutex undeclared_mu_;        // blocks of a launch may read tunables at once
  mutable std::string undeclared_tunable_;  // the first message; "" while none
  uint64_t op_id_ = 0;
  TraceSink* trace_sink_ = nullptr;
};

using KernelFn = std::function<Status(KernelContext&)>;
using ShapeFn = std::function<Status(InferContext&)>;
using CostFn = std::function<Cost(const OpCall&)>;
// The index map of an op: for output `output` at `coords`, one box per input
// (an empty box: the element does not read that input).
using RegionFn = std::function<std::vector<IndexBox>(const OpCall&, int output, const std::vector<int64_t>& coords)>;

// ---- schema ------------------------------------------------------------------------

// Whether an output declared with OpDef::OutputWrittenOnlyWhen is written in
// one call, decided from that call's attributes and inputs.
using WrittenFn = std::function<bool(const Attrs& attrs, const std::vector<TensorDesc>& inputs)>;

struct ArgDef {
  enum class Kind { kSingle, kOptional, kVariadic };
  std::string name;
  std::string type_var;      // names a type constraint; "" = any dtype
  Kind kind = Kind::kSingle;
  bool value_input = false;  // shape inference reads its values (kept on host)
  // Outputs only: one the kernel leaves untouched by design in some calls (a
  // mask written in training mode only). `written_when` says when it is
  // written, in words for reports ("training=1"); `written` decides it for one
  // call. Both or neither: OpRegistry::Register refuses one without the other.
  std::string written_when;
  WrittenFn written;
};

struct AttrDef {
  std::string name;
  AttrType type = AttrType::kInt;
  std::optional<AttrValue> default_value;
  bool required = false;
  std::vector<std::string> allowed;  // for strings: the accepted values
};

// An attribute that a later ONNX opset turned into an input (Unsqueeze's
// axes, Split's split, Clip's min and max, Pad's pads, ...). Either form is
// accepted: given as an attribute (an old opset's node, `--attrs axes=[0]`),
// the dispatcher hands it to shape inference and the kernels as input `input`,
// so they read one form only. int/ints attributes become int64 tensors; float
// and floats take `dtype`, or input 0's dtype when it is unset. int and float
// attributes become scalars (rank 0), ints and floats 1-D tensors.
struct AttrInputDef {
  std::string attr;
  int input = 0;
  std::optional<DType> dtype;
};

struct TunableDef {
  std::string name;
  std::vector<int64_t> values;  // the first is the default
};

struct OpSchema {
  std::string name;
  std::string domain;  // "" for built-ins (ONNX default domain)
  std::string doc;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::map<std::string, std::vector<DType>> type_constraints;
  std::vector<AttrDef> attrs;
  std::vector<AttrInputDef> attr_inputs;
  ShapeFn infer;
  CostFn cost;
  RegionFn input_region;  // optional; without it the region is found by perturbing inputs
  std::vector<TunableDef> tunables;
  KernelFn reference;
  std::map<std::string, KernelFn> kernels;          // by device name: "cpu", "cuda"
  std::map<std::string, std::string> kernel_names;  // by device name, for reports
  std::string source;  // "builtin" or the plugin's path
  // "NHWC": the compiler's layout pass feeds the op's 4-d data input (and
  // takes its 4-d output) in that layout, setting its "layout" attribute to
  // it, which the op must declare; "": the op takes ONNX's NCHW.
  std::string preferred_layout;

  const AttrDef* FindAttr(std::string_view attr) const;
  const TunableDef* FindTunable(std::string_view t) const;
  int MinInputs() const;
  int MaxInputs() const;   // INT32_MAX when variadic
  int MinOutputs() const;
  int MaxOutputs() const;
  // Checks names and types against the schema and fills in defaults.
  // Unknown names are reported with the closest known attr.
  Status ValidateAttrs(Attrs& attrs) const;
  // Moves attributes declared with OpDef::AttrAsInput into the inputs they
  // stand for (see AttrInputDef); giving both forms is an error naming both.
  Status MoveAttrsToInputs(std::vector<Tensor>& inputs, Attrs& attrs) const;
  // Checks input count and that every dtype meets its constraint (and that
  // inputs sharing a type variable share a dtype).
  Status CheckInputs(const std::vector<TensorDesc>& inputs) const;
  // Runs shape inference; `values` holds host tensors for value inputs.
  StatusOr<std::vector<TensorDesc>> InferOutputs(const std::vector<TensorDesc>& inputs,
                                                 const std::vector<const Tensor*>& values,
                                                 const Attrs& attrs, int num_outputs) const;
  Cost EstimateCost(const std::vector<TensorDesc>& inputs, const std::vector<TensorDesc>& outputs,
                    const Attrs& attrs) const;
  // Parses "eps=1e-6,axis=-1,kernel_shape=[3,3],mode=linear" by the declared types.
  StatusOr<Attrs> ParseAttrs(std::string_view text) const;
};

// ---- the builder ----------------------------------------------------------------------

class OpDef {
 public:
  explicit OpDef(std::string name);
  OpDef& Domain(std::string domain);
  // The layout the op's kernels want their 4-d data in (OpSchema::preferred_layout).
  OpDef& PrefersLayout(std::string layout);
  OpDef& Doc(std::string doc);

  OpDef& Input(std::string name, std::string type_var = "T");
  OpDef& OptionalInput(std::string name, std::string type_var = "T");
  OpDef& VariadicInput(std::string name, std::string type_var = "T");
  // An input whose values shape inference reads (a shape, axes, k, ...).
  OpDef& ValueInput(std::string name, std::string type_var, bool optional = false);
  OpDef& Output(std::string name, std::string type_var = "T");
  OpDef& OptionalOutput(std::string name, std::string type_var = "T");
  OpDef& VariadicOutput(std::string name, std::string type_var = "T");
  // An output written only in some calls, by design: `ops-debug run` neither
  // compares it nor calls it "never written" in a call where `written` is
  // false, and says so with `when` ("mask: not written in this call, by
  // design: written only when training=1").
  OpDef& OutputWrittenOnlyWhen(std::string name, std::string when, WrittenFn written, std::string type_var = "T");
  // Without a constraint, type variable "T" means the four float types.
  OpDef& TypeConstraint(std::string type_var, std::vector<DType> dtypes);

  OpDef& Attr(std::string name, int value) { return Attr(std::move(name), static_cast<int64_t>(value)); }
  OpDef& Attr(std::string name, int64_t value);
  OpDef& Attr(std::string name, float value) { return Attr(std::move(name), static_cast<double>(value)); }
  OpDef& Attr(std::string name, double value);
  OpDef& Attr(std::string name, const char* value) { return Attr(std::move(name), std::string(value)); }
  OpDef& Attr(std::string name, std::string value, std::vector<std::string> allowed = {});
  OpDef& Attr(std::string name, std::vector<int64_t> value);
  OpDef& Attr(std::string name, std::vector<double> value);
  OpDef& RequiredAttr(std::string name, AttrType type);
  OpDef& OptionalAttr(std::string name, AttrType type);  // no default; check attrs.has()
  // The older-opset attribute form of input `input` (see AttrInputDef).
  OpDef& AttrAsInput(std::string name, AttrType type, int input, std::optional<DType> dtype = std::nullopt);

  OpDef& SameShape();  // output 0: dtype and shape of input 0
  OpDef& Infer(ShapeFn fn);
  OpDef& Cost(CostFn fn);
  // Declares which input elements each output element reads (see RegionFn).
  OpDef& InputRegion(RegionFn fn);
  OpDef& Tunable(std::string name, std::vector<int64_t> values);
  OpDef& Reference(KernelFn fn);
  OpDef& Kernel(std::string device, KernelFn fn, std::string kernel_name = "");

  const OpSchema& schema() const { return schema_; }

 private:
  OpSchema schema_;
};

// ---- the registry ---------------------------------------------------------------------

// Every op of the process: the built-ins and those of loaded plugins.
class OpRegistry {
 public:
  static OpRegistry& Global();
  Status Register(OpSchema schema);  // AlreadyExists-style InvalidArgument on duplicates
  const OpSchema* Find(std::string_view name) const;
  // NotFound naming the closest known ops.
  StatusOr<const OpSchema*> Lookup(std::string_view name) const;
  std::vector<std::string> Names() const;
  std::vector<std::string> ClosestNames(std::string_view name, int k = 3) const;

 private:
  OpRegistry() = default;
};

// What OPSCOPE_OP expands to. `abi_version` is the plugin's own
// OPSCOPE_PLUGIN_ABI_VERSION (the default argument is evaluated where the
// registration is compiled); on a mismatch the op is not registered and the
// plugin loader refuses the whole plugin.
struct OpRegistrar {
  OpRegistrar(const OpDef& def, int abi_version = OPSCOPE_PLUGIN_ABI_VERSION);  // NOLINT: used by OPSCOPE_OP
};

}  // namespace opscope

#define OPSCOPE_OP(name) \
  static ::opscope::OpRegistrar OPSCOPE_CONCAT(_opscope_op_registrar_, __COUNTER__) = ::opscope::OpDef(name)
