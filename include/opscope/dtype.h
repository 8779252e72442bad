// File: opscope/dtype.h
// The element types opscope handles, and the two 16-bit float types as plain
// structs with round-to-nearest-even conversions (bit-identical to numpy's
// float16 and to the usual bfloat16 rounding).
//
//   DType t = DType::kF16;
//   Half h = Half(1.5f);  float f = float(h);
//   OPSCOPE_ASSIGN_OR_RETURN(DType d, ParseDType("float32"));
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opscope/status.h"

namespace opscope {

// The unsigned 16/32/64-bit types come last so the values a plugin built
// against an older header uses keep their meaning.
enum class DType : uint8_t { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool, kU16, kU32, kU64 };

inline constexpr DType kAllDTypes[] = {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64,
                                       DType::kI32, DType::kI16, DType::kI8,  DType::kU8,   DType::kBool,
                                       DType::kU16, DType::kU32, DType::kU64};

size_t DTypeSize(DType t);
// numpy's names: "float32", "bfloat16", "int64", "bool", ...
const char* DTypeName(DType t);
// Accepts numpy names and the short forms f32, fp32, f16, half, bf16, i64, u8, ...
StatusOr<DType> ParseDType(std::string_view name);
bool IsFloat(DType t);    // f64 f32 f16 bf16
bool IsInteger(DType t);  // i64 i32 i16 i8 u64 u32 u16 u8 (not bool)
bool IsSigned(DType t);

// Convenient type sets for op schemas.
std::vector<DType> FloatDTypes();
std::vector<DType> IntegerDTypes();
std::vector<DType> NumericDTypes();  // floats and integers
std::vector<DType> AllDTypes();

// IEEE 754 binary16.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float f) : bits(FromFloat(f)) {}
  explicit operator float() const { return ToFloat(bits); }
  static uint16_t FromFloat(float f);  // round to nearest even; overflow -> inf
  // Rounds once, straight from double: going through float would round twice
  // and differ from numpy's float64.astype(float16) near ties.
  static uint16_t FromDouble(double d);
  static float ToFloat(uint16_t h);
  static Half FromBits(uint16_t b) { Half h; h.bits = b; return h; }
};

// Half::FromFloat / Half::ToFloat over n elements, bit for bit the same,
// with the CPU's F16C conversions where it has them.
void HalvesFromFloats(const float* x, Half* y, int64_t n);
void FloatsFromHalves(const Half* x, float* y, int64_t n);

// bfloat16: the top 16 bits of a float32.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f) : bits(FromFloat(f)) {}
  explicit operator float() const { return ToFloat(bits); }
  static uint16_t FromFloat(float f);  // round to nearest even; NaN stays quiet NaN
  static float ToFloat(uint16_t b);
  static BFloat16 FromBits(uint16_t b) { BFloat16 h; h.bits = b; return h; }
};

// Maps a C++ type to its DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<double> { static constexpr DType value = DType::kF64; };
template <> struct DTypeOf<float> { static constexpr DType value = DType::kF32; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::kF16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::kBF16; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kI64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kI32; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kI16; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kI8; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kU8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::kU16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::kU32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::kU64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };

// The type arithmetic is done in: float for the 16-bit floats, T otherwise.
template <typename T> struct ComputeTypeOf { using type = T; };
template <> struct ComputeTypeOf<Half> { using type = float; };
template <> struct ComputeTypeOf<BFloat16> { using type = float; };

// Loads any element as double / stores a double into any element type
// (integers truncate toward zero like a C cast, bool is != 0).
template <typename T> inline double ToDouble(T v) { return static_cast<double>(v); }
template <> inline double ToDouble(Half v) { return static_cast<float>(v); }
template <> inline double ToDouble(BFloat16 v) { return static_cast<float>(v); }
template <typename T> inline T FromDouble(double v) { return static_cast<T>(v); }
template <> inline Half FromDouble<Half>(double v) { return Half::FromBits(Half::FromDouble(v)); }
// Through float, as ml_dtypes and PyTorch convert float64 to bfloat16.
template <> inline BFloat16 FromDouble<BFloat16>(double v) { return BFloat16(static_cast<float>(v)); }
template <> inline bool FromDouble<bool>(double v) { return v != 0.0; }

// Calls fn.template operator()<T>() with T the C++ type of `dtype`, for the
// float dtypes (DispatchFloat) or the floats and integers (DispatchNumeric),
// and returns what it returns; any other dtype is Unimplemented, naming `what`
// and the dtype. A kernel's whole dtype switch, as one expression:
//
//   return DispatchFloat(x.dtype(), ctx.op_name(), [&]<typename T>() {
//     return MyNormRows<T>(ctx, x, ctx.out(0), eps);
//   });
template <typename Fn>
Status DispatchFloat(DType dtype, std::string_view what, Fn&& fn) {
  switch (dtype) {
    case DType::kF64: return fn.template operator()<double>();
    case DType::kF32: return fn.template operator()<float>();
    case DType::kF16: return fn.template operator()<Half>();
    case DType::kBF16: return fn.template operator()<BFloat16>();
    default:
      return UnimplementedError(std::string(what) + ": no kernel for dtype " + DTypeName(dtype) +
                                " (it takes the float types)");
  }
}

