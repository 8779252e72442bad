#include "opscope/tensor.h"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>

#include "core/flat_offset.h"

namespace opscope {

namespace {

// From this size on, host buffers sit on 2 MiB boundaries and ask for
// transparent huge pages: one page fault per 2 MiB instead of per 4 KiB, which
// is most of the cost of first touching a large buffer on a virtual machine.
constexpr size_t kHugePage = size_t{2} << 20;

void* AllocateHostBytes(size_t bytes) {
  const size_t align = bytes >= kHugePage ? kHugePage : 64;
  const size_t rounded = (std::max<size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
  if (p && align == kHugePage) ::madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure is fine
#endif
  return p;
}

}  // namespace

StatusOr<std::shared_ptr<Buffer>> Buffer::AllocateHost(size_t bytes) {
  OPSCOPE_ASSIGN_OR_RETURN(auto buffer, AllocateHostUninitialized(bytes));
  std::memset(buffer->data(), 0, std::max<size_t>(bytes, 1));
  return buffer;
}

StatusOr<std::shared_ptr<Buffer>> Buffer::AllocateHostUninitialized(size_t bytes) {
  void* p = AllocateHostBytes(bytes);
  // Resource exhaustion from a size the input asked for: callers add what asked.
  if (!p) {
    return InvalidArgumentError("cannot allocate " + std::to_string(bytes) +
                                " bytes on the host (out of memory, or past the process's address-space limit)");
  }
  return std::make_shared<Buffer>(p, bytes, [](void* q) { std::free(q); });
}

std::shared_ptr<Buffer> Buffer::Borrow(void* data, size_t bytes) {
  return std::make_shared<Buffer>(data, bytes, nullptr);
}

Tensor::Tensor(std::shared_ptr<Buffer> buffer, DType dtype, Shape shape, std::vector<int64_t> strides,
               int64_t byte_offset)
    : buffer_(std::move(buffer)), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)),
      byte_offset_(byte_offset) {
  if (strides_.empty() && shape_.rank() > 0) strides_ = shape_.ContiguousStrides();
}

StatusOr<Tensor> Tensor::Empty(DType dtype, const Shape& shape) {
  OPSCOPE_ASSIGN_OR_RETURN(const size_t bytes, ByteSize(shape, dtype));
  StatusOr<std::shared_ptr<Buffer>> buf = Buffer::AllocateHost(bytes);
  if (!buf.ok()) return std::move(buf).status().WithContext(std::string(DTypeName(dtype)) + " " + shape.ToString());
  return Tensor(std::move(buf).value(), dtype, shape, shape.ContiguousStrides());
}

StatusOr<Tensor> Tensor::Zeros(DType dtype, const Shape& shape) { return Empty(dtype, shape); }

bool Tensor::is_contiguous() const {
  // The strides Shape::ContiguousStrides gives, computed the same way: a dim
  // of 0 counts as 1 and the product saturates, since an empty array's other
  // dims may multiply past int64 (a .npy shaped (0, 45, 81, ...)).
  int64_t expect = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    if (shape_[i] != 1 && strides_[i] != expect) return false;
    if (__builtin_mul_overflow(expect, std::max<int64_t>(shape_[i], 1), &expect)) {
      expect = std::numeric_limits<int64_t>::max();
    }
  }
  return true;
}

void* Tensor::raw_data() const {
  if (!buffer_) return nullptr;
  return static_cast<char*>(buffer_->data()) + byte_offset_;
}

namespace {

double LoadAsDouble(const void* p, DType t) {
  double v = 0;
  OPSCOPE_SWITCH_ALL(t, v = ToDouble(*static_cast<const scalar_t*>(p)));
  return v;
}

// A float -> integer C cast out of range is undefined behaviour; saturate and
// send NaN to 0 instead, so a bad value shows up as a bad value, not a crash.
template <typename To>
To SaturatingIntFromDouble(double v) {
  if (std::isnan(v)) return 0;
  constexpr double kLow = static_cast<double>(std::numeric_limits<To>::min());
  // max()+1 is a power of two, so exactly representable; max() may not be.
  constexpr double kHighExclusive = static_cast<double>(std::numeric_limits<To>::max() / 2 + 1) * 2.0;
  if (v <= kLow) return std::numeric_limits<To>::min();
  if (v >= kHighExclusive) return std::numeric_limits<To>::max();
  return static_cast<To>(v);
}

template <typename T>
constexpr bool kIsPlainInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// One element, From -> To, rounding once where numpy's astype does.
template <typename From, typename To>
To ConvertElement(From v) {
  if constexpr (std::is_same_v<From, To>) {
    return v;
  } else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
    return ConvertElement<float, To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (std::is_same_v<To, Half>) {
    return Half::FromBits(Half::FromDouble(static_cast<double>(v)));  // exact for every From left here but int64
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return BFloat16(static_cast<float>(v));
  } else if constexpr (kIsPlainInt<To> && std::is_floating_point_v<From>) {
    return SaturatingIntFromDouble<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);  // int -> int wraps like numpy's astype; int/float -> float rounds once
  }
}

