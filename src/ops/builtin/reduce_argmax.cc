// ArgMax: the int64 index of the largest element along axis (first one on
// ties, or last with select_last_index=1). NaN counts as the largest, as in
// numpy. The kernel keeps one running best per output in a contiguous run of
// columns, so the input is read row by row.
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ops/builtin/dense_util.h"
#include "ops/builtin/shape_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

StatusOr<int> ArgAxis(int64_t axis, const Shape& in) {
  if (axis < -in.rank() || axis >= in.rank()) {
    return InvalidArgumentError("ArgMax: axis " + std::to_string(axis) + " is out of range for input " + in.ToString());
  }
  return static_cast<int>(axis < 0 ? axis + in.rank() : axis);
}

Status InferArgMax(InferContext& c) {
  const Shape& in = c.input(0).shape;
  OPSCOPE_ASSIGN_OR_RETURN(int axis, ArgAxis(c.attrs().i("axis"), in));
  if (in[axis] == 0) {
    return InvalidArgumentError("ArgMax: dim " + std::to_string(axis) + " of input " + in.ToString() +
                                " is empty; there is no largest element");
  }
  std::vector<int64_t> dims;
  for (int d = 0; d < in.rank(); ++d) {
    if (d != axis) dims.push_back(in[d]);
    else if (c.attrs().i("keepdims", 1)) dims.push_back(1);
  }
  c.SetOutput(0, DType::kI64, Shape(dims));
  return Status::Ok();
}

template <typename C>
inline bool IsNan(C v) {
  if constexpr (std::is_floating_point_v<C>) return v != v;
  else return false;
}

// Should `v` replace `best`?
template <typename C, bool kLast>
inline bool Better(C v, C best) {
  if (IsNan(best)) return kLast && IsNan(v);
  if (IsNan(v)) return true;
  return kLast ? v >= best : v > best;
}

// The outputs in blocks of about the "block_inputs" tunable's count of
// inputs, as the reductions cut theirs (reduce_ops.cc): cut at 4096 outputs,
// an argmax over 128 rows of 30522 logits was one block on one thread.
// Columns in runs of at least 1024 (or a whole row). Each output's scan is
// the same however they are cut.
#if defined(__x86_64__)
// The index of a contiguous float row's largest element, as Better scans it
// one element at a time (ArgMaxTyped), 8 lanes at once: each lane keeps the
// best of the elements it sees, with Better's rule (a NaN wins and stays,
// ties keep the first, or the last with kLast). The lanes' winners then give
// the scan's own: any NaN lane's index, the least (the greatest with kLast);
// else the largest value's least (greatest) index. The tail runs Better on
// from there. One element at a time, [128,30522] ran at 3.3 GB/s a thread.
template <bool kLast>
[[gnu::target("avx2")]] int64_t ArgMaxRowAvx2(const float* row, int64_t n) {
  const int64_t whole = n / 8 * 8;
  __m256 best = _mm256_loadu_ps(row);
  __m256i at = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i idx = at;
  const __m256i eight = _mm256_set1_epi32(8);
  for (int64_t k = 8; k < whole; k += 8) {
    idx = _mm256_add_epi32(idx, eight);
    const __m256 v = _mm256_loadu_ps(row + k);
    const __m256 nan_v = _mm256_cmp_ps(v, v, _CMP_UNORD_Q), nan_b = _mm256_cmp_ps(best, best, _CMP_UNORD_Q);
    const __m256 above = _mm256_cmp_ps(v, best, kLast ? _CMP_GE_OQ : _CMP_GT_OQ);
    __m256 take = _mm256_andnot_ps(nan_b, _mm256_or_ps(nan_v, above));
    if constexpr (kLast) take = _mm256_or_ps(take, _mm256_and_ps(nan_b, nan_v));
    best = _mm256_blendv_ps(best, v, take);
    at = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(at), _mm256_castsi256_ps(idx), take));
  }
  alignas(32) float lane_v[8];
  alignas(32) int32_t lane_at[8];
  _mm256_store_ps(lane_v, best);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lane_at), at);
  float v = lane_v[0];
  int64_t pick = lane_at[0];
  for (int l = 1; l < 8; ++l) {
    const float w = lane_v[l];
    const int64_t i = lane_at[l];
    const bool v_nan = std::isnan(v), w_nan = std::isnan(w);
    bool better;
    if (v_nan || w_nan) better = w_nan && (!v_nan || (kLast ? i > pick : i < pick));
    else better = w > v || (w == v && (kLast ? i > pick : i < pick));
    if (better) v = w, pick = i;
  }
  for (int64_t k = whole; k < n; ++k) {
    if (Better<float, kLast>(row[k], v)) v = row[k], pick = k;
  }
  return pick;
}
#endif