template <typename Fn>
Status DispatchNumeric(DType dtype, std::string_view what, Fn&& fn) {
  switch (dtype) {
    case DType::kI64: return fn.template operator()<int64_t>();
    case DType::kI32: return fn.template operator()<int32_t>();
    case DType::kI16: return fn.template operator()<int16_t>();
    case DType::kI8: return fn.template operator()<int8_t>();
    case DType::kU8: return fn.template operator()<uint8_t>();
    case DType::kU16: return fn.template operator()<uint16_t>();
    case DType::kU32: return fn.template operator()<uint32_t>();
    case DType::kU64: return fn.template operator()<uint64_t>();
    case DType::kBool:
      return UnimplementedError(std::string(what) + ": no kernel for dtype bool (it takes the numeric types)");
    default: return DispatchFloat(dtype, what, std::forward<Fn>(fn));
  }
}

}  // namespace opscope

// Runs BODY with `scalar_t` bound to the C++ type of DTYPE. Unlisted dtypes
// fall to the `default` label: the caller puts its error after the macro.
#define OPSCOPE_DTYPE_CASE(D, T, ...) \
  case ::opscope::DType::D: {         \
    using scalar_t = T;               \
    __VA_ARGS__;                      \
    break;                            \
  }

#define OPSCOPE_SWITCH_FLOAT(dtype, ...)                              \
  switch (dtype) {                                                    \
    OPSCOPE_DTYPE_CASE(kF64, double, __VA_ARGS__)                     \
    OPSCOPE_DTYPE_CASE(kF32, float, __VA_ARGS__)                      \
    OPSCOPE_DTYPE_CASE(kF16, ::opscope::Half, __VA_ARGS__)            \
    OPSCOPE_DTYPE_CASE(kBF16, ::opscope::BFloat16, __VA_ARGS__)       \
    default: break;                                                   \
  }

#define OPSCOPE_SWITCH_INTEGER(dtype, ...)                            \
  switch (dtype) {                                                    \
    OPSCOPE_DTYPE_CASE(kI64, int64_t, __VA_ARGS__)                    \
    OPSCOPE_DTYPE_CASE(kI32, int32_t, __VA_ARGS__)                    \
    OPSCOPE_DTYPE_CASE(kI16, int16_t, __VA_ARGS__)                    \
    OPSCOPE_DTYPE_CASE(kI8, int8_t, __VA_ARGS__)                      \
    OPSCOPE_DTYPE_CASE(kU8, uint8_t, __VA_ARGS__)                     \
    OPSCOPE_DTYPE_CASE(kU16, uint16_t, __VA_ARGS__)                   \
    OPSCOPE_DTYPE_CASE(kU32, uint32_t, __VA_ARGS__)                   \
    OPSCOPE_DTYPE_CASE(kU64, uint64_t, __VA_ARGS__)                   \
    default: break;                                                   \
  }

#define OPSCOPE_SWITCH_NUMERIC(dtype, ...)                            \
  switch (dtype) {                                                    \
    OPSCOPE_DTYPE_CASE(kF64, double, __VA_ARGS__)                     \
    OPSCOPE_DTYPE_CASE(kF32, float, __VA_ARGS__)                      \
    OPSCOPE_DTYPE_CASE(kF16, ::opscope::Half, __VA_ARGS__)            \
    OPSCOPE_DTYPE_CASE(kBF16, ::opscope::BFloat16, __VA_ARGS__)       \
    OPSCOPE_DTYPE_CASE(kI64, int64_t, __VA_ARGS__)                    \
    OPSCOPE_DTYPE_CASE(kI32, int32_t, __VA_ARGS__)                    \
    OPSCOPE_DTYPE_CASE(kI16, int16_t, __VA_ARGS__)                    \
    OPSCOPE_DTYPE_CASE(kI8, int8_t, __VA_ARGS__)                      \
    OPSCOPE_DTYPE_CASE(kU8, uint8_t, __VA_ARGS__)                     \
    OPSCOPE_DTYPE_CASE(kU16, uint16_t, __VA_ARGS__)                   \
    OPSCOPE_DTYPE_CASE(kU32, uint32_t, __VA_ARGS__)                   \
    OPSCOPE_DTYPE_CASE(kU64, uint64_t, __VA_ARGS__)                   \
    default: break;                                                   \
  }

#define OPSCOPE_SWITCH_ALL(dtype, ...)                                \
  switch (dtype) {                                                    \
    OPSCOPE_DTYPE_CASE(kF64, double, __VA_ARGS__)                     \
    OPSCOPE_DTYPE_CASE(kF32, float, __VA_ARGS__)                      \
    OPSCOPE_DTYPE_CASE(kF16, ::opscope::Half, __VA_ARGS__)            \
    OPSCOPE_DTYPE_CASE(kBF16, ::opscope::BFloat16, __VA_ARGS__)       \
    OPSCOPE_DTYPE_CASE(kI64, int64_t, __VA_ARGS__)                    \
    OPSCOPE_DTYPE_CASE(kI32, int32_t, __VA_ARGS__)                    \
    OPSCOPE_DTYPE_CASE(kI16, int16_t, __VA_ARGS__)                    \
    OPSCOPE_DTYPE_CASE(kI8, int8_t, __VA_ARGS__)                      \
    OPSCOPE_DTYPE_CASE(kU8, uint8_t, __VA_ARGS__)                     \
    OPSCOPE_DTYPE_CASE(kU16, uint16_t, __VA_ARGS__)                   \
    OPSCOPE_DTYPE_CASE(kU32, uint32_t, __VA_ARGS__)                   \
    OPSCOPE_DTYPE_CASE(kU64, uint64_t, __VA_ARGS__)                   \
    OPSCOPE_DTYPE_CASE(kBool, bool, __VA_ARGS__)                      \
  }
