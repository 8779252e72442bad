// Gemm and MatMul (ONNX opset 13). Float kernels call OpenBLAS (16-bit floats
// go through float buffers); integer kernels are plain loops with wrapping
// arithmetic. The references are triple loops in double (int64 for integers).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "ops/builtin/dense_blas.h"
#include "ops/builtin/dense_epilogue.h"
#include "ops/builtin/dense_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

const std::vector<DType> kGemmTypes = {DType::kF16, DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kBF16};

// ---- MatMul shapes -------------------------------------------------------------------

// numpy matmul: 1-D operands are promoted (and the added dim dropped again),
// the dims before the last two broadcast.
struct MatMulDims {
  int64_t m = 1, k = 1, n = 1;
  Shape batch;                        // broadcast batch shape
  Shape a_batch, b_batch;             // each operand's own batch dims
  Shape out;
};

StatusOr<MatMulDims> MatMulShapes(const Shape& a, const Shape& b) {
  if (a.rank() == 0 || b.rank() == 0) {
    return InvalidArgumentError("MatMul: inputs must have rank >= 1; got A " + a.ToString() + " and B " +
                                b.ToString());
  }
  MatMulDims d;
  std::vector<int64_t> ad = a.dims(), bd = b.dims();
  if (a.rank() == 1) ad.insert(ad.begin(), 1);
  if (b.rank() == 1) bd.push_back(1);
  d.m = ad[ad.size() - 2];
  d.k = ad.back();
  d.n = bd.back();
  if (bd[bd.size() - 2] != d.k) {
    return InvalidArgumentError("MatMul: inner dims differ: A " + a.ToString() + " has " + std::to_string(d.k) +
                                " columns, B " + b.ToString() + " has " + std::to_string(bd[bd.size() - 2]) + " rows");
  }
  d.a_batch = Shape(std::vector<int64_t>(ad.begin(), ad.end() - 2));
  d.b_batch = Shape(std::vector<int64_t>(bd.begin(), bd.end() - 2));
  auto batch = BroadcastShapes(d.a_batch, d.b_batch);
  if (!batch.ok()) {
    return InvalidArgumentError("MatMul: batch dims of A " + a.ToString() + " and B " + b.ToString() +
                                " do not broadcast");
  }
  d.batch = *batch;
  std::vector<int64_t> out = d.batch.dims();
  if (a.rank() > 1) out.push_back(d.m);
  if (b.rank() > 1) out.push_back(d.n);
  d.out = Shape(out);
  return d;
}

Status MatMulInfer(InferContext& c) {
  OPSCOPE_ASSIGN_OR_RETURN(MatMulDims d, MatMulShapes(c.input(0).shape, c.input(1).shape));
  c.SetOutput(0, c.input(0).dtype, d.out);
  return Status::Ok();
}

// Element offsets of each batch's matrix in A and B (broadcast batches repeat).
void BatchOffsets(const MatMulDims& d, std::vector<int64_t>& a_off, std::vector<int64_t>& b_off) {
  const int64_t nb = d.batch.numel();
  a_off.resize(nb);
  b_off.resize(nb);
  std::vector<int64_t> as = d.a_batch.ContiguousStrides(), bs = d.b_batch.ContiguousStrides();
  for (auto& s : as) s *= d.m * d.k;
  for (auto& s : bs) s *= d.k * d.n;
  std::vector<int64_t> abs = kernels::BroadcastStrides(d.a_batch, as, d.batch);
  std::vector<int64_t> bbs = kernels::BroadcastStrides(d.b_batch, bs, d.batch);
  for (int64_t i = 0; i < nb; ++i) {
    a_off[i] = kernels::FlatToOffset(i, d.batch, abs);
    b_off[i] = kernels::FlatToOffset(i, d.batch, bbs);
  }
}

