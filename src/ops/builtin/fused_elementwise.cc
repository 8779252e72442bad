// FusedElementwise: a chain of unary/binary elementwise ops run as one kernel
// that reads each input element once, evaluates the whole chain in registers
// (tile by tile) and writes the output once. elementwise_chain_fusion makes
// these nodes; their program is in the attributes:
//
//   ops    ["Sub", "Mul", "Relu"]         one op per step
//   args   [0, 1, -1, 2, -1, -2]          two operands per step: >= 0 an input,
//                                          -1 the previous step's result, -2 none
//   alphas / betas                        per-step parameters (LeakyRelu alpha,
//                                          HardSigmoid alpha/beta, Elu alpha,
//                                          Gelu: alpha 1 = tanh form)
//
// Inputs broadcast to the output shape (numpy rules): elementwise ops commute
// with broadcasting, so every step can run at output resolution. In float, the
// transcendental steps run over the tile through the span functions of
// ew_vecmath.h where the CPU has AVX2, as the ops they stand for do.
#include <cmath>

#include "ops/builtin/ew_unary.h"
#include "ops/builtin/ew_util.h"
#include "ops/builtin/ew_vecmath.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

enum class Code { kAdd, kSub, kMul, kDiv, kPow, kRelu, kSigmoid, kTanh, kExp, kLog, kSqrt, kAbs, kNeg, kErf,
                  kLeakyRelu, kElu, kSoftplus, kHardSigmoid, kGelu };

struct Step {
  Code code;
  int a, b;  // operand refs
  double alpha, beta;
};

constexpr int kAcc = -1;
constexpr int kNone = -2;

StatusOr<Code> CodeOf(const std::string& op) {
  static const std::pair<const char*, Code> kCodes[] = {
      {"Add", Code::kAdd}, {"Sub", Code::kSub}, {"Mul", Code::kMul}, {"Div", Code::kDiv}, {"Pow", Code::kPow},
      {"Relu", Code::kRelu}, {"Sigmoid", Code::kSigmoid}, {"Tanh", Code::kTanh}, {"Exp", Code::kExp},
      {"Log", Code::kLog}, {"Sqrt", Code::kSqrt}, {"Abs", Code::kAbs}, {"Neg", Code::kNeg}, {"Erf", Code::kErf},
      {"LeakyRelu", Code::kLeakyRelu}, {"Elu", Code::kElu}, {"Softplus", Code::kSoftplus},
      {"HardSigmoid", Code::kHardSigmoid}, {"Gelu", Code::kGelu}};
  for (const auto& [name, code] : kCodes) {
    if (op == name) return code;
  }
  return InvalidArgumentError("FusedElementwise: attribute ops holds '" + op + "', which is not an elementwise op "
                              "it runs");
}

bool IsBinary(Code c) { return c <= Code::kPow; }

StatusOr<std::vector<Step>> ReadProgram(const Attrs& attrs, int num_inputs) {
  const std::vector<std::string> ops = attrs.strings("ops");
  const std::vector<int64_t> args = attrs.ints("args");
  const std::vector<double> alphas = attrs.floats("alphas"), betas = attrs.floats("betas");
  if (ops.empty()) return InvalidArgumentError("FusedElementwise: attribute ops is empty");
  if (args.size() != 2 * ops.size()) {
    return InvalidArgumentError("FusedElementwise: attribute args has " + std::to_string(args.size()) +
                                " values; expected 2 per op (" + std::to_string(2 * ops.size()) + ")");
  }
  std::vector<Step> steps;
  for (size_t k = 0; k < ops.size(); ++k) {
    OPSCOPE_ASSIGN_OR_RETURN(Code code, CodeOf(ops[k]));
    Step s{code, static_cast<int>(args[2 * k]), static_cast<int>(args[2 * k + 1]),
           k < alphas.size() ? alphas[k] : 0.0, k < betas.size() ? betas[k] : 0.0};
    for (int ref : {s.a, s.b}) {
      const bool needed = ref == s.a || IsBinary(code);
      if (ref >= num_inputs || ref < kNone || (needed && ref == kNone) || (ref == kAcc && k == 0)) {
        return InvalidArgumentError("FusedElementwise: step " + std::to_string(k) + " (" + ops[k] +
                                    ") has operand " + std::to_string(ref) + ", which is not an input (0.." +
                                    std::to_string(num_inputs - 1) + ") or an earlier result");
      }
    }
    steps.push_back(s);
  }
  return steps;
}

