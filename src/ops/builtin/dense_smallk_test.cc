#include "ops/builtin/dense_smallk.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace opscope {
namespace {

// Values in [-1, 1] with a NaN and an infinity among them where `specials`:
// a lane that summed another lane's products, or skipped one, would carry
// them somewhere else.
std::vector<float> SmallKFloats(size_t n, uint32_t seed, bool specials = false) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  if (specials && n > 7) {
    v[n / 3] = std::nanf("");
    v[n / 2 + 1] = std::numeric_limits<float>::infinity();
  }
  return v;
}

// Runs `kernel` into a copy of `start` with the 512-bit blocks on, then off,
// and says whether every byte came out the same (the bytes the kernel must
// not write included).
void ExpectWideGivesTheBitsOfNarrow(const std::vector<float>& start, const std::function<void(float*)>& kernel,
                                    const std::string& what) {
  std::vector<float> wide = start, narrow = start;
  dense::SetWideBlocks(true);
  kernel(wide.data());
  dense::SetWideBlocks(false);
  kernel(narrow.data());
  dense::SetWideBlocks(true);
  EXPECT_EQ(std::memcmp(wide.data(), narrow.data(), wide.size() * sizeof(float)), 0) << what;
  EXPECT_NE(std::memcmp(wide.data(), start.data(), wide.size() * sizeof(float)), 0) << what << ": nothing written";
}

class WideBlocks : public ::testing::Test {
 protected:
  void SetUp() override {
    if (dense::Avx2SmallKGemm() == nullptr) GTEST_SKIP() << "no AVX2+FMA: OpenBLAS runs every float GEMM";
    was_ = dense::SetWideBlocks(true);
    if (!dense::WideBlocks()) GTEST_SKIP() << "no AVX-512F (or OPSCOPE_NO_AVX512 set): the 256-bit blocks alone run";
  }
  void TearDown() override { dense::SetWideBlocks(was_); }
  bool was_ = false;
};