template <typename T>
Status MatMulFloat(KernelContext& ctx, const MatMulDims& d, const Tensor& a, const Tensor& b,
                   const dense::Epilogue& e, const Tensor* bias) {
  using C = dense::AccOf<T>;
  std::vector<C> a_buf, b_buf, bias_buf, y_buf;
  const C* ap = dense::LoadAs<T, C>(a, a_buf);
  const C* bp = dense::LoadAs<T, C>(b, b_buf);
  const C* biasp = bias != nullptr ? dense::LoadAs<T, C>(*bias, bias_buf) : nullptr;
  Tensor& y = ctx.out(0);
  C* yp;
  if constexpr (std::is_same_v<T, C>) {
    yp = y.data<T>();
  } else {
    y_buf.resize(y.numel());
    yp = y_buf.data();
  }
  // Each block of a [rows, n] output at `out` starts at the bias (or zero),
  // the GEMM adds to it, then the activation.
  auto init = [&](C* out, const dense::GemmBlock& blk) { dense::FillBlock(out, d.n, blk, biasp); };
  auto tail = [&](C* out, const dense::GemmBlock& blk) {
    for (int64_t i = blk.i0; i < blk.i1; ++i) e.Run(out + i * d.n + blk.j0, blk.j1 - blk.j0, nullptr);
  };
  const int64_t nb = d.batch.numel();
  Status st;
  if (d.b_batch.numel() == 1 && d.a_batch == d.batch) {
    // B is shared by every batch: one GEMM over all of A's rows, on the
    // packed kernel's panels of B where it applies (dense::ChoosePanels).
    dense::GemmPanels panels;
    if constexpr (std::is_same_v<T, float>) {
      panels = dense::ChoosePanels(b, bp, d.n, false, false, 1.0f, nb * d.m, d.k, d.n);
    }
    st = dense::ParallelGemm(ctx, "matmul_gemm", false, false, nb * d.m, d.n, d.k, C(1), ap, d.k, bp, d.n, yp, d.n,
                             [&](const dense::GemmBlock& blk) { init(yp, blk); },
                             [&](const dense::GemmBlock& blk) { tail(yp, blk); }, panels);
  } else {
    std::vector<int64_t> a_off, b_off;
    BatchOffsets(d, a_off, b_off);
    // One batch per block: OpenBLAS runs single-threaded (dense_blas.h).
    st = ctx.ParallelFor("matmul_batched_gemm", nb, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        C* out = yp + i * d.m * d.n;
        const dense::GemmBlock all{0, d.m, 0, d.n};
        init(out, all);
        dense::Gemm(false, false, d.m, d.n, d.k, C(1), ap + a_off[i], d.k, bp + b_off[i], d.n, C(1), out, d.n);
        tail(out, all);
      }
    }, 1);
  }
  OPSCOPE_RETURN_IF_ERROR(st);
  if constexpr (!std::is_same_v<T, C>) dense::StoreAs<T, C>(yp, y.numel(), y.data<T>());
  return Status::Ok();
}

template <typename T>
Status MatMulInt(KernelContext& ctx, const MatMulDims& d, const Tensor& a, const Tensor& b) {
  std::vector<int64_t> a_off, b_off;
  BatchOffsets(d, a_off, b_off);
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  T* yp = ctx.out(0).data<T>();
  // One block per output row; unsigned sums wrap like the C types' modular results.
  return ctx.ParallelFor("matmul_int", d.batch.numel() * d.m, [&](int64_t begin, int64_t end) {
    std::vector<uint64_t> acc(d.n);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t bi = r / d.m, i = r % d.m;
      const T* arow = ap + a_off[bi] + i * d.k;
      const T* bm = bp + b_off[bi];
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t k = 0; k < d.k; ++k) {
        const uint64_t av = static_cast<uint64_t>(static_cast<int64_t>(arow[k]));
        const T* brow = bm + k * d.n;
        for (int64_t j = 0; j < d.n; ++j) acc[j] += av * static_cast<uint64_t>(static_cast<int64_t>(brow[j]));
      }
      for (int64_t j = 0; j < d.n; ++j) yp[r * d.n + j] = static_cast<T>(acc[j]);
    }
  }, 16);
}

}  // namespace

Status dense::MatMulCpu(KernelContext& ctx, const Epilogue& e, const Tensor* bias) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor a, ctx.in(0).Contiguous());
  OPSCOPE_ASSIGN_OR_RETURN(Tensor b, ctx.in(1).Contiguous());
  Tensor bc;
  if (bias != nullptr) {
    OPSCOPE_ASSIGN_OR_RETURN(bc, bias->Contiguous());
  }
  const Tensor* bp = bias != nullptr ? &bc : nullptr;
  OPSCOPE_ASSIGN_OR_RETURN(MatMulDims d, MatMulShapes(a.shape(), b.shape()));
  const bool plain = e.act == Act::kNone && bias == nullptr;
  switch (a.dtype()) {
    case DType::kF64: return MatMulFloat<double>(ctx, d, a, b, e, bp);
    case DType::kF32: return MatMulFloat<float>(ctx, d, a, b, e, bp);
    case DType::kF16: return MatMulFloat<Half>(ctx, d, a, b, e, bp);
    case DType::kBF16: return MatMulFloat<BFloat16>(ctx, d, a, b, e, bp);
    case DType::kI64:
      if (plain) return MatMulInt<int64_t>(ctx, d, a, b);
      break;
    case DType::kI32:
      if (plain) return MatMulInt<int32_t>(ctx, d, a, b);
      break;
    default: break;
  }
  return UnimplementedError(std::string(ctx.op_name()) + ": dtype " + DTypeName(a.dtype()));
}

