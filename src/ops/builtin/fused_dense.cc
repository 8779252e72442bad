// FusedConv, FusedGemm, FusedMatMul: the nodes bias_activation_fusion makes
// from Conv/Gemm/MatMul + Add(bias) + activation. One dispatch runs the dense
// kernel of the base op straight into the output and then the bias and
// activation epilogue over that output while it is still in cache; no
// intermediate tensor exists between them. Conv and Gemm take their bias
// through their own bias input; MatMul's comes as input 2.
//
// Attributes beyond the base op's: activation ("" | Relu | Sigmoid | Tanh |
// LeakyRelu | Clip | Gelu), activation_alpha (LeakyRelu), activation_min /
// activation_max (Clip), activation_approximate (Gelu: none | tanh).
#include <cmath>
#include <limits>

#include "ops/builtin/ew_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

enum class Act { kNone, kRelu, kSigmoid, kTanh, kLeakyRelu, kClip, kGelu, kGeluTanh };

struct Epilogue {
  Act act = Act::kNone;
  double alpha = 0.01, lo = -std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::max();

  static StatusOr<Epilogue> From(std::string_view op, const Attrs& a) {
    Epilogue e;
    const std::string name = a.s("activation");
    e.alpha = a.f("activation_alpha", 0.01);
    e.lo = a.f("activation_min", e.lo);
    e.hi = a.f("activation_max", e.hi);
    if (name.empty()) e.act = Act::kNone;
    else if (name == "Relu") e.act = Act::kRelu;
    else if (name == "Sigmoid") e.act = Act::kSigmoid;
    else if (name == "Tanh") e.act = Act::kTanh;
    else if (name == "LeakyRelu") e.act = Act::kLeakyRelu;
    else if (name == "Clip") e.act = Act::kClip;
    else if (name == "Gelu") e.act = a.s("activation_approximate") == "tanh" ? Act::kGeluTanh : Act::kGelu;
    else return InvalidArgumentError(std::string(op) + ": attribute activation='" + name +
                                     "' is not one of Relu, Sigmoid, Tanh, LeakyRelu, Clip, Gelu");
    return e;
  }

  template <typename C>
  C Apply(C x) const {
    switch (act) {
      case Act::kNone: return x;
      case Act::kRelu: return x < C(0) ? C(0) : x;
      case Act::kSigmoid: return C(1) / (C(1) + std::exp(-x));
      case Act::kTanh: return std::tanh(x);
      case Act::kLeakyRelu: return x < C(0) ? C(alpha) * x : x;
      case Act::kClip: return x < C(lo) ? C(lo) : (x > C(hi) ? C(hi) : x);
      case Act::kGelu: return C(0.5) * x * (C(1) + std::erf(x * C(M_SQRT1_2)));
      case Act::kGeluTanh: {
        const C k = C(0.7978845608028654);  // sqrt(2/pi)
        return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
      }
    }
    return x;
  }
};

const OpSchema& Base(const char* op) { return *OpRegistry::Global().Find(op); }

// y = act(y + bias[j % n]) in place over a contiguous output; no bias when `bias` is null.
Status RunEpilogue(KernelContext& ctx, const Epilogue& e, const Tensor* bias) {
  Tensor& y = ctx.out(0);
  if (e.act == Act::kNone && bias == nullptr) return Status::Ok();
  std::vector<double> b;
  if (bias) b = kernels::ToDoubles(*bias);
  const int64_t nb = static_cast<int64_t>(b.size());
  if (ctx.is_reference()) {
    for (int64_t i = 0; i < y.numel(); ++i) {
      double v = y.FlatGetAsDouble(i) + (nb ? b[i % nb] : 0.0);
      y.FlatSetFromDouble(i, e.Apply<double>(v));
    }
    return Status::Ok();
  }
  return DispatchFloat(y.dtype(), ctx.op_name(), [&]<typename scalar_t>() {
    using C = typename ComputeTypeOf<scalar_t>::type;
    scalar_t* p = y.data<scalar_t>();
    std::vector<C> bc(b.begin(), b.end());
    return ctx.ParallelFor(std::string(ctx.op_name()) + "_epilogue", y.numel(), [&](int64_t s, int64_t end) {
      for (int64_t i = s; i < end; ++i) {
        C v = static_cast<C>(p[i]);
        if (nb) v += bc[i % nb];
        p[i] = ew::Convert<scalar_t>(e.Apply<C>(v));
      }
    });
  });
}

