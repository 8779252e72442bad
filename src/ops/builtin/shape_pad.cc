// Pad (opset 13 form): pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...]
// (negative values crop), mode constant | reflect | edge, optional scalar
// constant_value. The kernel maps each output position per dim to a source
// position (or "constant") once, then per output row memcpys the interior run
// and fills or copies the few border elements.
#include <algorithm>
#include <cstring>

#include "ops/builtin/shape_util.h"
#include "ops/kernel_util.h"

namespace opscope {
namespace {

using shape_ops::IntsToString;

Status InferPad(InferContext& c) {
  const Shape& in = c.input(0).shape;
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> pads, shape_ops::ValueInts(c, 1, "pads"));
  if (static_cast<int>(pads.size()) != 2 * in.rank()) {
    return InvalidArgumentError("Pad: pads " + IntsToString(pads) + " has " + std::to_string(pads.size()) +
                                " entries; input " + in.ToString() + " needs " + std::to_string(2 * in.rank()) +
                                " (all begins, then all ends)");
  }
  if (c.has_input(2) && c.input(2).numel() != 1) {
    return InvalidArgumentError("Pad: constant_value must be a scalar, got shape " + c.input(2).shape.ToString());
  }
  const std::string mode = c.attrs().s("mode", "constant");
  std::vector<int64_t> dims;
  for (int i = 0; i < in.rank(); ++i) {
    int64_t d = in[i] + pads[i] + pads[i + in.rank()];
    if (d < 0) {
      return InvalidArgumentError("Pad: pads " + IntsToString(pads) + " crop dim " + std::to_string(i) + " of input " +
                                  in.ToString() + " below zero");
    }
    if (mode != "constant" && in[i] == 0 && d > 0) {
      return InvalidArgumentError("Pad: mode " + mode + " cannot pad dim " + std::to_string(i) + " of input " +
                                  in.ToString() + ": it is empty");
    }
    dims.push_back(d);
  }
  c.SetOutput(0, c.input(0).dtype, Shape(dims));
  return Status::Ok();
}

// Source index along one dim for each output position; -1 = the constant.
std::vector<int64_t> DimMap(const std::string& mode, int64_t n, int64_t begin, int64_t out_len) {
  std::vector<int64_t> m(out_len);
  const int64_t period = 2 * (n - 1);
  for (int64_t o = 0; o < out_len; ++o) {
    int64_t i = o - begin;
    if (i >= 0 && i < n) {
      m[o] = i;
    } else if (mode == "constant") {
      m[o] = -1;
    } else if (mode == "edge" || n == 1) {
      m[o] = std::clamp<int64_t>(i, 0, n - 1);
    } else {  // reflect, about the first and last element, repeated
      int64_t r = ((i % period) + period) % period;
      m[o] = r < n ? r : period - r;
    }
  }
  return m;
}

Status PadCpu(KernelContext& ctx) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor x, ctx.in(0).Contiguous());
  Tensor& y = ctx.out(0);
  const std::vector<int64_t> pads = kernels::ToInt64s(ctx.in(1));
  const std::string mode = ctx.attrs().s("mode", "constant");
  const int rank = x.rank();
  const size_t es = x.element_size();
  std::vector<char> fill(es, 0);
  if (ctx.has_input(2)) {
    OPSCOPE_ASSIGN_OR_RETURN(Tensor cv, ctx.in(2).Contiguous());
    std::memcpy(fill.data(), cv.raw_data(), es);
  }
  if (rank == 0) return shape_ops::CopyInto(ctx, "pad_cpu", x, y);
  std::vector<std::vector<int64_t>> maps(rank);
  for (int d = 0; d < rank; ++d) maps[d] = DimMap(mode, x.dim(d), pads[d], y.dim(d));
  const std::vector<int64_t> in_strides = x.shape().ContiguousStrides();
  const int64_t inner = y.dim(rank - 1);
  const int64_t begin = pads[rank - 1];
  // The interior of a row: output columns copied straight from one input row.
  const int64_t lo = std::clamp<int64_t>(begin, 0, inner);
  const int64_t hi = std::clamp<int64_t>(begin + x.dim(rank - 1), lo, inner);
  const std::vector<int64_t>& last = maps[rank - 1];
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(y.raw_data());
  const int64_t ses = static_cast<int64_t>(es);
  if (inner == 0) return Status::Ok();
  return ctx.ParallelFor("pad_cpu", y.numel(), [&](int64_t b, int64_t e) {
    int64_t row = b / inner, col = b % inner;
    while (b < e) {
      const int64_t end_col = std::min(inner, col + (e - b));
      // Source row offset, or -1 when an outer dim lands in the constant border.
      int64_t src_row = 0;
      for (int64_t r = row, d = rank - 2; d >= 0; --d) {
        int64_t o = r % y.dim(static_cast<int>(d));
        r /= y.dim(static_cast<int>(d));
        int64_t m = maps[d][o];
        if (m < 0) { src_row = -1; break; }
        src_row += m * in_strides[d];
      }
      char* out_row = dst + row * inner * ses;
      if (src_row < 0) {
        shape_ops::FillElements(out_row + col * ses, end_col - col, fill.data(), es);
      } else {
        const char* in_row = src + src_row * ses;
        for (int64_t c = col; c < end_col;) {
          if (c >= lo && c < hi) {
            int64_t stop = std::min(hi, end_col);
            std::memcpy(out_row + c * ses, in_row + (c - begin) * ses, static_cast<size_t>(stop - c) * es);
            c = stop;
          } else {
            std::memcpy(out_row + c * ses, last[c] < 0 ? fill.data() : in_row + last[c] * ses, es);
            ++c;
          }
        }
      }
      b += end_col - col;
      col = 0;
      ++row;
    }
  }, 1 << 16);
}