namespace {

Status MatMulCpu(KernelContext& ctx) { return dense::MatMulCpu(ctx, dense::Epilogue{}, nullptr); }

// Index of the batch matrix of an operand with batch dims `own` for the
// broadcast batch multi-index `idx` (size-1 dims repeat).
int64_t OwnBatchIndex(const Shape& own, const Shape& batch, const std::vector<int64_t>& idx) {
  int64_t flat = 0;
  const int lead = batch.rank() - own.rank();
  for (int i = 0; i < own.rank(); ++i) flat = flat * own[i] + (own[i] == 1 ? 0 : idx[lead + i]);
  return flat;
}

Status MatMulReference(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(MatMulDims d, MatMulShapes(ctx.in(0).shape(), ctx.in(1).shape()));
  const bool is_float = IsFloat(ctx.in(0).dtype());
  std::vector<double> af, bf;
  std::vector<int64_t> ai, bi;
  if (is_float) {
    af = kernels::ToDoubles(ctx.in(0));
    bf = kernels::ToDoubles(ctx.in(1));
  } else {
    ai = kernels::ToInt64s(ctx.in(0));
    bi = kernels::ToInt64s(ctx.in(1));
  }
  Tensor& y = ctx.out(0);
  std::vector<int64_t> idx(d.batch.rank(), 0);
  for (int64_t bt = 0; bt < d.batch.numel(); ++bt) {
    int64_t rem = bt;
    for (int i = d.batch.rank() - 1; i >= 0; --i) {
      idx[i] = rem % d.batch[i];
      rem /= d.batch[i];
    }
    const int64_t ab = OwnBatchIndex(d.a_batch, d.batch, idx), bb = OwnBatchIndex(d.b_batch, d.batch, idx);
    if (is_float) {
      // A row of Y at a time, B read along its rows: each sum still runs k
      // in order from zero (one column of B at a time, 1024^3 took 3.5 s).
      std::vector<double> row(static_cast<size_t>(d.n));
      for (int64_t i = 0; i < d.m; ++i) {
        std::fill(row.begin(), row.end(), 0.0);
        const double* ar = af.data() + (ab * d.m + i) * d.k;
        for (int64_t k = 0; k < d.k; ++k) {
          const double a_ik = ar[k];
          const double* br = bf.data() + (bb * d.k + k) * d.n;
          for (int64_t j = 0; j < d.n; ++j) row[static_cast<size_t>(j)] += a_ik * br[j];
        }
        for (int64_t j = 0; j < d.n; ++j) y.FlatSetFromDouble((bt * d.m + i) * d.n + j, row[static_cast<size_t>(j)]);
      }
      continue;
    }
    for (int64_t i = 0; i < d.m; ++i) {
      for (int64_t j = 0; j < d.n; ++j) {
        const int64_t out = (bt * d.m + i) * d.n + j;
        uint64_t s = 0;
        for (int64_t k = 0; k < d.k; ++k) {
          s += static_cast<uint64_t>(ai[(ab * d.m + i) * d.k + k]) * static_cast<uint64_t>(bi[(bb * d.k + k) * d.n + j]);
        }
        if (y.dtype() == DType::kI64) y.data<int64_t>()[out] = static_cast<int64_t>(s);
        else y.data<int32_t>()[out] = static_cast<int32_t>(s);
      }
    }
  }
  return Status::Ok();
}

// ---- Gemm ------------------------------------------------------------------------------

struct GemmDims {
  int64_t m, k, n;
};

StatusOr<GemmDims> GemmShapes(const Shape& a, const Shape& b, const Shape* c, const Attrs& attrs) {
  if (a.rank() != 2 || b.rank() != 2) {
    return InvalidArgumentError("Gemm: A and B must be 2-D; got A " + a.ToString() + " and B " + b.ToString());
  }
  const bool ta = attrs.i("transA") != 0, tb = attrs.i("transB") != 0;
  GemmDims d{ta ? a[1] : a[0], ta ? a[0] : a[1], tb ? b[0] : b[1]};
  const int64_t kb = tb ? b[1] : b[0];
  if (kb != d.k) {
    return InvalidArgumentError("Gemm: inner dims differ: A " + a.ToString() + (ta ? " (transA)" : "") + " gives K=" +
                                std::to_string(d.k) + ", B " + b.ToString() + (tb ? " (transB)" : "") + " gives K=" +
                                std::to_string(kb));
  }
  if (c != nullptr) {
    const std::vector<int64_t> want = {d.m, d.n};
    bool ok = c->rank() <= 2;
    for (int i = 0; ok && i < c->rank(); ++i) {
      const int64_t cd = (*c)[c->rank() - 1 - i];
      ok = cd == 1 || cd == want[1 - i];
    }
    if (!ok) {
      return InvalidArgumentError("Gemm: C " + c->ToString() + " does not broadcast to the output [" +
                                  std::to_string(d.m) + "," + std::to_string(d.n) + "]");
    }
  }
  return d;
}

Status GemmInfer(InferContext& c) {
  const Shape* cs = c.has_input(2) ? &c.input(2).shape : nullptr;
  OPSCOPE_ASSIGN_OR_RETURN(GemmDims d, GemmShapes(c.input(0).shape, c.input(1).shape, cs, c.attrs()));
  c.SetOutput(0, c.input(0).dtype, Shape({d.m, d.n}));
  return Status::Ok();
}

// Row and column strides of C viewed as [m, n] (0 on broadcast dims).
std::pair<int64_t, int64_t> CStrides(const Shape& c) {
  const int64_t cols = c.rank() >= 1 ? c[c.rank() - 1] : 1;
  const int64_t rows = c.rank() == 2 ? c[0] : 1;
  return {rows == 1 ? 0 : cols, cols == 1 ? 0 : 1};
}

template <typename T>
Status GemmFloat(KernelContext& ctx, const GemmDims& d, const Tensor& a, const Tensor& b, const Tensor* c,
                 const dense::Epilogue& e) {
  using C = dense::AccOf<T>;
  const Attrs& at = ctx.attrs();
  const bool ta = at.i("transA") != 0, tb = at.i("transB") != 0;
  const C alpha = static_cast<C>(at.f("alpha", 1.0)), beta = static_cast<C>(at.f("beta", 1.0));
  std::vector<C> a_buf, b_buf, c_buf, y_buf;
  const C* ap = dense::LoadAs<T, C>(a, a_buf);
  const C* bp = dense::LoadAs<T, C>(b, b_buf);
  const C* cp = c != nullptr ? dense::LoadAs<T, C>(*c, c_buf) : nullptr;
  // Plain names, not a structured binding: the lambda below captures them.
  const std::pair<int64_t, int64_t> c_strides = c != nullptr ? CStrides(c->shape()) : std::pair<int64_t, int64_t>{0, 0};
  const int64_t rs = c_strides.first, cs = c_strides.second;
  Tensor& y = ctx.out(0);
  C* yp;
  if constexpr (std::is_same_v<T, C>) {
    yp = y.data<T>();
  } else {
    y_buf.resize(y.numel());
    yp = y_buf.data();
  }
  dense::GemmPanels panels;
  if constexpr (std::is_same_v<T, float>) panels = dense::ChoosePanels(b, bp, b.dim(1), ta, tb, alpha, d.m, d.k, d.n);
  OPSCOPE_RETURN_IF_ERROR(dense::ParallelGemm(
      ctx, "gemm", ta, tb, d.m, d.n, d.k, alpha, ap, a.dim(1), bp, b.dim(1), yp, d.n,
      [&](const dense::GemmBlock& blk) {  // beta * C broadcast into the block (or zeros), which the GEMM adds to
        if (cp == nullptr) return dense::FillBlock<C>(yp, d.n, blk, nullptr);
        for (int64_t i = blk.i0; i < blk.i1; ++i)
          for (int64_t j = blk.j0; j < blk.j1; ++j) yp[i * d.n + j] = beta * cp[i * rs + j * cs];
      },
      [&](const dense::GemmBlock& blk) {
        for (int64_t i = blk.i0; i < blk.i1; ++i) e.Run(yp + i * d.n + blk.j0, blk.j1 - blk.j0, nullptr);
      },
      panels));
  if constexpr (!std::is_same_v<T, C>) dense::StoreAs<T, C>(yp, y.numel(), y.data<T>());
  return Status::Ok();
}

template <typename T>
Status GemmInt(KernelContext& ctx, const GemmDims& d, const Tensor& a, const Tensor& b, const Tensor* c) {
  const Attrs& at = ctx.attrs();
  const bool ta = at.i("transA") != 0, tb = at.i("transB") != 0;
  const double alpha = at.f("alpha", 1.0), beta = at.f("beta", 1.0);
  const T* ap = a.data<T>();
  const T* bp = b.data<T>();
  const T* cp = c ? c->data<T>() : nullptr;
  const std::pair<int64_t, int64_t> c_strides = c ? CStrides(c->shape()) : std::pair<int64_t, int64_t>{0, 0};
  const int64_t rs = c_strides.first, cs = c_strides.second;
  T* yp = ctx.out(0).data<T>();
  const int64_t as0 = ta ? 1 : d.k, as1 = ta ? d.m : 1;  // A[i,k] = ap[i*as0 + k*as1]
  const int64_t bs0 = tb ? 1 : d.n, bs1 = tb ? d.k : 1;  // B[k,j] = bp[k*bs0 + j*bs1]
  return ctx.ParallelFor("gemm_int", d.m, [&](int64_t begin, int64_t end) {
    std::vector<uint64_t> acc(d.n);
    for (int64_t i = begin; i < end; ++i) {
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t k = 0; k < d.k; ++k) {
        const uint64_t av = static_cast<uint64_t>(static_cast<int64_t>(ap[i * as0 + k * as1]));
        for (int64_t j = 0; j < d.n; ++j) acc[j] += av * static_cast<uint64_t>(static_cast<int64_t>(bp[k * bs0 + j * bs1]));
      }
      for (int64_t j = 0; j < d.n; ++j) {
        const T prod = static_cast<T>(acc[j]);
        const T cv = cp ? cp[i * rs + j * cs] : T(0);
        if (alpha == 1.0 && beta == 1.0) {
          yp[i * d.n + j] = static_cast<T>(static_cast<uint64_t>(prod) + static_cast<uint64_t>(cv));
        } else {
          yp[i * d.n + j] = static_cast<T>(alpha * static_cast<double>(prod) + beta * static_cast<double>(cv));
        }
      }
    }
  }, 16);
}

}  // namespace

