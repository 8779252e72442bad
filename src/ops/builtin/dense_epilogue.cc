#include "ops/builtin/dense_epilogue.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "ops/builtin/ew_unary.h"
#include "ops/builtin/ew_vecmath.h"

namespace opscope::dense {

StatusOr<Epilogue> Epilogue::From(std::string_view op, const Attrs& a) {
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

Status CheckResidual(std::string_view op, DType z_dtype, const Shape& z_shape, DType y_dtype, const Shape& y_shape) {
  if (z_dtype == y_dtype && z_shape == y_shape) return Status::Ok();
  return InvalidArgumentError(std::string(op) + ": input Z is " + DTypeName(z_dtype) + z_shape.ToString() +
                              "; expected the output's " + DTypeName(y_dtype) + y_shape.ToString() +
                              " (Z is added element for element)");
}

namespace {

// The activation alone over p[0, n), one loop per kind so each vectorises.
template <typename C>
void Activate(const Epilogue& e, C* p, int64_t n) {
  switch (e.act) {
    case Act::kNone: return;
    case Act::kRelu:
      for (int64_t i = 0; i < n; ++i) p[i] = std::max(p[i], C(0));
      return;
    case Act::kClip: {
      const C lo = Epilogue::Bound<C>(e.lo), hi = Epilogue::Bound<C>(e.hi);
      for (int64_t i = 0; i < n; ++i) p[i] = std::min(std::max(p[i], lo), hi);
      return;
    }
    case Act::kLeakyRelu: {
      const C a = static_cast<C>(e.alpha);
      for (int64_t i = 0; i < n; ++i) p[i] = p[i] < C(0) ? a * p[i] : p[i];
      return;
    }
    default: break;
  }
  if constexpr (std::is_same_v<C, float>) {
    if (const ew::VecMath* vm = ew::Avx2VecMath()) {
      ew::UnaryParams params;
      params.tanh_approximation = e.act == Act::kGeluTanh;
      const ew::SpanFn fn = e.act == Act::kSigmoid ? vm->sigmoid : e.act == Act::kTanh ? vm->tanh : vm->gelu;
      fn(p, p, n, params);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) p[i] = e.Apply<C>(p[i]);
}

template <typename C>
void AddResidual(const Epilogue& e, C* p, int64_t n) {
  if (e.residual == nullptr) return;
  const C* z = static_cast<const C*>(e.residual) + (p - static_cast<const C*>(e.residual_out));
  for (int64_t i = 0; i < n; ++i) p[i] += z[i];
}

template <typename C>
void RunScalarBias(const Epilogue& e, C* p, int64_t n, C bias) {
  if (bias != C(0)) {
    for (int64_t i = 0; i < n; ++i) p[i] += bias;
  }
  AddResidual(e, p, n);
  Activate(e, p, n);
}

template <typename C>
void RunVectorBias(const Epilogue& e, C* p, int64_t n, const C* bias) {
  if (bias != nullptr) {
    for (int64_t i = 0; i < n; ++i) p[i] += bias[i];
  }
  AddResidual(e, p, n);
  Activate(e, p, n);
}

}  // namespace

void Epilogue::Run(float* p, int64_t n, float bias) const { RunScalarBias(*this, p, n, bias); }
void Epilogue::Run(double* p, int64_t n, double bias) const { RunScalarBias(*this, p, n, bias); }
void Epilogue::Run(float* p, int64_t n, const float* bias) const { RunVectorBias(*this, p, n, bias); }
void Epilogue::Run(double* p, int64_t n, const double* bias) const { RunVectorBias(*this, p, n, bias); }

}  // namespace opscope::dense