void StoreFromDouble(void* p, DType t, double v) {
  OPSCOPE_SWITCH_ALL(t, *static_cast<scalar_t*>(p) = ConvertElement<double, scalar_t>(v));
}

}  // namespace

double Tensor::GetAsDouble(const std::vector<int64_t>& index) const {
  int64_t off = 0;
  for (int i = 0; i < rank(); ++i) off += index[i] * strides_[i];
  return LoadAsDouble(static_cast<char*>(raw_data()) + off * static_cast<int64_t>(element_size()), dtype_);
}

double Tensor::FlatGetAsDouble(int64_t flat_index) const {
  int64_t off = is_contiguous() ? flat_index : FlatToOffset(flat_index, shape_, strides_);
  return LoadAsDouble(static_cast<char*>(raw_data()) + off * static_cast<int64_t>(element_size()), dtype_);
}

void Tensor::FlatSetFromDouble(int64_t flat_index, double v) {
  int64_t off = is_contiguous() ? flat_index : FlatToOffset(flat_index, shape_, strides_);
  StoreFromDouble(static_cast<char*>(raw_data()) + off * static_cast<int64_t>(element_size()), dtype_, v);
}

StatusOr<Tensor> Tensor::Reshape(const Shape& shape) const {
  if (shape.numel() != numel()) {
    return InvalidArgumentError("cannot reshape " + Describe() + " to " + shape.ToString() +
                                ": element counts differ");
  }
  if (!is_contiguous()) return InvalidArgumentError("cannot reshape a non-contiguous " + Describe() + " as a view");
  return Tensor(buffer_, dtype_, shape, shape.ContiguousStrides(), byte_offset_);
}

StatusOr<Tensor> Tensor::Permute(const std::vector<int>& perm) const {
  if (static_cast<int>(perm.size()) != rank()) return InvalidArgumentError("permutation rank differs from tensor rank");
  std::vector<int64_t> dims(rank()), st(rank());
  std::vector<bool> seen(rank(), false);
  for (int i = 0; i < rank(); ++i) {
    int p = perm[i];
    if (p < 0 || p >= rank() || seen[p]) return InvalidArgumentError("bad permutation");
    seen[p] = true;
    dims[i] = shape_[p];
    st[i] = strides_[p];
  }
  return Tensor(buffer_, dtype_, Shape(dims), st, byte_offset_);
}

StatusOr<Tensor> Tensor::Slice(int axis, int64_t start, int64_t stop) const {
  if (axis < 0 || axis >= rank() || start < 0 || stop > shape_[axis] || start > stop) {
    return OutOfRangeError("slice out of range for " + Describe());
  }
  Shape s = shape_;
  s[axis] = stop - start;
  return Tensor(buffer_, dtype_, s, strides_,
                byte_offset_ + start * strides_[axis] * static_cast<int64_t>(element_size()));
}

StatusOr<Tensor> Tensor::Clone() const {
  if (!on_host()) return FailedPreconditionError("Clone of a device tensor: copy it to the host first");
  OPSCOPE_ASSIGN_OR_RETURN(Tensor out, Empty(dtype_, shape_));
  if (is_contiguous()) {
    std::memcpy(out.raw_data(), raw_data(), nbytes());
    return out;
  }
  const size_t es = element_size();
  const char* src = static_cast<const char*>(raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  int64_t n = numel();
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * es, src + FlatToOffset(i, shape_, strides_) * static_cast<int64_t>(es), es);
  }
  return out;
}

StatusOr<Tensor> Tensor::Contiguous() const {
  if (is_contiguous()) return *this;
  return Clone();
}

StatusOr<Tensor> Tensor::CastTo(DType dtype) const {
  if (!on_host()) return FailedPreconditionError("CastTo of a device tensor: copy it to the host first");
  if (dtype == dtype_) return Clone();
  OPSCOPE_ASSIGN_OR_RETURN(Tensor src, Contiguous());
  OPSCOPE_ASSIGN_OR_RETURN(Tensor out, Empty(dtype, shape_));
  const int64_t n = numel();
  OPSCOPE_SWITCH_ALL(dtype_, {
    using from_t = scalar_t;
    const from_t* in = src.data<from_t>();
    OPSCOPE_SWITCH_ALL(dtype, {
      scalar_t* o = out.data<scalar_t>();
      for (int64_t i = 0; i < n; ++i) o[i] = ConvertElement<from_t, scalar_t>(in[i]);
    });
  });
  return out;
}

std::string Tensor::Describe() const { return std::string(DTypeName(dtype_)) + shape_.ToString(); }

}  // namespace opscope
