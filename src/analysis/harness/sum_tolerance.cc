#include "analysis/harness/sum_tolerance.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <variant>

namespace opscope {
namespace {

double MeanAbs(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return 0;
  double sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = std::fabs(t.FlatGetAsDouble(i));
    if (std::isfinite(v)) sum += v;
  }
  return sum / static_cast<double>(t.numel());
}

int64_t IntAttr(const Attrs& attrs, const char* name, int64_t fallback) {
  const AttrValue* v = attrs.Find(name);
  const int64_t* i = v != nullptr ? std::get_if<int64_t>(v) : nullptr;
  return i != nullptr ? *i : fallback;
}

// The number of products each output sums (0: not a sum of products).
int64_t SumLength(const std::string& op, const std::vector<Tensor>& in, const Attrs& attrs) {
  if (in.size() < 2 || !in[0].defined() || !in[1].defined()) return 0;
  const Shape& a = in[0].shape();
  const Shape& b = in[1].shape();
  if (op == "Conv" || op == "FusedConv") {
    // W is [M, C / group, k...]: every output sums C / group * prod(k) products.
    int64_t k = 1;
    for (int d = 1; d < b.rank(); ++d) k *= b[d];
    return b.rank() >= 2 ? k : 0;
  }
  if (op == "ConvTranspose") {
    // W is [C, M / group, k...]: at most C / group * prod(k) products reach an output.
    const int64_t group = std::max<int64_t>(1, IntAttr(attrs, "group", 1));
    int64_t k = b.rank() >= 1 ? b[0] / group : 0;
    for (int d = 2; d < b.rank(); ++d) k *= b[d];
    return k;
  }
  if (op == "Gemm" || op == "FusedGemm") {
    if (a.rank() != 2) return 0;
    return IntAttr(attrs, "transA", 0) ? a[0] : a[1];
  }
  if (op == "MatMul" || op == "FusedMatMul") return a.rank() >= 1 ? a[a.rank() - 1] : 0;
  return 0;
}

}  // namespace

std::optional<SumTolerance> SumRoundingTolerance(const OpSchema& op, const std::vector<Tensor>& inputs,
                                                 const Attrs& attrs, DType dtype, const Tolerance& current) {
  if (!IsFloat(dtype) || current.rule == CompareRule::kBitExact || current.rule == CompareRule::kUlp) {
    return std::nullopt;
  }
  if (op.source != "builtin") return std::nullopt;  // a plugin's op may sum anything
  const int64_t k = SumLength(op.name, inputs, attrs);
  if (k < 2 || !inputs[0].on_host() || !inputs[1].on_host()) return std::nullopt;
  // The kernels sum in float for every float dtype but float64 (dense::AccOf).
  const double u = dtype == DType::kF64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const double terms = static_cast<double>(k) * MeanAbs(inputs[0]) * MeanAbs(inputs[1]);
  const double atol = 2.0 * std::sqrt(static_cast<double>(k)) * u * terms;
  if (!(atol > current.atol) || !std::isfinite(atol)) return std::nullopt;
  char note[256];
  std::snprintf(note, sizeof note,
                "abserr raised from %.3g to %.3g: the rounding of %lld-term sums (2 sqrt(K) u K mean|%s| mean|%s|, "
                "u = 2^%d); --abserr or --mode sets it",
                current.atol, atol, static_cast<long long>(k), op.inputs.size() > 0 ? op.inputs[0].name.c_str() : "A",
                op.inputs.size() > 1 ? op.inputs[1].name.c_str() : "B", dtype == DType::kF64 ? -53 : -24);
  return SumTolerance{atol, note};
}

}  // namespace opscope
