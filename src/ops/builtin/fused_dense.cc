// FusedConv, FusedGemm, FusedMatMul: the nodes bias_activation_fusion makes
// from Conv/Gemm/MatMul + Add(bias) + activation, and FusedConv also from a
// Conv + Add of a skip connection's other branch (Z, ResNet's residual). One
// dispatch runs the dense kernel of the base op, which applies the bias, Z
// and the activation to each block of output as it writes it
// (dense_epilogue.h); no intermediate tensor exists between them. Conv and
// Gemm take their bias through their own bias input; MatMul's comes as input
// 2; FusedConv's Z is input 3 (onnxruntime's com.microsoft FusedConv has it
// there too), B may be left out before it.
//
// Attributes beyond the base op's: activation ("" | Relu | Sigmoid | Tanh |
// LeakyRelu | Clip | Gelu), activation_alpha (LeakyRelu), activation_min /
// activation_max (Clip), activation_approximate (Gelu: none | tanh).
#include <limits>
#include <string_view>
#include <vector>

#include "ops/builtin/dense_epilogue.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

using dense::Epilogue;

const OpSchema& Base(const char* op) { return *OpRegistry::Global().Find(op); }

// The reference: the base op's reference into out(0), then the epilogue in
// double over every element (bias[i % n] when a bias is given, one value per
// output column).
Status FusedReference(KernelContext& ctx, const char* base, bool bias_input) {
  OPSCOPE_ASSIGN_OR_RETURN(Epilogue e, Epilogue::From(ctx.op_name(), ctx.attrs()));
  OPSCOPE_RETURN_IF_ERROR(Base(base).reference(ctx));
  Tensor& y = ctx.out(0);
  std::vector<double> b, z;
  if (bias_input && ctx.has_input(2)) b = kernels::ToDoubles(ctx.in(2));
  if (std::string_view(base) == "Conv" && ctx.has_input(3)) {
    // The shape only: the reference's Y may be float64.
    OPSCOPE_RETURN_IF_ERROR(
        dense::CheckResidual(ctx.op_name(), ctx.in(3).dtype(), ctx.in(3).shape(), ctx.in(3).dtype(), y.shape()));
    z = kernels::ToDoubles(ctx.in(3));
  }
  const int64_t nb = static_cast<int64_t>(b.size());
  if (e.act == dense::Act::kNone && nb == 0 && z.empty()) return Status::Ok();
  for (int64_t i = 0; i < y.numel(); ++i) {
    const double v = y.FlatGetAsDouble(i) + (nb ? b[i % nb] : 0.0) + (z.empty() ? 0.0 : z[i]);
    y.FlatSetFromDouble(i, e.Apply<double>(v));
  }
  return Status::Ok();
}

// The cpu kernels: the dense kernel applies the epilogue to each block of
// output as it writes it (dense_epilogue.h).
Status FusedConvCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Epilogue e, Epilogue::From(ctx.op_name(), ctx.attrs()));
  return dense::ConvCpu(ctx, e);
}

Status FusedGemmCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Epilogue e, Epilogue::From(ctx.op_name(), ctx.attrs()));
  return dense::GemmCpu(ctx, e);
}

Status FusedMatMulCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Epilogue e, Epilogue::From(ctx.op_name(), ctx.attrs()));
  return dense::MatMulCpu(ctx, e, ctx.has_input(2) ? &ctx.in(2) : nullptr);
}

ShapeFn InferAs(const char* base) {
  return [base](InferContext& c) { return Base(base).infer(c); };
}

// Conv's shape, and Z (input 3) where there is one exactly as Y.
Status FusedConvInfer(InferContext& c) {
  OPSCOPE_RETURN_IF_ERROR(Base("Conv").infer(c));
  if (!c.has_input(3)) return Status::Ok();
  const TensorDesc& y = c.outputs()[0];
  return dense::CheckResidual("FusedConv", c.input(3).dtype, c.input(3).shape, y.dtype, y.shape);
}

CostFn CostAs(const char* base) {
  return [base](const OpCall& c) {
    std::vector<TensorDesc> in, out;
    // The base op's own inputs: FusedConv's Z is counted below.
    for (int i = 0; i < c.num_inputs() && i < 3; ++i) in.push_back(c.in(i));
    for (int i = 0; i < c.num_outputs(); ++i) out.push_back(c.out(i));
    Cost cost = Base(base).EstimateCost(in, out, c.attrs());
    cost.flops += 4.0 * static_cast<double>(c.out(0).numel());  // bias + activation
    if (c.num_inputs() > 3 && c.in(3).present) {
      cost.bytes_read += c.in(3).bytes();
      cost.flops += static_cast<double>(c.out(0).numel());
    }
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
      // Unbounded by default: +-inf, which an attribute string writes and reads
      // back (DBL_MAX, the old default, is no float32 and failed to parse).
      .Attr("activation_min", -std::numeric_limits<double>::infinity())
      .Attr("activation_max", std::numeric_limits<double>::infinity())
      .Attr("activation_approximate", "none", {"none", "tanh"});
}

}  // namespace

static OpRegistrar fused_conv = ActivationAttrs(
    OpDef("FusedConv")
        .Domain("opscope")
        .Doc("Y = activation(Conv(X, W) + B + Z): Conv with its bias, a residual Z (Y's shape) and its "
             "activation as one kernel")
        .Input("X", "T").Input("W", "T").OptionalInput("B", "T").OptionalInput("Z", "T").Output("Y", "T")
        .Attr("auto_pad", "NOTSET", {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"})
        .Attr("dilations", std::vector<int64_t>{}).Attr("group", 1).Attr("kernel_shape", std::vector<int64_t>{})
        .Attr("pads", std::vector<int64_t>{}).Attr("strides", std::vector<int64_t>{})
        .Infer(FusedConvInfer)
        .Cost(CostAs("Conv"))
        .Tunable("tile", {0, 64, 256, 1024})  // as Conv's
        .Reference([](KernelContext& ctx) { return FusedReference(ctx, "Conv", false); })
        .Kernel("cpu", FusedConvCpu, "fused_conv_cpu"));

static OpRegistrar fused_gemm = ActivationAttrs(
    OpDef("FusedGemm")
        .Domain("opscope")
        .Doc("Y = activation(alpha * A' B' + beta * C): Gemm with its activation as one kernel")
        .Input("A", "T").Input("B", "T").OptionalInput("C", "T").Output("Y", "T")
        .Attr("alpha", 1.0f).Attr("beta", 1.0f).Attr("transA", 0).Attr("transB", 0)
        .Infer(InferAs("Gemm"))
        .Cost(CostAs("Gemm"))
        .Reference([](KernelContext& ctx) { return FusedReference(ctx, "Gemm", false); })
        .Kernel("cpu", FusedGemmCpu, "fused_gemm_cpu"));

static OpRegistrar fused_matmul = ActivationAttrs(
    OpDef("FusedMatMul")
        .Domain("opscope")
        .Doc("Y = activation(MatMul(A, B) + bias): bias is one value per output column")
        .Input("A", "T").Input("B", "T").OptionalInput("bias", "T").Output("Y", "T")
        .Infer(CheckMatMulBias)
        .Cost(CostAs("MatMul"))
        .Reference([](KernelContext& ctx) { return FusedReference(ctx, "MatMul", true); })
        .Kernel("cpu", FusedMatMulCpu, "fused_matmul_cpu"));

}  // namespace opscope
