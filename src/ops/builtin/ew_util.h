// Shared machinery of the elementwise built-in ops (ew_*.cc): dtype sets,
// broadcast shape inference and cost models, numpy-compatible element
// conversions, wrap-around integer arithmetic, and the map loops every
// elementwise kernel runs on.
//
// The loops take a functor over compute types (float for f16/bf16) and pick a
// path per call: equal contiguous shapes and scalar operands get plain
// pointer loops the compiler vectorises; everything else goes through a
// broadcast plan whose dims are collapsed so that e.g. [N,C,H,W] + [C,1,1]
// runs as rows of H*W elements with a stride-0 operand.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ops/kernel_util.h"

namespace opscope::ew {

// ---- dtype sets (ONNX type constraints restricted to our DType) ---------------------

std::vector<DType> Floats();          // f64 f32 f16 bf16
std::vector<DType> Numeric();         // floats and all integers, unsigned included
std::vector<DType> SignedNumeric();   // floats and i64 i32 i16 i8
std::vector<DType> FloatsAndInts();   // floats and i64 i32 (PRelu, Pow base)
std::vector<DType> All();             // numeric and bool

// Block sizes offered as the "block" tunable; the first is the default.
inline const std::vector<int64_t>& BlockChoices() {
  static const std::vector<int64_t> kBlocks = {65536, 16384, 262144, 1048576};
  return kBlocks;
}

// "relu_cpu" for "Relu": the name a kernel's launches are recorded under.
std::string KernelName(std::string_view op);

// ---- shape inference and cost -------------------------------------------------------

// Output 0 = numpy broadcast of every present input; dtype `out` (or input 0's
// when `out_same_as_input0`). The error names the op, the input and both shapes.
Status InferBroadcast(InferContext& c, bool out_same_as_input0, DType out = DType::kBool);
inline Status InferBroadcastSame(InferContext& c) { return InferBroadcast(c, true); }
inline Status InferBroadcastBool(InferContext& c) { return InferBroadcast(c, false, DType::kBool); }

// Every present input read once, every output written once, `flops` per output element.
CostFn ElementwiseCost(double flops_per_element);

// ---- element conversions ----------------------------------------------------------------

template <typename T> inline constexpr bool kIsFloat16 = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T> inline constexpr bool kIsFloatLike = std::is_floating_point_v<T> || kIsFloat16<T>;

// double -> float rounded to odd: a later round-to-nearest-even to a narrower
// format (f16, bf16) then rounds once, as if straight from double.
float RoundToOddFloat(double d);

// float -> integer as numpy's astype does on x86: NaN and out-of-range give
// the minimum of int64 (for i64, u32 and u64) or int32 (for every narrower
// type), whose low bits are the result; uint64 takes [2^63, 2^64) as it is
// and gives 0 from 2^64 up (the compiler's unsigned conversion on x86-64).
template <typename To>
inline To FloatToInt(double v) {
  if constexpr (std::is_same_v<To, int64_t> || std::is_same_v<To, uint32_t> || std::is_same_v<To, uint64_t>) {
    if constexpr (std::is_same_v<To, uint64_t>) {
      if (v >= 9223372036854775808.0) return v < 18446744073709551616.0 ? static_cast<uint64_t>(v) : 0;
    }
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
      return static_cast<To>(std::numeric_limits<int64_t>::min());
    }
    return static_cast<To>(static_cast<int64_t>(v));  // modular (C++20)
  } else {
    int32_t w = (v >= -2147483648.0 && v < 2147483648.0) ? static_cast<int32_t>(v)
                                                          : std::numeric_limits<int32_t>::min();
    return static_cast<To>(w);  // modular for narrower types (C++20)
  }
}

// Any element type (or compute type) to any element type, numpy's way.
template <typename To, typename From>
inline To Convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (kIsFloat16<From>) {
    return Convert<To>(static_cast<float>(v));  // f16/bf16 -> float is exact
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<From, float>) {
      return To(v);
    } else if constexpr (std::is_same_v<From, bool>) {
      return To(v ? 1.0f : 0.0f);
    } else {
      return To(RoundToOddFloat(static_cast<double>(v)));
    }
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return FloatToInt<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);
  }
}

