#include "opscope/dtype.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "opscope/tensor.h"

namespace opscope {
namespace {

// binary16 value from its fields, with ldexp only: independent of Half::ToFloat.
double HalfValue(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double mag = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
  if (exp == 0x1f) mag = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  return sign ? -mag : mag;
}

TEST(Half, ToFloatIsExactForAllPatterns) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = Half::ToFloat(static_cast<uint16_t>(h));
    double expect = HalfValue(static_cast<uint16_t>(h));
    if (std::isnan(expect)) {
      uint32_t bits = std::bit_cast<uint32_t>(f);
      ASSERT_TRUE(std::isnan(f)) << h;
      ASSERT_EQ(bits & 0x80000000u, (h & 0x8000u) << 16) << h;
      ASSERT_EQ((bits >> 13) & 0x3ffu, h & 0x3ffu) << "payload kept, as numpy does: " << h;
    } else {
      ASSERT_EQ(static_cast<double>(f), expect) << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000u) != 0) << h;
      // Every half is exact in float and double, so both ways back are the identity.
      ASSERT_EQ(Half::FromFloat(f), h) << h;
      ASSERT_EQ(Half::FromDouble(expect), h) << h;
    }
  }
}

TEST(Half, RoundsTiesToEvenAtEveryMidpoint) {
  // Between each pair of neighbouring finite halves, the exact midpoint goes
  // to the even one, and one float/double ulp either side goes to the nearer.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    double lo = HalfValue(static_cast<uint16_t>(h)), hi = HalfValue(static_cast<uint16_t>(h + 1));
    double mid = (lo + hi) / 2;
    uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    float fmid = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(fmid), mid);
    ASSERT_EQ(Half::FromFloat(fmid), even) << h;
    ASSERT_EQ(Half::FromFloat(std::nextafter(fmid, 0.0f)), h) << h;
    ASSERT_EQ(Half::FromFloat(std::nextafter(fmid, 1e9f)), h + 1) << h;
    ASSERT_EQ(Half::FromDouble(mid), even) << h;
    ASSERT_EQ(Half::FromDouble(std::nextafter(mid, 0.0)), h) << h;
    ASSERT_EQ(Half::FromDouble(std::nextafter(mid, 1e9)), h + 1) << h;
    ASSERT_EQ(Half::FromDouble(-mid), even | 0x8000u) << h;
  }
  // Overflow: 65520 is the midpoint between 65504 (max) and the next step: ties to inf.
  EXPECT_EQ(Half::FromFloat(65519.996f), 0x7bffu);
  EXPECT_EQ(Half::FromFloat(65520.0f), 0x7c00u);
  EXPECT_EQ(Half::FromDouble(65519.99999), 0x7bffu);
  EXPECT_EQ(Half::FromDouble(-1e300), 0xfc00u);
  // Below half the smallest subnormal goes to zero; exactly half ties to zero.
  EXPECT_EQ(Half::FromDouble(std::ldexp(1.0, -25)), 0u);
  EXPECT_EQ(Half::FromDouble(std::nextafter(std::ldexp(1.0, -25), 1.0)), 1u);
  EXPECT_EQ(Half::FromFloat(std::numeric_limits<float>::denorm_min()), 0u);
}

TEST(Half, NaNFollowsNumpy) {
  // numpy keeps the top payload bits and never sets the quiet bit itself.
  EXPECT_EQ(Half::FromFloat(std::bit_cast<float>(0x7f800001u)), 0x7c01u);
  EXPECT_EQ(Half::FromFloat(std::bit_cast<float>(0x7fc00000u)), 0x7e00u);
  EXPECT_EQ(Half::FromFloat(std::bit_cast<float>(0xff802000u)), 0xfc01u);
  EXPECT_EQ(Half::FromDouble(std::bit_cast<double>(0x7ff0000000000001ull)), 0x7c01u);
  EXPECT_EQ(Half::FromDouble(std::bit_cast<double>(0x7ff8000000000000ull)), 0x7e00u);
}

TEST(Half, DoubleRoundsOnceNotThroughFloat) {
  // 1 + 2^-11 + 2^-40: float rounds it onto the half tie 1 + 2^-11 (-> 1.0),
  // but the double is above the tie, so the right half is 1 + 2^-10.
  double d = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(Half::FromFloat(static_cast<float>(d)), 0x3c00u);
  EXPECT_EQ(Half::FromDouble(d), 0x3c01u);
  Tensor t = *Tensor::Empty(DType::kF64, Shape({1}));
  t.data<double>()[0] = d;
  Tensor h = *t.CastTo(DType::kF16);
  EXPECT_EQ(h.data<Half>()[0].bits, 0x3c01u);
}

