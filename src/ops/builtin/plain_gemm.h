// File: ops/builtin/plain_gemm.h
// The minimal build's GEMM (no OpenBLAS there, cmake/minimal.cmake): plain
// loops that dense_blas.h's Gemm calls in place of cblas, with its meaning
// (row-major, C = alpha * op(A) op(B) + beta * C). Right, not fast: a build
// made to check the cuda half times no cpu GEMM that matters, and calibrate
// says which GEMM it measured.
#pragma once

#include <cstdint>
#include <vector>

namespace opscope::dense {

template <typename T>
void PlainGemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
               const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  std::vector<T> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    // One row of the product at a time, summed over p in the inner loop's
    // unit stride (j) where B is not transposed.
    for (int64_t j = 0; j < n; ++j) row[j] = T(0);
    for (int64_t p = 0; p < k; ++p) {
      const T av = trans_a ? a[p * lda + i] : a[i * lda + p];
      if (trans_b) {
        for (int64_t j = 0; j < n; ++j) row[j] += av * b[j * ldb + p];
      } else {
        const T* brow = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
      }
    }
    T* crow = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) crow[j] = alpha * row[j] + (beta == T(0) ? T(0) : beta * crow[j]);
  }
}

}  // namespace opscope::dense