// The base op's kernel (cpu or reference) into out(0), then the epilogue.
KernelFn Fused(const char* base, bool bias_input) {
  return [base, bias_input](KernelContext& ctx) -> Status {
    OPSCOPE_ASSIGN_OR_RETURN(Epilogue e, Epilogue::From(ctx.op_name(), ctx.attrs()));
    const OpSchema& op = Base(base);
    KernelFn kernel;
    if (ctx.is_reference()) {
      kernel = op.reference;
    } else {
      auto it = op.kernels.find("cpu");
      if (it == op.kernels.end()) return UnimplementedError(std::string(base) + " has no cpu kernel");
      kernel = it->second;
    }
    OPSCOPE_RETURN_IF_ERROR(kernel(ctx));
    const Tensor* bias = bias_input && ctx.has_input(2) ? &ctx.in(2) : nullptr;
    return RunEpilogue(ctx, e, bias);
  };
}

ShapeFn InferAs(const char* base) {
  return [base](InferContext& c) { return Base(base).infer(c); };
}

CostFn CostAs(const char* base) {
  return [base](const OpCall& c) {
    std::vector<TensorDesc> in, out;
    for (int i = 0; i < c.num_inputs(); ++i) in.push_back(c.in(i));
    for (int i = 0; i < c.num_outputs(); ++i) out.push_back(c.out(i));
    Cost cost = Base(base).EstimateCost(in, out, c.attrs());
    cost.flops += 4.0 * static_cast<double>(c.out(0).numel());  // bias + activation
    return cost;
  };
}

Status CheckMatMulBias(InferContext& c) {
  OPSCOPE_RETURN_IF_ERROR(Base("MatMul").infer(c));
  if (!c.has_input(2)) return Status::Ok();
  const Shape& y = c.outputs()[0].shape;
  const int64_t n = y.rank() ? y[y.rank() - 1] : 1;
  if (c.input(2).numel() != n) {
    return InvalidArgumentError("FusedMatMul: bias " + c.input(2).shape.ToString() + " must hold one value per "
                                "output column (" + std::to_string(n) + ")");
  }
  return Status::Ok();
}

OpDef& ActivationAttrs(OpDef& def) {
  return def.Attr("activation", "", {"", "Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "Gelu"})
      .Attr("activation_alpha", 0.01)
      .Attr("activation_min", -std::numeric_limits<double>::max())
      .Attr("activation_max", std::numeric_limits<double>::max())
      .Attr("activation_approximate", "none", {"none", "tanh"});
}

}  // namespace

static OpRegistrar fused_conv = ActivationAttrs(
    OpDef("FusedConv")
        .Domain("opscope")
        .Doc("Y = activation(Conv(X, W) + B): Conv with its bias and activation as one kernel")
        .Input("X", "T").Input("W", "T").OptionalInput("B", "T").Output("Y", "T")
        .Attr("auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"})
        .Attr("dilations", std::vector<int64_t>{}).Attr("group", 1).Attr("kernel_shape", std::vector<int64_t>{})
        .Attr("pads", std::vector<int64_t>{}).Attr("strides", std::vector<int64_t>{})
        .Infer(InferAs("Conv"))
        .Cost(CostAs("Conv"))
        .Reference(Fused("Conv", false))
        .Kernel("cpu", Fused("Conv", false), "fused_conv_cpu"));

static OpRegistrar fused_gemm = ActivationAttrs(
    OpDef("FusedGemm")
        .Domain("opscope")
        .Doc("Y = activation(alpha * A' B' + beta * C): Gemm with its activation as one kernel")
        .Input("A", "T").Input("B", "T").OptionalInput("C", "T").Output("Y", "T")
        .Attr("alpha", 1.0f).Attr("beta", 1.0f).Attr("transA", 0).Attr("transB", 0)
        .Infer(InferAs("Gemm"))
        .Cost(CostAs("Gemm"))
        .Reference(Fused("Gemm", false))
        .Kernel("cpu", Fused("Gemm", false), "fused_gemm_cpu"));

static OpRegistrar fused_matmul = ActivationAttrs(
    OpDef("FusedMatMul")
        .Domain("opscope")
        .Doc("Y = activation(MatMul(A, B) + bias): bias is one value per output column")
        .Input("A", "T").Input("B", "T").OptionalInput("bias", "T").Output("Y", "T")
        .Infer(CheckMatMulBias)
        .Cost(CostAs("MatMul"))
        .Reference(Fused("MatMul", true))
        .Kernel("cpu", Fused("MatMul", true), "fused_matmul_cpu"));

}  // namespace opscope
