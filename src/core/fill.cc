// Seeded fills. The same seed gives the same bits on every machine: the
// generator is xoshiro256** seeded by splitmix64, normals use Marsaglia's polar
// method with an own log (libm's log may differ in the last bit between
// versions), and everything else is plain IEEE +, -, *, /, sqrt, which are
// exactly rounded. Fused multiply-add would change results, so it is off here.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "opscope/fill.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "core/text_format.h"

namespace opscope {
namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (uint64_t& w : s_) w = SplitMix64(seed);
  }
  uint64_t Next() {
    const uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }
  // [0, 1) with all 53 bits random.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Unbiased integer in [0, span] (span + 1 values; span may be 2^64 - 1).
  uint64_t Below(uint64_t span) {
    if (span == std::numeric_limits<uint64_t>::max()) return Next();
    const uint64_t n = span + 1;
    const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
    uint64_t x;
    do x = Next(); while (x >= limit);
    return x % n;
  }

 private:
  uint64_t s_[4];
};

// Natural log for x > 0, from +, *, / only: x = m * 2^e with m in
// [sqrt(1/2), sqrt(2)), log m = 2 atanh(s) with s = (m-1)/(m+1), |s| < 0.172.
double PortableLog(double x) {
  int e = 0;
  double m = std::frexp(x, &e);  // exact
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    e -= 1;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double p = 1.0 / 23.0;
  for (int k = 21; k >= 1; k -= 2) p = p * s2 + 1.0 / k;
  constexpr double kLn2 = 0.69314718055994530942;
  return static_cast<double>(e) * kLn2 + 2.0 * s * p;
}

// Standard normals in pairs (polar method), handed out one at a time.
class NormalSource {
 public:
  explicit NormalSource(Xoshiro256& g) : g_(g) {}
  double Next() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2.0 * g_.Uniform() - 1.0;
      v = 2.0 * g_.Uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * PortableLog(s) / s);
    spare_ = v * f;
    have_spare_ = true;
    return u * f;
  }

 private:
  Xoshiro256& g_;
  bool have_spare_ = false;
  double spare_ = 0.0;
};

template <typename T>
constexpr bool kIsPlainInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// An integer element from a double that is already integral (or +-inf / huge):
// saturates instead of the undefined out-of-range cast.
template <typename T>
T SaturateToInt(double v) {
  constexpr double kLow = static_cast<double>(std::numeric_limits<T>::min());
  constexpr double kHighExclusive = static_cast<double>(std::numeric_limits<T>::max() / 2 + 1) * 2.0;
  if (std::isnan(v)) return 0;
  if (v <= kLow) return std::numeric_limits<T>::min();
  if (v >= kHighExclusive) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// The next value of type T below v (v finite), for keeping uniform draws under `high`.
template <typename T>
T StepDown(T v) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
    return std::nextafter(v, -std::numeric_limits<T>::infinity());
  } else {  // Half, BFloat16: sign-magnitude bits
    uint16_t b = v.bits;
    if ((b & 0x7fffu) == 0) return T::FromBits(0x8001u);  // +-0 -> smallest negative subnormal
    return T::FromBits(static_cast<uint16_t>((b & 0x8000u) ? b + 1 : b - 1));
  }
}

// How one generated double becomes an element; `floor` selects the uniform
// rule for integers (integers in [low, high)), otherwise they round.
template <typename T>
T ToElement(double v, bool floor) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (kIsPlainInt<T>) {
    return SaturateToInt<T>(floor ? std::floor(v) : std::round(v));
  } else {
    return FromDouble<T>(v);
  }
}

