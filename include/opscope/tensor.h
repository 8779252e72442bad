// File: opscope/tensor.h
// Shape and strided Tensor. A Tensor is a view (shape, element strides, byte
// offset, dtype) over a reference-counted Buffer; the Buffer knows which
// Device owns its memory (nullptr = ordinary host memory).
//
//   OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kF32, Shape({2, 3})));
//   float* p = t.data<float>();              // contiguous host tensor
//   double v = t.GetAsDouble({1, 2});        // any dtype, any strides
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "opscope/dtype.h"
#include "opscope/status.h"

namespace opscope {

class Device;

class Shape {
 public:
  Shape() = default;  // a scalar: rank 0, one element
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t operator[](int i) const { return dims_[i]; }
  int64_t& operator[](int i) { return dims_[i]; }
  int64_t dim(int i) const { return dims_[i]; }  // no negative indexing
  const std::vector<int64_t>& dims() const { return dims_; }
  std::vector<int64_t>& mutable_dims() { return dims_; }
  // Product of dims; 1 for a scalar. Saturates at INT64_MAX where the product
  // overflows, so an unvalidated shape never wraps to a small count.
  int64_t numel() const;
  bool operator==(const Shape& o) const { return dims_ == o.dims_; }
  bool operator!=(const Shape& o) const { return dims_ != o.dims_; }
  std::string ToString() const;  // "[2,3]"; "[]" for a scalar

  // Parses "[2,3]" or "2x3" or "2,3"; "[]" is a scalar.
  static StatusOr<Shape> Parse(std::string_view text);
  // Row-major element strides for these dims.
  std::vector<int64_t> ContiguousStrides() const;
  // Checks every dim >= 0 and the element count fits in int64.
  Status Validate() const;

 private:
  std::vector<int64_t> dims_;
};

// numpy broadcasting of two shapes; error names both shapes.
StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b);
// Normalises a possibly negative axis for a tensor of `rank`; error when out of range.
StatusOr<int> NormalizeAxis(int64_t axis, int rank);
// The bytes a contiguous `dtype` tensor of `shape` takes, for an allocation:
// an error naming the shape, dtype and size when a dim is negative or the
// size does not fit in int64 (what byte offsets are held in).
StatusOr<size_t> ByteSize(const Shape& shape, DType dtype);

// Owns (or wraps) one allocation. Core knows a Device only by name: memory
// on a device is allocated, freed and copied by the device layer
// (opscope/device.h: EmptyOnDevice, ToDevice, ToHost), which records here
// whether the host may touch it.
class Buffer {
 public:
  using Deleter = std::function<void(void*)>;
  // Host memory (device() == nullptr).
  Buffer(void* data, size_t bytes, Deleter deleter) : Buffer(data, bytes, nullptr, true, std::move(deleter)) {}
  // Memory owned by `device`.
  Buffer(void* data, size_t bytes, Device* device, bool host_accessible, Deleter deleter)
      : data_(data), bytes_(bytes), device_(device), host_accessible_(host_accessible),
        deleter_(std::move(deleter)) {}
  ~Buffer() { if (deleter_) deleter_(data_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device* device() const { return device_; }
  bool host_accessible() const { return host_accessible_; }

  // 64-byte aligned host memory, zeroed.
  static StatusOr<std::shared_ptr<Buffer>> AllocateHost(size_t bytes);
  // Like AllocateHost, left as the allocator gave it: for memory that is about
  // to be overwritten whole (a file read), so no page is touched twice.
  static StatusOr<std::shared_ptr<Buffer>> AllocateHostUninitialized(size_t bytes);
  // Wraps host memory owned elsewhere; nothing is freed.
  static std::shared_ptr<Buffer> Borrow(void* data, size_t bytes);

 private:
  void* data_;
  size_t bytes_;
  Device* device_;
  bool host_accessible_;
  Deleter deleter_;
};

class Tensor {
 public:
  Tensor() = default;  // undefined: an omitted optional input or output

  // A new contiguous host tensor, zeroed. On a device: EmptyOnDevice (opscope/device.h).
  static StatusOr<Tensor> Empty(DType dtype, const Shape& shape);
  static StatusOr<Tensor> Zeros(DType dtype, const Shape& shape);
  // A view over an existing buffer.
  Tensor(std::shared_ptr<Buffer> buffer, DType dtype, Shape shape,
         std::vector<int64_t> strides, int64_t byte_offset = 0);

  bool defined() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_.dim(i); }
  int64_t numel() const { return shape_.numel(); }
  size_t element_size() const { return DTypeSize(dtype_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  const std::vector<int64_t>& strides() const { return strides_; }  // in elements
  int64_t byte_offset() const { return byte_offset_; }
  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  Device* device() const { return buffer_ ? buffer_->device() : nullptr; }
  // Host memory, or a device whose memory the host can read (cpu).
  bool on_host() const { return buffer_ == nullptr || buffer_->host_accessible(); }
  bool is_contiguous() const;  // row-major with no gaps

  void* raw_data() const;  // address of element [0,...,0]
  template <typename T> T* data() const { return static_cast<T*>(raw_data()); }

  // Element access through strides (host tensors only); slow, for tests and tools.
  double GetAsDouble(const std::vector<int64_t>& index) const;
  double FlatGetAsDouble(int64_t flat_index) const;  // row-major logical index
  void FlatSetFromDouble(int64_t flat_index, double v);

  // Views: no copy.
  StatusOr<Tensor> Reshape(const Shape& shape) const;  // contiguous only
  StatusOr<Tensor> Permute(const std::vector<int>& perm) const;
  StatusOr<Tensor> Slice(int axis, int64_t start, int64_t stop) const;

  // Copies (host tensors).
  StatusOr<Tensor> Contiguous() const;  // returns *this if already contiguous
  StatusOr<Tensor> Clone() const;       // always a new contiguous buffer
  StatusOr<Tensor> CastTo(DType dtype) const;

  // "float32[2,3]"
  std::string Describe() const;

 private:
  std::shared_ptr<Buffer> buffer_;
  DType dtype_ = DType::kF32;
  Shape shape_;
  std::vector<int64_t> strides_;
  int64_t byte_offset_ = 0;
};

}  // namespace opscope