// Reads an element as compute type C (f16/bf16 go through float).
template <typename C, typename T>
inline C Load(T v) {
  if constexpr (kIsFloat16<T>) {
    return static_cast<C>(static_cast<float>(v));
  } else {
    return static_cast<C>(v);
  }
}

// The compute type of element type T for an op: float math for f16/bf16;
// integers keep their type when the op is integer-exact, else use double.
template <typename T, bool kIntegerMath>
using ComputeT = std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && !kIntegerMath, double,
                                    typename ComputeTypeOf<T>::type>;

// ---- integer arithmetic with numpy's wrap-around (no signed-overflow UB) ----------

template <typename T>
using WideUnsigned = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <typename T> inline T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(static_cast<WideUnsigned<T>>(a) + static_cast<WideUnsigned<T>>(b));
  } else {
    return a + b;
  }
}
template <typename T> inline T WrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(static_cast<WideUnsigned<T>>(a) - static_cast<WideUnsigned<T>>(b));
  } else {
    return a - b;
  }
}
template <typename T> inline T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return static_cast<T>(static_cast<WideUnsigned<T>>(a) * static_cast<WideUnsigned<T>>(b));
  } else {
    return a * b;
  }
}
template <typename T> inline T WrapNeg(T a) { return WrapSub(T(0), a); }
// Integer division truncates toward zero (C, ONNX); x/0 gives 0 (numpy's
// integer result, without its warning) and MIN/-1 wraps to MIN.
template <typename T> inline T SafeDiv(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return WrapNeg(a);
    }
    return static_cast<T>(a / b);
  } else {
    return a / b;
  }
}

// ---- reference helpers (double in, double out) -----------------------------------------

// Row-major values of `t` broadcast to `out` (plain index arithmetic).
std::vector<double> BroadcastToDoubles(const Tensor& t, const Shape& out);
// Writes reference results: float outputs (float64 in a reference run) take
// the values as they are; integers wrap modulo 2^bits like numpy; bool is != 0.
// Integer results are rounded toward zero first; NaN/inf give 0.
void StoreReference(Tensor& out, const std::vector<double>& v);

// ---- the map loops --------------------------------------------------------------------

// A broadcast operand layout with mergeable dims collapsed: `shape` is the
// collapsed output shape, strides[k] the element strides of operand k.
struct BroadcastPlan {
  Shape shape;
  std::vector<std::vector<int64_t>> strides;
};
BroadcastPlan MakeBroadcastPlan(const Shape& out, const std::vector<const Tensor*>& operands);

// Applies f to n elements: o[i] = f(a[i*sa], b[i*sb]). Unit and zero strides
// get their own loops so the common cases vectorise.
template <typename CA, typename CB, typename A, typename B, typename O, typename F>
inline void BinaryInner(const A* __restrict a, int64_t sa, const B* __restrict b, int64_t sb, O* __restrict o,
                        int64_t n, const F& f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = Convert<O>(f(Load<CA>(a[i]), Load<CB>(b[i])));
  } else if (sa == 1 && sb == 0) {
    const CB bv = Load<CB>(*b);
    for (int64_t i = 0; i < n; ++i) o[i] = Convert<O>(f(Load<CA>(a[i]), bv));
  } else if (sa == 0 && sb == 1) {
    const CA av = Load<CA>(*a);
    for (int64_t i = 0; i < n; ++i) o[i] = Convert<O>(f(av, Load<CB>(b[i])));
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = Convert<O>(f(Load<CA>(a[i * sa]), Load<CB>(b[i * sb])));
  }
}

// Runs body(row_shape_offsets..., begin_col, count, out_flat) over [begin, end)
// of a collapsed plan, row by row (the last dim is the contiguous inner loop).
template <int N, typename Body>
inline void ForEachRow(const BroadcastPlan& plan, int64_t begin, int64_t end, const Body& body) {
  const int r = plan.shape.rank();
  const int64_t last = r ? plan.shape[r - 1] : 1;
  std::vector<int64_t> rows_dims(plan.shape.dims().begin(), plan.shape.dims().end() - (r ? 1 : 0));
  Shape rows(rows_dims);
  std::vector<int64_t> row_strides[N];
  const std::vector<int64_t>* sp[N];
  for (int k = 0; k < N; ++k) {
    row_strides[k].assign(plan.strides[k].begin(), plan.strides[k].end() - (r ? 1 : 0));
    sp[k] = &row_strides[k];
  }
  int64_t row = begin / last, col = begin % last;
  kernels::StridedIter<N> it(rows, sp, row);
  int64_t i = begin;
  while (i < end) {
    int64_t count = std::min(last - col, end - i);
    int64_t off[N];
    for (int k = 0; k < N; ++k) off[k] = it.offset(k) + col * (r ? plan.strides[k][r - 1] : 0);
    body(off, count, i);
    i += count;
    col = 0;
    it.Next();
  }
}

