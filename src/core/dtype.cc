#include "opscope/dtype.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>

#include "core/text_format.h"

namespace opscope {

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kF64: case DType::kI64: case DType::kU64: return 8;
    case DType::kF32: case DType::kI32: case DType::kU32: return 4;
    case DType::kF16: case DType::kBF16: case DType::kI16: case DType::kU16: return 2;
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
    case DType::kU16: return "uint16";
    case DType::kU32: return "uint32";
    case DType::kU64: return "uint64";
    case DType::kBool: return "bool";
  }
  return "?";
}

StatusOr<DType> ParseDType(std::string_view name) {
  const std::string n = AsciiLower(name);
  struct Alias { const char* name; DType t; };
  static constexpr Alias kAliases[] = {
      {"float64", DType::kF64}, {"f64", DType::kF64}, {"fp64", DType::kF64}, {"double", DType::kF64},
      {"float32", DType::kF32}, {"f32", DType::kF32}, {"fp32", DType::kF32}, {"float", DType::kF32},
      {"float16", DType::kF16}, {"f16", DType::kF16}, {"fp16", DType::kF16}, {"half", DType::kF16},
      {"bfloat16", DType::kBF16}, {"bf16", DType::kBF16},
      {"int64", DType::kI64}, {"i64", DType::kI64}, {"int32", DType::kI32}, {"i32", DType::kI32},
      {"int16", DType::kI16}, {"i16", DType::kI16}, {"int8", DType::kI8}, {"i8", DType::kI8},
      {"uint8", DType::kU8}, {"u8", DType::kU8}, {"uint16", DType::kU16}, {"u16", DType::kU16},
      {"uint32", DType::kU32}, {"u32", DType::kU32}, {"uint64", DType::kU64}, {"u64", DType::kU64},
      {"bool", DType::kBool},
  };
  for (const auto& a : kAliases) {
    if (n == a.name) return a.t;
  }
  return InvalidArgumentError("unknown dtype '" + std::string(name) +
                              "': expected one of float64 float32 float16 bfloat16 int64 int32 "
                              "int16 int8 uint64 uint32 uint16 uint8 bool");
}

bool IsFloat(DType t) {
  return t == DType::kF64 || t == DType::kF32 || t == DType::kF16 || t == DType::kBF16;
}
bool IsInteger(DType t) {
  switch (t) {
    case DType::kI64: case DType::kI32: case DType::kI16: case DType::kI8:
    case DType::kU64: case DType::kU32: case DType::kU16: case DType::kU8: return true;
    default: return false;
  }
}
bool IsSigned(DType t) {
  return IsFloat(t) || t == DType::kI64 || t == DType::kI32 || t == DType::kI16 || t == DType::kI8;
}

std::vector<DType> FloatDTypes() { return {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}; }
std::vector<DType> IntegerDTypes() {
  return {DType::kI64, DType::kI32, DType::kI16, DType::kI8, DType::kU64, DType::kU32, DType::kU16, DType::kU8};
}
std::vector<DType> NumericDTypes() {
  auto v = FloatDTypes();
  for (DType t : IntegerDTypes()) v.push_back(t);
  return v;
}
std::vector<DType> AllDTypes() { return std::vector<DType>(std::begin(kAllDTypes), std::end(kAllDTypes)); }

namespace {

// Rounds a significand that is `shift` bits too wide to nearest, ties to even.
// A carry out of the field lands in the exponent, which is the right answer
// (subnormal -> smallest normal, largest finite -> inf).
template <typename U>
uint32_t RoundShiftRightEven(U sig, int shift) {
  U kept = sig >> shift;
  U rem = sig & ((U{1} << shift) - 1);
  U halfway = U{1} << (shift - 1);
  if (rem > halfway || (rem == halfway && (kept & 1u))) kept++;
  return static_cast<uint32_t>(kept);
}

// numpy keeps the top payload bits of a NaN and does not set the quiet bit;
// when those bits are all zero it uses payload 1 so the result stays a NaN.
uint16_t HalfNaN(uint32_t sign, uint32_t top_payload) {
  return static_cast<uint16_t>(sign | 0x7c00u | (top_payload ? top_payload : 1u));
}

}  // namespace

// float32 -> binary16 with numpy's npy_floatbits_to_halfbits semantics.
uint16_t Half::FromFloat(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return mant ? HalfNaN(sign, mant >> 13) : static_cast<uint16_t>(sign | 0x7c00u);
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    return static_cast<uint16_t>(sign | RoundShiftRightEven(mant | 0x800000u, 14 - e));
  }
  return static_cast<uint16_t>(sign | ((static_cast<uint32_t>(e) << 10) +
                                       RoundShiftRightEven(mant, 13)));
}

// float64 -> binary16 in one rounding, as numpy's npy_doublebits_to_halfbits.
uint16_t Half::FromDouble(double d) {
  uint64_t x = std::bit_cast<uint64_t>(d);
  uint32_t sign = static_cast<uint32_t>(x >> 48) & 0x8000u;
  uint32_t exp = static_cast<uint32_t>(x >> 52) & 0x7ffu;
  uint64_t mant = x & 0xfffffffffffffull;
  if (exp == 0x7ff) {
    return mant ? HalfNaN(sign, static_cast<uint32_t>(mant >> 42)) : static_cast<uint16_t>(sign | 0x7c00u);
  }
  int32_t e = static_cast<int32_t>(exp) - 1023 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    return static_cast<uint16_t>(sign | RoundShiftRightEven(mant | (1ull << 52), 43 - e));
  }
  return static_cast<uint16_t>(sign | ((static_cast<uint32_t>(e) << 10) +
                                       RoundShiftRightEven(mant, 42)));
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