// The small-k kernel: rows in blocks of six and the four- and five-row
// tails, columns as pairs of panels, a lone panel and a masked last one
// (more or fewer than 8 live), from C, from row_init, clamped or not.
TEST_F(WideBlocks, SmallKGivesTheBitsOfTheNarrowBlocks) {
  const float inf = std::numeric_limits<float>::infinity();
  uint32_t seed = 1;
  for (int64_t m : {1, 5, 7, 13, 49}) {
    for (int64_t n : {16, 31, 32, 49, 64, 100}) {
      for (int64_t k : {1, 27, 256}) {
        for (bool init : {false, true}) {
          const int64_t lda = k + 3, ldb = n + 5, ldc = n + 7;
          const std::vector<float> a = SmallKFloats(m * lda, seed++, true), b = SmallKFloats(k * ldb, seed++);
          const std::vector<float> row_init = SmallKFloats(m, seed++), c = SmallKFloats(m * ldc, seed++);
          const float lo = init ? 0.0f : -inf, hi = init ? 0.5f : inf;
          ExpectWideGivesTheBitsOfNarrow(c, [&](float* out) {
            dense::Avx2SmallKGemm()(m, n, k, a.data(), lda, b.data(), ldb, out, ldc, init ? row_init.data() : nullptr,
                                    lo, hi);
          }, "small-k m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        }
      }
    }
  }
}

// The shifted GEMM over one and several slabs (a 600-term sum is three),
// each row of B a shift of one plane.
TEST_F(WideBlocks, ShiftedGemmGivesTheBitsOfTheNarrowBlocks) {
  uint32_t seed = 100;
  // Rows in blocks of eight where the blocks are 512-bit: 1 and 3 rows
  // alone, 10, 11 and 17 with the two last blocks sharing what is left.
  for (int64_t m : {1, 3, 6, 10, 11, 17, 20, 100}) {
    for (int64_t n : {16, 40, 64, 81}) {
      for (int64_t k : {9, 300, 600}) {
        const int64_t lda = k, ldc = n + 3;
        const std::vector<float> a = SmallKFloats(m * lda, seed++, true), src = SmallKFloats(k * 3 + n + 16, seed++);
        std::vector<int64_t> off(static_cast<size_t>(k));
        for (int64_t p = 0; p < k; ++p) off[static_cast<size_t>(p)] = 3 * p;
        const dense::ColumnRun run{0, n, 0};
        const std::vector<float> row_init = SmallKFloats(m, seed++), c = SmallKFloats(m * ldc, seed++);
        ExpectWideGivesTheBitsOfNarrow(c, [&](float* out) {
          dense::Avx2ShiftedGemm()(m, n, k, a.data(), lda, src.data(), off.data(), &run, 1, out, ldc, row_init.data(),
                                   -1.0f, 2.0f, nullptr);
        }, "shifted m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
      }
    }
  }
}

// The packed GEMM on panels kept (from a column that starts a panel) and
// packed per call (any columns), one slab and three.
TEST_F(WideBlocks, PackedGemmGivesTheBitsOfTheNarrowBlocks) {
  const float inf = std::numeric_limits<float>::infinity();
  uint32_t seed = 200;
  for (int64_t m : {16, 33}) {
    for (int64_t n : {16, 48, 100}) {
      for (int64_t k : {5, 600}) {
        const int64_t ldc = n + 1;
        const std::vector<float> a = SmallKFloats(m * k, seed++, true), b = SmallKFloats(k * n, seed++);
        const std::vector<float> c = SmallKFloats(m * ldc, seed++);
        const auto kept = dense::PackPanels(b.data(), n, false, k, n);
        ASSERT_NE(kept, nullptr);
        for (int64_t j0 : {int64_t{0}, int64_t{16}}) {
          if (j0 >= n) continue;
          ExpectWideGivesTheBitsOfNarrow(c, [&](float* out) {
            dense::Avx2PackedGemm()(m, k, a.data(), k, kept.get(), nullptr, 0, false, j0, n, out, ldc, -inf, inf);
          }, "kept m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
          ExpectWideGivesTheBitsOfNarrow(c, [&](float* out) {
            dense::Avx2PackedGemm()(m, k, a.data(), k, nullptr, b.data(), n, false, j0 + 3, n, out, ldc, -inf, inf);
          }, "packed m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        }
      }
    }
  }
}

// The position GEMM: positions in blocks of six (eight where 512-bit) and
// their tails, channels as threes and pairs of panels and a lone one (48,
// 80 and 130 channels: 3, 3 + 2, 3 + 3 + 2 + 1; 2 + 2 from the second
// panel), from a channel past the first panel, one slab and three.
TEST_F(WideBlocks, PositionGemmGivesTheBitsOfTheNarrowBlocks) {
  uint32_t seed = 300;
  for (int64_t npos : {1, 7, 17, 49, 96}) {
    for (int64_t M : {16, 48, 80, 130}) {
      for (int64_t K : {9, 576}) {
        const std::vector<float> w = SmallKFloats(M * K, seed++), src = SmallKFloats(npos * 5 + 2 * K + 8, seed++, true);
        const auto wt = dense::PackPanels(w.data(), K, true, K, M);
        ASSERT_NE(wt, nullptr);
        std::vector<const float*> base(static_cast<size_t>(npos));
        for (int64_t j = 0; j < npos; ++j) base[static_cast<size_t>(j)] = src.data() + 5 * j;
        std::vector<int64_t> off(static_cast<size_t>(K));
        for (int64_t p = 0; p < K; ++p) off[static_cast<size_t>(p)] = 2 * p;
        for (int64_t m0 : {int64_t{0}, int64_t{16}}) {
          if (m0 >= M) continue;
          const int64_t ldct = wt->padded_n + 16;
          const std::vector<float> ct = SmallKFloats(npos * ldct, seed++);
          ExpectWideGivesTheBitsOfNarrow(ct, [&](float* out) {
            dense::Avx2PositionGemm()(npos, K, base.data(), off.data(), *wt, m0, M, out, ldct);
          }, "position npos=" + std::to_string(npos) + " M=" + std::to_string(M) + " K=" + std::to_string(K));
        }
      }
    }
  }
}

}  // namespace
}  // namespace opscope