template <typename T, bool kLast>
Status ArgMaxTyped(KernelContext& ctx, const T* x, int64_t* y, const kernels::AxisSplit& s) {
  using C = typename ComputeTypeOf<T>::type;
  const int64_t inner = s.inner, r = s.axis;
  int64_t grain = dense::OutputsPerBlock(ctx, r);
  if (inner > 1) grain = std::max(grain, std::min<int64_t>(inner, 1024));
#if defined(__x86_64__)
  if constexpr (std::is_same_v<T, float>) {
    if (inner == 1 && r >= 8 && r < (int64_t{1} << 31) && dense::HasAvx2()) {
      return ctx.ParallelFor("argmax_cpu", s.outer, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) y[o] = ArgMaxRowAvx2<kLast>(x + o * r, r);
      }, grain);
    }
  }
#endif
  return ctx.ParallelFor("argmax_cpu", s.outer * inner, [&](int64_t b, int64_t e) {
    std::vector<C> best;
    std::vector<int64_t> at;
    int64_t o = b / inner, i0 = b % inner;
    while (b < e) {
      const int64_t w = std::min(inner - i0, e - b);
      const T* base = x + o * r * inner + i0;
      best.resize(w);
      at.assign(w, 0);
      for (int64_t i = 0; i < w; ++i) best[i] = static_cast<C>(base[i]);
      for (int64_t k = 1; k < r; ++k) {
        const T* row = base + k * inner;
        for (int64_t i = 0; i < w; ++i) {
          C v = static_cast<C>(row[i]);
          if (Better<C, kLast>(v, best[i])) { best[i] = v; at[i] = k; }
        }
      }
      std::copy(at.begin(), at.end(), y + o * inner + i0);
      b += w;
      i0 = 0;
      ++o;
    }
  }, grain);
}

Status ArgMaxCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, ctx.in(0).Contiguous());
  OPSCOPE_ASSIGN_OR_RETURN(int axis, ArgAxis(ctx.attrs().i("axis"), x.shape()));
  const kernels::AxisSplit s = kernels::SplitAtAxis(x.shape(), axis);
  const bool last = ctx.attrs().i("select_last_index") != 0;
  int64_t* y = ctx.out(0).data<int64_t>();
  return DispatchNumeric(x.dtype(), ctx.op_name(), [&]<typename scalar_t>() {
    return last ? ArgMaxTyped<scalar_t, true>(ctx, x.data<scalar_t>(), y, s)
                : ArgMaxTyped<scalar_t, false>(ctx, x.data<scalar_t>(), y, s);
  });
}

Status ArgMaxReference(KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int axis = static_cast<int>(ctx.attrs().i("axis") < 0 ? ctx.attrs().i("axis") + x.rank() : ctx.attrs().i("axis"));
  const bool last = ctx.attrs().i("select_last_index") != 0;
  std::vector<double> v = kernels::ToDoubles(x);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const int64_t n = x.dim(axis);
  int64_t* y = ctx.out(0).data<int64_t>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      // The first (or last) NaN if any, else the first (or last) maximum.
      int64_t pick = -1;
      for (int64_t k = 0; k < n; ++k) {
        if (std::isnan(v[(o * n + k) * inner + i]) && (pick < 0 || last)) pick = k;
      }
      if (pick < 0) {
        double m = -INFINITY;
        for (int64_t k = 0; k < n; ++k) m = std::max(m, v[(o * n + k) * inner + i]);
        for (int64_t k = 0; k < n; ++k) {
          if (v[(o * n + k) * inner + i] == m && (pick < 0 || last)) pick = k;
        }
      }
      y[o * inner + i] = pick;
    }
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("ArgMax")
    .Doc("int64 index of the largest element along axis; first on ties unless select_last_index=1")
    .Input("data", "T").Output("reduced", "I64")
    .TypeConstraint("T", {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI64, DType::kI32, DType::kI16,
                          DType::kI8, DType::kU8})
    .TypeConstraint("I64", {DType::kI64})
    .Attr("axis", 0).Attr("keepdims", 1).Attr("select_last_index", 0)
    .Infer(InferArgMax)
    .Cost([](const OpCall& c) {
      return Cost{.bytes_read = c.in(0).bytes(), .bytes_written = c.out(0).bytes(), .flops = double(c.in(0).numel())};
    })
    .Tunable("block_inputs", {32768, 8192, 131072})
    .Reference(ArgMaxReference)
    .Kernel("cpu", ArgMaxCpu, "argmax_cpu");

}  // namespace opscope