// out = f(a, b) with numpy broadcasting; CA/CB are the compute types f takes.
template <typename A, typename B, typename O, typename CA, typename CB, typename F>
Status BinaryMap(KernelContext& ctx, std::string_view kernel, const Tensor& a, const Tensor& b, Tensor& out,
                 F f) {
  const int64_t n = out.numel();
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  O* po = out.data<O>();
  const bool a_full = a.shape() == out.shape() && a.is_contiguous();
  const bool b_full = b.shape() == out.shape() && b.is_contiguous();
  if (a_full && (b_full || b.numel() == 1)) {
    const int64_t sb = b_full ? 1 : 0;
    return ctx.ParallelFor(kernel, n, [&](int64_t s, int64_t e) {
      BinaryInner<CA, CB>(pa + s, 1, pb + s * sb, sb, po + s, e - s, f);
    });
  }
  if (b_full && a.numel() == 1) {
    return ctx.ParallelFor(kernel, n, [&](int64_t s, int64_t e) {
      BinaryInner<CA, CB>(pa, 0, pb + s, 1, po + s, e - s, f);
    });
  }
  BroadcastPlan plan = MakeBroadcastPlan(out.shape(), {&a, &b});
  const int r = plan.shape.rank();
  const int64_t sa = r ? plan.strides[0][r - 1] : 0, sb = r ? plan.strides[1][r - 1] : 0;
  return ctx.ParallelFor(kernel, n, [&](int64_t s, int64_t e) {
    ForEachRow<2>(plan, s, e, [&](const int64_t* off, int64_t count, int64_t o) {
      BinaryInner<CA, CB>(pa + off[0], sa, pb + off[1], sb, po + o, count, f);
    });
  });
}

// acc = f(acc, b) in place, b broadcast to acc's shape (the variadic ops' fold).
template <typename TAcc, typename TB, typename C, typename F>
Status AccumulateMap(KernelContext& ctx, std::string_view kernel, Tensor& acc, const Tensor& b, F f) {
  TAcc* pacc = acc.data<TAcc>();
  const TB* pb = b.data<TB>();
  BroadcastPlan plan = MakeBroadcastPlan(acc.shape(), {&b});
  const int r = plan.shape.rank();
  const int64_t sb = r ? plan.strides[0][r - 1] : 0;
  return ctx.ParallelFor(kernel, acc.numel(), [&](int64_t s, int64_t e) {
    ForEachRow<1>(plan, s, e, [&](const int64_t* off, int64_t count, int64_t o) {
      TAcc* out = pacc + o;
      const TB* in = pb + off[0];
      for (int64_t i = 0; i < count; ++i) out[i] = Convert<TAcc>(f(Load<C>(out[i]), Load<C>(in[i * sb])));
    });
  });
}

// out = f(x) elementwise (same shape); C is the compute type f takes.
template <typename I, typename O, typename C, typename F>
Status UnaryMap(KernelContext& ctx, std::string_view kernel, const Tensor& x_in, Tensor& out, F f) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, x_in.Contiguous());
  const I* __restrict px = x.data<I>();
  O* __restrict po = out.data<O>();
  return ctx.ParallelFor(kernel, out.numel(), [&](int64_t s, int64_t e) {
    // Copies on this block's stack: nothing the loop stores to can alias
    // them, so the op's parameters stay in registers and the loop vectorises
    // (read through the captures, LeakyRelu's alpha was reloaded per element).
    const F g = f;
    const I* __restrict in = px;
    O* __restrict o = po;
    for (int64_t i = s; i < e; ++i) o[i] = Convert<O>(g(Load<C>(in[i])));
  });
}

}  // namespace opscope::ew