template <typename C>
C Eval(const Step& s, C a, C b) {
  switch (s.code) {
    case Code::kAdd: return a + b;
    case Code::kSub: return a - b;
    case Code::kMul: return a * b;
    case Code::kDiv: return a / b;
    case Code::kPow: return std::pow(a, b);
    case Code::kRelu: return a < C(0) ? C(0) : a;
    case Code::kSigmoid: return C(1) / (C(1) + std::exp(-a));
    case Code::kTanh: return std::tanh(a);
    case Code::kExp: return std::exp(a);
    case Code::kLog: return std::log(a);
    case Code::kSqrt: return std::sqrt(a);
    case Code::kAbs: return std::fabs(a);
    case Code::kNeg: return -a;
    case Code::kErf: return std::erf(a);
    case Code::kLeakyRelu: return a < C(0) ? C(s.alpha) * a : a;
    case Code::kElu: return a < C(0) ? C(s.alpha) * (std::exp(a) - C(1)) : a;
    case Code::kSoftplus: return std::log1p(std::exp(a));
    case Code::kHardSigmoid: return std::max(C(0), std::min(C(1), C(s.alpha) * a + C(s.beta)));
    case Code::kGelu:
      if (s.alpha != 0) return C(0.5) * a * (C(1) + std::tanh(C(0.7978845608028654) * (a + C(0.044715) * a * a * a)));
      return C(0.5) * a * (C(1) + std::erf(a * C(M_SQRT1_2)));
  }
  return a;
}

// One step over a tile, the switch taken once per tile rather than per
// element, so that each arithmetic loop vectorises (y may be a or b).
template <typename C>
void EvalTile(const Step& s, const C* a, const C* b, C* y, int64_t m) {
  auto map = [&](auto f) {
    for (int64_t j = 0; j < m; ++j) y[j] = f(a[j], b[j]);
  };
  switch (s.code) {
    case Code::kAdd: return map([](C x, C z) { return x + z; });
    case Code::kSub: return map([](C x, C z) { return x - z; });
    case Code::kMul: return map([](C x, C z) { return x * z; });
    case Code::kDiv: return map([](C x, C z) { return x / z; });
    case Code::kRelu: return map([](C x, C) { return x < C(0) ? C(0) : x; });
    case Code::kNeg: return map([](C x, C) { return -x; });
    case Code::kAbs: return map([](C x, C) { return std::fabs(x); });
    case Code::kSqrt: return map([](C x, C) { return std::sqrt(x); });
    default: return map([&s](C x, C z) { return Eval<C>(s, x, z); });
  }
}

constexpr int64_t kTile = 256;

// A step a span function computes over the tile (ew_vecmath.h), with its parameters;
// nullptr for the steps that vectorise as they are (arithmetic, Relu, ...).
ew::SpanFn SpanOf(const ew::VecMath& m, const Step& s, ew::UnaryParams& p) {
  p.alpha = s.alpha;
  p.tanh_approximation = s.alpha != 0;  // Gelu's alpha 1: the tanh form
  switch (s.code) {
    case Code::kSigmoid: return m.sigmoid;
    case Code::kTanh: return m.tanh;
    case Code::kExp: return m.exp;
    case Code::kLog: return m.log;
    case Code::kErf: return m.erf;
    case Code::kElu: return m.elu;
    case Code::kSoftplus: return m.softplus;
    case Code::kGelu: return m.gelu;
    default: return nullptr;
  }
}

