#include "opscope/dtype.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>

namespace opscope {

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kF64: case DType::kI64: return 8;
    case DType::kF32: case DType::kI32: return 4;
    case DType::kF16: case DType::kBF16: case DType::kI16: return 2;
    case DType::kI8: case DType::kU8: case DType::kBool: return 1;
  }
  return 0;
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kF64: return "float64";
    case DType::kF32: return "float32";
    case DType::kF16: return "float16";
    case DType::kBF16: return "bfloat16";
    case DType::kI64: return "int64";
    case DType::kI32: return "int32";
    case DType::kI16: return "int16";
    case DType::kI8: return "int8";
    case DType::kU8: return "uint8";
    case DType::kBool: return "bool";
  }
  return "?";
}

StatusOr<DType> ParseDType(std::string_view name) {
  std::string n(name);
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  struct Alias { const char* name; DType t; };
  static constexpr Alias kAliases[] = {
      {"float64", DType::kF64}, {"f64", DType::kF64}, {"fp64", DType::kF64}, {"double", DType::kF64},
      {"float32", DType::kF32}, {"f32", DType::kF32}, {"fp32", DType::kF32}, {"float", DType::kF32},
      {"float16", DType::kF16}, {"f16", DType::kF16}, {"fp16", DType::kF16}, {"half", DType::kF16},
      {"bfloat16", DType::kBF16}, {"bf16", DType::kBF16},
      {"int64", DType::kI64}, {"i64", DType::kI64}, {"int32", DType::kI32}, {"i32", DType::kI32},
      {"int16", DType::kI16}, {"i16", DType::kI16}, {"int8", DType::kI8}, {"i8", DType::kI8},
      {"uint8", DType::kU8}, {"u8", DType::kU8}, {"bool", DType::kBool},
  };
  for (const auto& a : kAliases) {
    if (n == a.name) return a.t;
  }
  return InvalidArgumentError("unknown dtype '" + std::string(name) +
                              "': expected one of float64 float32 float16 bfloat16 int64 int32 "
                              "int16 int8 uint8 bool");
}

bool IsFloat(DType t) {
  return t == DType::kF64 || t == DType::kF32 || t == DType::kF16 || t == DType::kBF16;
}
bool IsInteger(DType t) {
  return t == DType::kI64 || t == DType::kI32 || t == DType::kI16 || t == DType::kI8 || t == DType::kU8;
}
bool IsSigned(DType t) { return IsFloat(t) || (IsInteger(t) && t != DType::kU8); }

std::vector<DType> FloatDTypes() { return {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}; }
std::vector<DType> IntegerDTypes() { return {DType::kI64, DType::kI32, DType::kI16, DType::kI8, DType::kU8}; }
std::vector<DType> NumericDTypes() {
  auto v = FloatDTypes();
  for (DType t : IntegerDTypes()) v.push_back(t);
  return v;
}
std::vector<DType> AllDTypes() { return std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes)); }

// float32 -> binary16, round to nearest, ties to even, like numpy's npy_float_to_half.
uint16_t Half::FromFloat(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) {  // inf or nan
    if (mant == 0) return static_cast<uint16_t>(sign | 0x7c00u);
    // Keep the top mantissa bits so NaN payloads survive where they fit; stay a NaN.
    uint16_t m = static_cast<uint16_t>(mant >> 13);
    return static_cast<uint16_t>(sign | 0x7c00u | (m ? m : 0x200u));
  }
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {
    // Subnormal half (or zero). Shift the full significand into place with rounding.
    if (e < -10) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    uint32_t m = mant | 0x800000u;
    int shift = 14 - e;  // 24-bit significand -> (10 + e)-bit subnormal field
    uint32_t half_m = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_m & 1u))) half_m++;
    return static_cast<uint16_t>(sign | half_m);  // a carry into the exponent is correct
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) half++;  // may carry into inf: correct
  return static_cast<uint16_t>(half);
}

float Half::ToFloat(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do { e++; mant <<= 1; } while ((mant & 0x400u) == 0);
      out = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(out);
}

uint16_t BFloat16::FromFloat(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu)) {
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN, sign kept
  }
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

float BFloat16::ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

}  // namespace opscope