Status dense::GemmCpu(KernelContext& ctx, const Epilogue& e) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor a, ctx.in(0).Contiguous());
  OPSCOPE_ASSIGN_OR_RETURN(Tensor b, ctx.in(1).Contiguous());
  Tensor c;
  if (ctx.has_input(2)) {
    OPSCOPE_ASSIGN_OR_RETURN(c, ctx.in(2).Contiguous());
  }
  const Tensor* cp = c.defined() ? &c : nullptr;
  OPSCOPE_ASSIGN_OR_RETURN(GemmDims d, GemmShapes(a.shape(), b.shape(), cp ? &c.shape() : nullptr, ctx.attrs()));
  switch (a.dtype()) {
    case DType::kF64: return GemmFloat<double>(ctx, d, a, b, cp, e);
    case DType::kF32: return GemmFloat<float>(ctx, d, a, b, cp, e);
    case DType::kF16: return GemmFloat<Half>(ctx, d, a, b, cp, e);
    case DType::kBF16: return GemmFloat<BFloat16>(ctx, d, a, b, cp, e);
    case DType::kI64:
      if (e.act == Act::kNone) return GemmInt<int64_t>(ctx, d, a, b, cp);
      break;
    case DType::kI32:
      if (e.act == Act::kNone) return GemmInt<int32_t>(ctx, d, a, b, cp);
      break;
    default: break;
  }
  return UnimplementedError(std::string(ctx.op_name()) + ": dtype " + DTypeName(a.dtype()));
}