// The reference walks each out-of-range index back into range step by step.
Status PadReference(KernelContext& ctx) {
  const Shape& in = ctx.in(0).shape();
  const std::vector<int64_t> pads = kernels::ToInt64s(ctx.in(1));
  const std::string mode = ctx.attrs().s("mode", "constant");
  const double fill = ctx.has_input(2) ? ctx.in(2).FlatGetAsDouble(0) : 0.0;
  std::vector<int64_t> src;
  std::vector<int64_t> idx(in.rank());
  shape_ops::ForEachIndex(ctx.out(0).shape(), [&](const std::vector<int64_t>& o) {
    bool constant = false;
    for (int d = 0; d < in.rank(); ++d) {
      const int64_t n = in[d];
      int64_t i = o[d] - pads[d];
      if (i < 0 || i >= n) {
        if (mode == "constant") {
          constant = true;
        } else if (mode == "edge" || n == 1) {
          i = i < 0 ? 0 : n - 1;
        } else {
          while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
        }
      }
      idx[d] = i;
    }
    src.push_back(constant ? -1 : shape_ops::FlatIndex(idx, in));
  });
  return shape_ops::ReferenceGather(ctx.in(0), src, ctx.out(0), fill);
}

}  // namespace

OPSCOPE_OP("Pad")
    .Doc("Pads (or crops, with negative pads) each dim: constant value, reflection, or edge repetition")
    .Input("data", "T").ValueInput("pads", "I64", /*optional=*/true).OptionalInput("constant_value", "T")
    .Output("output", "T")
    .TypeConstraint("T", AllDTypes()).TypeConstraint("I64", {DType::kI64})
    .AttrAsInput("pads", AttrType::kInts, 1).AttrAsInput("value", AttrType::kFloat, 2)  // opsets 2-10
    .Attr("mode", "constant", {"constant", "reflect", "edge"})
    .Infer(InferPad)
    .Cost(shape_ops::MoveCost)
    .Tunable("block", {65536, 16384, 262144})
    .Reference(PadReference)
    .Kernel("cpu", PadCpu, "pad_cpu");

}  // namespace opscope