Status CheckSpec(const FillSpec& spec) {
  auto finite = [](double v) { return std::isfinite(v); };
  switch (spec.kind) {
    case FillKind::kUniform:
      if (!finite(spec.low) || !finite(spec.high) || spec.low > spec.high) {
        return InvalidArgumentError("uniform fill: expected finite low <= high, got low=" + std::to_string(spec.low) +
                                    " high=" + std::to_string(spec.high));
      }
      break;
    case FillKind::kInt:
      if (!finite(spec.low) || !finite(spec.high) || std::ceil(spec.low) > std::floor(spec.high)) {
        return InvalidArgumentError("int fill: expected an integer in [low, high], got low=" +
                                    std::to_string(spec.low) + " high=" + std::to_string(spec.high));
      }
      if (std::fabs(spec.low) > 0x1.0p62 || std::fabs(spec.high) > 0x1.0p62) {
        return InvalidArgumentError("int fill: low and high must be within +-2^62");
      }
      break;
    case FillKind::kNormal:
      if (!finite(spec.mean) || !finite(spec.stddev) || spec.stddev < 0) {
        return InvalidArgumentError("normal fill: expected a finite mean and stddev >= 0, got mean=" +
                                    std::to_string(spec.mean) + " stddev=" + std::to_string(spec.stddev));
      }
      break;
    case FillKind::kConstant:
    case FillKind::kSequential:
      if (std::isnan(spec.value)) return InvalidArgumentError("fill value is NaN");
      break;
  }
  return Status::Ok();
}

template <typename T>
void FillTyped(Tensor& t, const FillSpec& spec) {
  Xoshiro256 gen(spec.seed);
  NormalSource normal(gen);
  const int64_t n = t.numel();
  T* contiguous = t.is_contiguous() ? t.data<T>() : nullptr;
  const int64_t int_low = static_cast<int64_t>(std::ceil(spec.low));
  const uint64_t int_span = static_cast<uint64_t>(static_cast<int64_t>(std::floor(spec.high)) - int_low);
  for (int64_t i = 0; i < n; ++i) {
    T x{};
    switch (spec.kind) {
      case FillKind::kUniform: {
        double v = spec.low + (spec.high - spec.low) * gen.Uniform();
        x = ToElement<T>(v, /*floor=*/true);
        if constexpr (!std::is_same_v<T, bool> && !kIsPlainInt<T>) {
          if (ToDouble(x) >= spec.high && spec.high > spec.low) x = StepDown(x);  // rounded up onto `high`
        }
        break;
      }
      case FillKind::kNormal:
        x = ToElement<T>(spec.mean + spec.stddev * normal.Next(), false);
        break;
      case FillKind::kInt:
        x = ToElement<T>(static_cast<double>(int_low + static_cast<int64_t>(gen.Below(int_span))), false);
        break;
      case FillKind::kConstant:
        x = ToElement<T>(spec.value, false);
        break;
      case FillKind::kSequential:
        x = ToElement<T>(spec.value + static_cast<double>(i), false);
        break;
    }
    if (contiguous) {
      contiguous[i] = x;
    } else {
      t.FlatSetFromDouble(i, ToDouble(x));  // exact: x is already of the element type
    }
  }
}

}  // namespace

StatusOr<FillKind> ParseFillKind(std::string_view name) {
  const std::string n = AsciiLower(name);
  if (n == "uniform") return FillKind::kUniform;
  if (n == "normal") return FillKind::kNormal;
  if (n == "int") return FillKind::kInt;
  if (n == "constant" || n == "const") return FillKind::kConstant;
  if (n == "sequential" || n == "seq") return FillKind::kSequential;
  return InvalidArgumentError("unknown fill '" + std::string(name) +
                              "': expected uniform, normal, int, constant or sequential");
}

Status Fill(Tensor& t, const FillSpec& spec) {
  if (!t.defined()) return InvalidArgumentError("cannot fill an undefined tensor");
  if (!t.on_host()) return FailedPreconditionError("cannot fill " + t.Describe() + " in device memory: fill on the host, then copy");
  OPSCOPE_RETURN_IF_ERROR(CheckSpec(spec));
  OPSCOPE_SWITCH_ALL(t.dtype(), FillTyped<scalar_t>(t, spec));
  return Status::Ok();
}

}  // namespace opscope