template <typename T>
Status RunTyped(KernelContext& ctx, const std::vector<Step>& steps) {
  using C = typename ComputeTypeOf<T>::type;
  Tensor& y = ctx.out(0);
  const Shape& out = y.shape();
  const int n_in = ctx.num_inputs();
  std::vector<std::vector<int64_t>> strides(n_in);
  std::vector<const T*> base(n_in);
  std::vector<bool> flat(n_in);  // same shape and contiguous: index = output index
  for (int i = 0; i < n_in; ++i) {
    const Tensor& t = ctx.in(i);
    strides[i] = kernels::BroadcastStrides(t.shape(), t.strides(), out);
    base[i] = t.data<T>();
    flat[i] = t.shape() == out && t.is_contiguous();
  }
  T* py = y.data<T>();
  // float tiles (float16 and bfloat16 compute in float too) through ew_vecmath.h where the CPU has AVX2.
  const ew::VecMath* vm = nullptr;
  if constexpr (std::is_same_v<C, float>) vm = ew::Avx2VecMath();
  return ctx.ParallelFor("fused_elementwise_cpu", y.numel(), [&](int64_t s, int64_t e) {
    std::vector<C> in(static_cast<size_t>(n_in) * kTile);
    C acc[kTile];
    for (int64_t t0 = s; t0 < e; t0 += kTile) {
      const int64_t m = std::min(kTile, e - t0);
      for (int i = 0; i < n_in; ++i) {
        C* dst = &in[static_cast<size_t>(i) * kTile];
        if (flat[i]) {
          for (int64_t j = 0; j < m; ++j) dst[j] = static_cast<C>(base[i][t0 + j]);
        } else {
          const std::vector<int64_t>* st[1] = {&strides[i]};
          kernels::StridedIter<1> it(out, st, t0);
          for (int64_t j = 0; j < m; ++j, it.Next()) dst[j] = static_cast<C>(base[i][it.offset(0)]);
        }
      }
      for (const Step& st : steps) {
        const C* pa = st.a == kAcc ? acc : &in[static_cast<size_t>(st.a) * kTile];
        const C* pb = st.b == kAcc ? acc : (st.b == kNone ? pa : &in[static_cast<size_t>(st.b) * kTile]);
        if constexpr (std::is_same_v<C, float>) {
          ew::UnaryParams p;
          if (ew::SpanFn f = vm != nullptr ? SpanOf(*vm, st, p) : nullptr) {
            f(pa, acc, m, p);  // pa may be acc: the span functions allow it
            continue;
          }
        }
        EvalTile<C>(st, pa, pb, acc, m);
      }
      for (int64_t j = 0; j < m; ++j) py[t0 + j] = ew::Convert<T>(acc[j]);
    }
  });
}

Status FusedElementwiseCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<Step> steps, ReadProgram(ctx.attrs(), ctx.num_inputs()));
  return DispatchFloat(ctx.out(0).dtype(), ctx.op_name(),
                       [&]<typename scalar_t>() { return RunTyped<scalar_t>(ctx, steps); });
}

// Independent of the tiled kernel: whole-tensor steps in double.
Status FusedElementwiseReference(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<Step> steps, ReadProgram(ctx.attrs(), ctx.num_inputs()));
  const Shape& out = ctx.out(0).shape();
  std::vector<std::vector<double>> in;
  for (int i = 0; i < ctx.num_inputs(); ++i) in.push_back(ew::BroadcastToDoubles(ctx.in(i), out));
  std::vector<double> acc(out.numel());
  std::vector<double> next(out.numel());
  for (const Step& s : steps) {
    const std::vector<double>& a = s.a == kAcc ? acc : in[s.a];
    const std::vector<double>& b = s.b == kAcc ? acc : (s.b == kNone ? a : in[s.b]);
    for (size_t j = 0; j < next.size(); ++j) next[j] = Eval<double>(s, a[j], b[j]);
    acc.swap(next);
  }
  ew::StoreReference(ctx.out(0), acc);
  return Status::Ok();
}

Status InferFused(InferContext& c) {
  OPSCOPE_RETURN_IF_ERROR(ReadProgram(c.attrs(), c.num_inputs()).status());
  return ew::InferBroadcastSame(c);
}

Cost FusedCost(const OpCall& c) {
  Cost cost;
  for (int i = 0; i < c.num_inputs(); ++i) cost.bytes_read += c.in(i).bytes();
  cost.bytes_written = c.out(0).bytes();
  cost.flops = static_cast<double>(c.out(0).numel()) * static_cast<double>(c.attrs().strings("ops").size());
  return cost;
}

}  // namespace

OPSCOPE_OP("FusedElementwise")
    .Domain("opscope")
    .Doc("a chain of elementwise ops evaluated per element in one pass (see attrs ops/args)")
    .VariadicInput("X", "T").Output("Y", "T")
    .RequiredAttr("ops", AttrType::kStrings)
    .RequiredAttr("args", AttrType::kInts)
    .Attr("alphas", std::vector<double>{})
    .Attr("betas", std::vector<double>{})
    .Infer(InferFused)
    .Cost(FusedCost)
    .Tunable("block", ew::BlockChoices())
    .Reference(FusedElementwiseReference)
    .Kernel("cpu", FusedElementwiseCpu, "fused_elementwise_cpu");

}  // namespace opscope
