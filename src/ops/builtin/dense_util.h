// Helpers shared by the dense built-in ops (Conv, ConvTranspose, Gemm,
// MatMul, the pools, the normalisations, Resize): sliding-window geometry
// with ONNX's auto_pad rules, and moving 16-bit floats in and out of the
// float buffers the BLAS calls need.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "opscope/op.h"

namespace opscope::dense {

// float for f32/f16/bf16, double for f64: the type GEMMs and sums run in.
template <typename T>
using AccOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Spatial geometry of a convolution or pooling window, one entry per spatial dim.
struct WindowGeometry {
  std::vector<int64_t> in, kernel, strides, dilations, pads_begin, pads_end, out;
  int spatial() const { return static_cast<int>(in.size()); }
  int64_t in_size() const;
  int64_t out_size() const;
  int64_t kernel_size() const;
};

// Reads strides/dilations/pads/auto_pad (and ceil_mode where `ceil_mode`)
// from `attrs` for a window of `kernel` sliding over the spatial dims of `x`
// (dims 2..). Errors name `op`, the attribute and what was expected.
StatusOr<WindowGeometry> SlidingWindow(std::string_view op, const Shape& x, const std::vector<int64_t>& kernel,
                                       const Attrs& attrs, bool ceil_mode);

// The same geometry padded to exactly 3 spatial dims (leading dims of size 1),
// so kernels need one loop nest for 1-D, 2-D and 3-D.
WindowGeometry As3d(const WindowGeometry& g);

// One kernel tap along a row: output o reads input o * stride + off, and the
// outputs [lo, hi] are those that read inside [0, in) (lo > hi: none). The
// row loops of depthwise Conv, im2col and MaxPool work out each tap's reach
// once and then run along the row with no bounds check per element.
struct TapReach {
  int64_t off, lo, hi;
};
inline TapReach ReachOf(int64_t off, int64_t stride, int64_t in, int64_t out) {
  const int64_t lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
  const int64_t hi = in - 1 - off < 0 ? -1 : std::min(out - 1, (in - 1 - off) / stride);
  return {off, lo, hi};
}
// The reach of each tap of dim 2 (the row) of a 3-D window: kw * dilation - pad.
inline std::vector<TapReach> RowReaches(const WindowGeometry& g) {
  std::vector<TapReach> r;
  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
    r.push_back(ReachOf(kw * g.dilations[2] - g.pads_begin[2], g.strides[2], g.in[2], g.out[2]));
  }
  return r;
}

// Row-major multi-index of `flat` in `dims`.
std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& dims);

// Every tap of a kernel as its multi-index, in flat order: Unflatten(k,
// kernel) for each k, made once. The references walk these for each output
// rather than unflattening each tap again (an allocation per tap: a 3x3
// conv over [1,64,56,56] to 192 channels spent 7 of `ops-debug profile`'s
// 8.6 s in its reference, mostly in malloc and free).
std::vector<std::vector<int64_t>> KernelTaps(const std::vector<int64_t>& kernel);

// "[1,2,3]"
std::string Join(const std::vector<int64_t>& v);

// Contiguous data of `t` (dtype T) as C: the tensor's own memory when T is C,
// else a converted copy kept in `scratch`. `t` must be contiguous.
template <typename T, typename C>
const C* LoadAs(const Tensor& t, std::vector<C>& scratch) {
  if constexpr (std::is_same_v<T, C>) {
    return t.data<T>();
  } else {
    const T* src = t.data<T>();
    scratch.resize(t.numel());
    for (int64_t i = 0; i < t.numel(); ++i) scratch[i] = static_cast<C>(static_cast<float>(src[i]));
    return scratch.data();
  }
}

// Converts n values of C into T.
template <typename T, typename C>
void StoreAs(const C* src, int64_t n, T* dst) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, C>) dst[i] = src[i];
    else dst[i] = static_cast<T>(static_cast<float>(src[i]));
  }
}

// Checks an input is 1-D with `n` elements (per-channel parameters).
Status CheckVector(std::string_view op, const TensorDesc& d, std::string_view name, int64_t n);

// Whether this CPU runs AVX2: the row loops that have `[[gnu::target("avx2")]]`
// clones (the ops are built for baseline x86-64) take them only where it does.
bool HasAvx2();

// Outputs a block for a kernel each of whose outputs reads `reads_each`
// inputs: about the "block_inputs" tunable's count of inputs a block (32768
// unless swept), at least one output. Reductions, ArgMax and
// GlobalAveragePool cut their launches so: cut by a count of outputs alone,
// a few outputs over large planes ran as one block on one thread.
int64_t OutputsPerBlock(KernelContext& ctx, int64_t reads_each);

// A ParallelFor block size for `n` items: at least `at_least` items a block,
// in whole `multiple`s, and where that makes more than one block, a count of
// blocks that is a multiple of `workers` (the device's compute units), so
// each gets the same share. Cut by size alone, mobilenet_v2's [1,960,7,7]
// depthwise was three blocks of 336, 336 and 288 channels: one worker ran
// two of them while the other waited.
int64_t WholeRoundsBlock(int64_t n, int64_t at_least, int64_t multiple, int workers);

}  // namespace opscope::dense