namespace {

Status GemmCpu(KernelContext& ctx) { return dense::GemmCpu(ctx, dense::Epilogue{}); }

Status GemmReference(KernelContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  const bool has_c = ctx.has_input(2);
  OPSCOPE_ASSIGN_OR_RETURN(GemmDims d, GemmShapes(a.shape(), b.shape(), has_c ? &ctx.in(2).shape() : nullptr,
                                                  ctx.attrs()));
  const bool ta = ctx.attrs().i("transA") != 0, tb = ctx.attrs().i("transB") != 0;
  const double alpha = ctx.attrs().f("alpha", 1.0), beta = ctx.attrs().f("beta", 1.0);
  Tensor& y = ctx.out(0);
  // Both operands as doubles once, in row-major order (an element at a time
  // through GetAsDouble built an index vector per multiply-add).
  const std::vector<double> av = kernels::ToDoubles(a), bv = kernels::ToDoubles(b);
  const int64_t a1 = a.dim(1), b1 = b.dim(1);
  // C as doubles once, broadcast by index: [m, n], [1, n], [m, 1], [n] or a scalar.
  const std::vector<double> cv = has_c ? kernels::ToDoubles(ctx.in(2)) : std::vector<double>();
  auto c_at = [&](int64_t i, int64_t j) {
    const Tensor& c = ctx.in(2);
    const int64_t cj = c.rank() >= 1 && c.dim(c.rank() - 1) != 1 ? j : 0;
    const int64_t ci = c.rank() == 2 && c.dim(0) != 1 ? i : 0;
    return cv[static_cast<size_t>(c.rank() == 2 ? ci * c.dim(1) + cj : cj)];
  };
  // A row of sums at a time. Without transB, B is read along its rows (one
  // column at a time, 1024^3 took seconds); with it, each sum is a dot of
  // two contiguous rows. Either way each sum runs k in order from zero.
  std::vector<double> row(static_cast<size_t>(d.n));
  for (int64_t i = 0; i < d.m; ++i) {
    if (tb) {
      for (int64_t j = 0; j < d.n; ++j) {
        double s = 0;
        for (int64_t k = 0; k < d.k; ++k) s += av[ta ? k * a1 + i : i * a1 + k] * bv[j * b1 + k];
        row[static_cast<size_t>(j)] = s;
      }
    } else {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t k = 0; k < d.k; ++k) {
        const double a_ik = av[ta ? k * a1 + i : i * a1 + k];
        const double* br = bv.data() + k * b1;
        for (int64_t j = 0; j < d.n; ++j) row[static_cast<size_t>(j)] += a_ik * br[j];
      }
    }
    for (int64_t j = 0; j < d.n; ++j) {
      double v = alpha * row[static_cast<size_t>(j)];
      if (has_c) v += beta * c_at(i, j);
      y.FlatSetFromDouble(i * d.n + j, v);
    }
  }
  return Status::Ok();
}

