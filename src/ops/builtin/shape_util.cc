#include "ops/builtin/shape_util.h"

#include <algorithm>
#include <cstring>

#include "ops/kernel_util.h"

namespace opscope::shape_ops {
namespace {

// Fixed-size element copy: the compiler turns the memcpy into one load/store.
template <size_t N>
void CopyElems(char* d, int64_t ds, const char* s, int64_t ss, int64_t n) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds, s + i * ss, N);
}

void CopyElemsAnySize(char* d, int64_t ds, const char* s, int64_t ss, int64_t n, size_t es) {
  switch (es) {
    case 1: CopyElems<1>(d, ds, s, ss, n); return;
    case 2: CopyElems<2>(d, ds, s, ss, n); return;
    case 4: CopyElems<4>(d, ds, s, ss, n); return;
    case 8: CopyElems<8>(d, ds, s, ss, n); return;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds, s + i * ss, es);
  }
}

// Drops unit dims and merges neighbours that are contiguous on both sides, so
// the innermost run is as long as it can be.
void Simplify(CopyPlan& p, size_t es) {
  CopyPlan q;
  for (size_t i = 0; i < p.shape.size(); ++i) {
    if (p.shape[i] == 1) continue;
    q.shape.push_back(p.shape[i]);
    q.dst_strides.push_back(p.dst_strides[i]);
    q.src_strides.push_back(p.src_strides[i]);
  }
  CopyPlan m;
  for (size_t i = 0; i < q.shape.size(); ++i) {
    if (!m.shape.empty() && m.dst_strides.back() == q.dst_strides[i] * q.shape[i] &&
        m.src_strides.back() == q.src_strides[i] * q.shape[i]) {
      m.shape.back() *= q.shape[i];
      m.dst_strides.back() = q.dst_strides[i];
      m.src_strides.back() = q.src_strides[i];
      continue;
    }
    m.shape.push_back(q.shape[i]);
    m.dst_strides.push_back(q.dst_strides[i]);
    m.src_strides.push_back(q.src_strides[i]);
  }
  if (m.shape.empty()) {
    m.shape = {1};
    m.dst_strides = {static_cast<int64_t>(es)};
    m.src_strides = {static_cast<int64_t>(es)};
  }
  p = std::move(m);
}

}  // namespace

Status RunStridedCopy(KernelContext& ctx, std::string_view kernel_name, char* dst, const char* src,
                      CopyPlan plan, size_t es) {
  for (int64_t d : plan.shape) if (d == 0) return Status::Ok();
  Simplify(plan, es);
  const int rank = static_cast<int>(plan.shape.size());
  const int64_t inner = plan.shape.back();
  const int64_t dst_in = plan.dst_strides.back();
  const int64_t src_in = plan.src_strides.back();
  const bool contiguous_run = dst_in == static_cast<int64_t>(es) && src_in == static_cast<int64_t>(es);
  int64_t n = 1;
  for (int64_t d : plan.shape) n *= d;
  const CopyPlan& p = plan;
  return ctx.ParallelFor(kernel_name, n, [&](int64_t b, int64_t e) {
    // Position of element b: outer multi-index (dims 0..rank-2) and column.
    std::vector<int64_t> idx(rank > 1 ? rank - 1 : 0, 0);
    int64_t row = b / inner, col = b % inner;
    int64_t d_off = 0, s_off = 0;
    for (int i = rank - 2; i >= 0; --i) {
      idx[i] = row % p.shape[i];
      row /= p.shape[i];
      d_off += idx[i] * p.dst_strides[i];
      s_off += idx[i] * p.src_strides[i];
    }
    while (b < e) {
      int64_t len = std::min(inner - col, e - b);
      char* d = dst + d_off + col * dst_in;
      const char* s = src + s_off + col * src_in;
      if (contiguous_run) {
        std::memcpy(d, s, static_cast<size_t>(len) * es);
      } else {
        CopyElemsAnySize(d, dst_in, s, src_in, len, es);
      }
      b += len;
      col = 0;
      for (int i = rank - 2; i >= 0; --i) {
        d_off += p.dst_strides[i];
        s_off += p.src_strides[i];
        if (++idx[i] < p.shape[i]) break;
        d_off -= idx[i] * p.dst_strides[i];
        s_off -= idx[i] * p.src_strides[i];
        idx[i] = 0;
      }
    }
  }, 1 << 16);
}

std::vector<int64_t> ByteStrides(const Tensor& t) {
  std::vector<int64_t> s = t.strides();
  for (int64_t& v : s) v *= static_cast<int64_t>(t.element_size());
  return s;
}

std::vector<int64_t> ContiguousByteStrides(const Shape& shape, size_t es) {
  std::vector<int64_t> s = shape.ContiguousStrides();
  for (int64_t& v : s) v *= static_cast<int64_t>(es);
  return s;
}