uint16_t BFloat16Reference(uint32_t x) {
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint64_t wide = x;
  uint64_t rounded = (wide + 0x7fffu + ((wide >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>(rounded);
}

TEST(BFloat16, MatchesIntegerRoundToNearestEven) {
  // A stride through all 2^32 patterns, plus every tie neighbourhood of every exponent.
  for (uint64_t x = 0; x < (uint64_t{1} << 32); x += 4099) {
    ASSERT_EQ(BFloat16::FromFloat(std::bit_cast<float>(static_cast<uint32_t>(x))),
              BFloat16Reference(static_cast<uint32_t>(x)))
        << x;
  }
  for (uint32_t hi = 0; hi < 0x10000; ++hi) {
    for (uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      uint32_t x = (hi << 16) | lo;
      ASSERT_EQ(BFloat16::FromFloat(std::bit_cast<float>(x)), BFloat16Reference(x)) << x;
    }
    ASSERT_EQ(std::bit_cast<uint32_t>(BFloat16::ToFloat(static_cast<uint16_t>(hi))), hi << 16);
  }
}

TEST(CastTo, SaturatesFloatToIntAndSendsNaNToZero) {
  Tensor f = *Tensor::Empty(DType::kF32, Shape({6}));
  float vals[6] = {1e10f, -1e10f, std::nanf(""), 3.7f, -3.7f, 127.9f};
  for (int i = 0; i < 6; ++i) f.data<float>()[i] = vals[i];
  Tensor i8 = *f.CastTo(DType::kI8);
  int8_t expect[6] = {127, -128, 0, 3, -3, 127};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(i8.data<int8_t>()[i], expect[i]) << i;
  Tensor u8 = *f.CastTo(DType::kU8);
  EXPECT_EQ(u8.data<uint8_t>()[1], 0);
  Tensor i64 = *f.CastTo(DType::kI64);
  EXPECT_EQ(i64.data<int64_t>()[0], 10000000000);
}

TEST(CastTo, IntegersRoundOnceAndSameTypeIsExact) {
  Tensor t = *Tensor::Empty(DType::kI64, Shape({2}));
  // 2^60 + 2^36 + 1: through double it lands on a float tie and goes down to
  // 2^60; rounded once it is above the tie and goes up to 2^60 + 2^37.
  t.data<int64_t>()[0] = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  t.data<int64_t>()[1] = (int64_t{1} << 62) + 1;
  Tensor f = *t.CastTo(DType::kF32);
  EXPECT_EQ(static_cast<double>(f.data<float>()[0]), std::ldexp(1.0, 60) + std::ldexp(1.0, 37));
  Tensor same = *t.CastTo(DType::kI64);
  EXPECT_EQ(same.data<int64_t>()[1], (int64_t{1} << 62) + 1);
  Tensor narrow = *t.CastTo(DType::kI16);
  EXPECT_EQ(narrow.data<int16_t>()[1], 1);  // int -> int wraps, like numpy's astype
}

TEST(CastTo, HalfAndBFloat16GoThroughFloatExactly) {
  Tensor h = *Tensor::Empty(DType::kF16, Shape({1}));
  h.data<Half>()[0] = Half(-2.5f);
  EXPECT_EQ(h.CastTo(DType::kBF16)->FlatGetAsDouble(0), -2.5);
  EXPECT_EQ(h.CastTo(DType::kI32)->data<int32_t>()[0], -2);
  EXPECT_TRUE(h.CastTo(DType::kBool)->data<bool>()[0]);
}

// The span conversions (F16C where the CPU has it) against Half's own scalar
// code, bit for bit: every 4093rd float pattern (every residue of the low 13 bits, so
// every rounding case), the signalling and quiet NaNs F16C alone would quiet,
// at lengths around the eight-lane blocks; and every one of the 65536 halves back.
TEST(HalfSpans, AgreeBitForBitWithTheScalarConversions) {
  std::vector<float> x;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 4093) x.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  for (uint32_t nan : {0x7f800001u, 0x7fa00000u, 0xffc00001u, 0x7fc02000u, 0xff800400u}) x.push_back(std::bit_cast<float>(nan));
  std::vector<Half> y(x.size());
  HalvesFromFloats(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(y[i].bits, Half::FromFloat(x[i])) << "float bits 0x" << std::hex << std::bit_cast<uint32_t>(x[i]);
  }
  for (int64_t n : {0, 1, 7, 8, 9, 17}) {  // nothing past n is written
    std::vector<Half> out(n + 8, Half::FromBits(0x1234));
    HalvesFromFloats(x.data() + 1000, out.data(), n);
    for (int64_t i = n; i < n + 8; ++i) ASSERT_EQ(out[i].bits, 0x1234) << "n=" << n;
  }
  std::vector<Half> h(65536 + 3);
  for (size_t i = 0; i < h.size(); ++i) h[i].bits = static_cast<uint16_t>(i);
  std::vector<float> back(h.size());
  FloatsFromHalves(h.data(), back.data(), static_cast<int64_t>(h.size()));
  for (size_t i = 0; i < h.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(Half::ToFloat(h[i].bits)))
        << "half bits 0x" << std::hex << h[i].bits;
  }
}

}  // namespace
}  // namespace opscope