Cost MatMulCost(const OpCall& c) {
  // out = batch x m x n; each element is k multiply-adds.
  const int64_t k = c.in(0).shape.rank() >= 1 ? c.in(0).shape[c.in(0).shape.rank() - 1] : 1;
  return Cost{.bytes_read = c.in(0).bytes() + c.in(1).bytes(), .bytes_written = c.out(0).bytes(),
              .flops = 2.0 * static_cast<double>(c.out(0).numel()) * static_cast<double>(k)};
}

Cost GemmCost(const OpCall& c) {
  const bool ta = c.attrs().i("transA") != 0;
  const int64_t k = c.in(0).shape.rank() == 2 ? c.in(0).shape[ta ? 0 : 1] : 1;
  int64_t read = c.in(0).bytes() + c.in(1).bytes();
  double flops = 2.0 * static_cast<double>(c.out(0).numel()) * static_cast<double>(k);
  if (c.num_inputs() > 2 && c.in(2).present) {
    read += c.in(2).bytes();
    flops += 2.0 * static_cast<double>(c.out(0).numel());
  }
  return Cost{.bytes_read = read, .bytes_written = c.out(0).bytes(), .flops = flops};
}

}  // namespace

OPSCOPE_OP("MatMul")
    .Doc("numpy matmul: 1-D operands promoted, batch dims broadcast")
    .Input("A", "T").Input("B", "T").Output("Y", "T")
    .TypeConstraint("T", kGemmTypes)
    .Infer(MatMulInfer)
    .Cost(MatMulCost)
    .Reference(MatMulReference)
    .Kernel("cpu", MatMulCpu, "matmul_cpu_openblas");

OPSCOPE_OP("Gemm")
    .Doc("Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A, C broadcast to [M, N]")
    .Input("A", "T").Input("B", "T").OptionalInput("C", "T").Output("Y", "T")
    .TypeConstraint("T", kGemmTypes)
    .Attr("alpha", 1.0f).Attr("beta", 1.0f).Attr("transA", 0).Attr("transB", 0)
    .Infer(GemmInfer)
    .Cost(GemmCost)
    .Reference(GemmReference)
    .Kernel("cpu", GemmCpu, "gemm_cpu_openblas");

}  // namespace opscope