Status CopyInto(KernelContext& ctx, std::string_view kernel_name, const Tensor& in, Tensor& out) {
  if (in.numel() != out.numel() || in.dtype() != out.dtype()) {
    return InternalError(std::string(ctx.op_name()) + ": copy of " + in.Describe() + " into " + out.Describe());
  }
  if (in.is_contiguous()) {
    // A plain copy: still one launch, so it is timed and swept like the others.
    CopyPlan plan{{in.numel()}, {static_cast<int64_t>(in.element_size())}, {static_cast<int64_t>(in.element_size())}};
    return RunStridedCopy(ctx, kernel_name, static_cast<char*>(out.raw_data()),
                          static_cast<const char*>(in.raw_data()), plan, in.element_size());
  }
  CopyPlan plan{in.shape().dims(), ContiguousByteStrides(in.shape(), in.element_size()), ByteStrides(in)};
  return RunStridedCopy(ctx, kernel_name, static_cast<char*>(out.raw_data()),
                        static_cast<const char*>(in.raw_data()), plan, in.element_size());
}

void FillElements(char* dst, int64_t n, const char* value, size_t es) {
  if (n <= 0) return;
  bool all_zero = std::all_of(value, value + es, [](char c) { return c == 0; });
  if (all_zero) {
    std::memset(dst, 0, static_cast<size_t>(n) * es);
    return;
  }
  std::memcpy(dst, value, es);
  // Doubling copies: log2(n) memcpys.
  int64_t done = 1;
  while (done < n) {
    int64_t m = std::min(done, n - done);
    std::memcpy(dst + done * es, dst, static_cast<size_t>(m) * es);
    done += m;
  }
}

std::vector<char> ScalarBytes(DType dtype, double v) {
  std::vector<char> b(DTypeSize(dtype));
  OPSCOPE_SWITCH_ALL(dtype, {
    scalar_t x = FromDouble<scalar_t>(v);
    std::memcpy(b.data(), &x, sizeof x);
  });
  return b;
}

Status ReferenceGather(const Tensor& in_view, const std::vector<int64_t>& src_index, Tensor& out, double fill) {
  if (static_cast<int64_t>(src_index.size()) != out.numel()) {
    return InternalError("reference index map has " + std::to_string(src_index.size()) + " entries for " +
                         out.Describe());
  }
  OPSCOPE_ASSIGN_OR_RETURN(Tensor in, in_view.Contiguous());
  if (IsFloat(in.dtype())) {
    std::vector<double> v = kernels::ToDoubles(in);
    std::vector<double> o(src_index.size());
    for (size_t i = 0; i < o.size(); ++i) o[i] = src_index[i] < 0 ? fill : v[src_index[i]];
    kernels::FromDoubles(out, o);
    return Status::Ok();
  }
  if (out.dtype() != in.dtype()) {
    return InternalError("reference output " + out.Describe() + " for input " + in.Describe());
  }
  const size_t es = in.element_size();
  std::vector<char> fill_bytes = ScalarBytes(in.dtype(), fill);
  const char* s = static_cast<const char*>(in.raw_data());
  char* d = static_cast<char*>(out.raw_data());
  for (size_t i = 0; i < src_index.size(); ++i) {
    const char* from = src_index[i] < 0 ? fill_bytes.data() : s + src_index[i] * es;
    std::memcpy(d + i * es, from, es);
  }
  return Status::Ok();
}

void ForEachIndex(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& fn) {
  if (shape.numel() == 0) return;
  std::vector<int64_t> idx(shape.rank(), 0);
  while (true) {
    fn(idx);
    int i = shape.rank() - 1;
    for (; i >= 0; --i) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
    if (i < 0) return;
  }
}

int64_t FlatIndex(const std::vector<int64_t>& index, const Shape& shape) {
  int64_t f = 0;
  for (int i = 0; i < shape.rank(); ++i) f = f * shape[i] + index[i];
  return f;
}

std::string IntsToString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

StatusOr<std::vector<int64_t>> ValueInts(const InferContext& c, int input, std::string_view input_name) {
  const Tensor* t = c.input_value(input);
  if (t == nullptr) {
    return InvalidArgumentError(std::string(c.op_name()) + ": the values of input '" + std::string(input_name) +
                                "' are needed to infer the output shape, but none were given");
  }
  if (t->rank() > 1) {
    return InvalidArgumentError(std::string(c.op_name()) + ": input '" + std::string(input_name) +
                                "' must be a 1-D tensor, got shape " + t->shape().ToString());
  }
  return kernels::ToInt64s(*t);
}

StatusOr<std::vector<int>> NormalizeAxes(std::string_view op, std::string_view what,
                                         const std::vector<int64_t>& axes, int rank) {
  std::vector<int> out;
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return InvalidArgumentError(std::string(op) + ": " + std::string(what) + " " + IntsToString(axes) +
                                  ": axis " + std::to_string(a) + " is out of range for rank " +
                                  std::to_string(rank) + " (expected -" + std::to_string(rank) + " to " +
                                  std::to_string(rank - 1) + ")");
    }
    int n = static_cast<int>(a < 0 ? a + rank : a);
    if (seen[n]) {
      return InvalidArgumentError(std::string(op) + ": " + std::string(what) + " " + IntsToString(axes) +
                                  " names axis " + std::to_string(n) + " twice");
    }
    seen[n] = true;
    out.push_back(n);
  }
  return out;
}

Cost MoveCost(const OpCall& c) {
  Cost cost;
  for (int i = 0; i < c.num_inputs(); ++i) if (c.in(i).present) cost.bytes_read += c.in(i).bytes();
  for (int i = 0; i < c.num_outputs(); ++i) cost.bytes_written += c.out(i).bytes();
  return cost;
}

}  // namespace opscope::shape_ops
