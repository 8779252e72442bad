// Half <-> float over spans (dtype.h): with the CPU's F16C conversions where
// it has them, eight elements an instruction, else Half's own scalar code.
// Cast to float16 converted element by element held the op at 17x its memory
// bound. Both round to nearest even and agree on every finite value,
// infinity and subnormal; they differ only on signalling NaNs, which F16C
// quiets and numpy (whose semantics Half follows) keeps: a block of eight
// holding a NaN goes through the scalar code, so the bits stay numpy's.
#include <cpuid.h>
#include <immintrin.h>

#include <cstring>

#include "opscope/dtype.h"

namespace opscope {
namespace {

// F16C is CPUID leaf 1, ECX bit 29 (clang 14's __builtin_cpu_supports does
// not know the name); "avx" also says the OS saves the YMM state.
bool HaveF16c() {
  static const bool have = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1u << 29)) != 0;
  }();
  return have;
}

__attribute__((target("avx,f16c"))) int64_t HalvesFromFloatsF16c(const float* x, Half* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
      for (int64_t j = i; j < i + 8; ++j) y[j].bits = Half::FromFloat(x[j]);
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
  return i;
}

__attribute__((target("avx,f16c"))) int64_t FloatsFromHalvesF16c(const Half* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    // A NaN half: exponent all ones and a nonzero mantissa, (bits & 0x7fff) > 0x7c00.
    const __m128i mag = _mm_and_si128(h, _mm_set1_epi16(0x7fff));
    if (_mm_movemask_epi8(_mm_cmpgt_epi16(mag, _mm_set1_epi16(0x7c00))) != 0) {
      for (int64_t j = i; j < i + 8; ++j) y[j] = Half::ToFloat(x[j].bits);
      continue;
    }
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
  }
  return i;
}

}  // namespace

void HalvesFromFloats(const float* x, Half* y, int64_t n) {
  static_assert(sizeof(Half) == 2);
  int64_t i = HaveF16c() ? HalvesFromFloatsF16c(x, y, n) : 0;
  for (; i < n; ++i) y[i].bits = Half::FromFloat(x[i]);
}

void FloatsFromHalves(const Half* x, float* y, int64_t n) {
  int64_t i = HaveF16c() ? FloatsFromHalvesF16c(x, y, n) : 0;
  for (; i < n; ++i) y[i] = Half::ToFloat(x[i].bits);
}

}  // namespace opscope
