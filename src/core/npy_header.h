// File: core/npy_header.h
// The header of a .npy file: its fixed prefix, the dict literal that says the
// dtype, the axis order and the shape, and the header numpy would write for
// a tensor. core/npy.cc reads and writes the data behind it.
//
// bfloat16: numpy has no such type. ml_dtypes (what JAX and TensorFlow use to
// give numpy a bfloat16) registers it as a 2-byte type of kind 'V', so
// np.save of an ml_dtypes.bfloat16 array writes descr '<V2'. We write the same,
// so `np.load(f).view(ml_dtypes.bfloat16)` gives the values back, and plain
// numpy gets them with `(a.view('<u2').astype('<u4') << 16).view('<f4')`.
// Any 2-byte void descr ('<V2', '|V2', '>V2') reads back as kBF16.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "opscope/dtype.h"
#include "opscope/tensor.h"
#include "opscope/status.h"

namespace opscope::npy_format {

static_assert(std::endian::native == std::endian::little, "the .npy code assumes a little-endian host");

inline constexpr char kMagic[] = "\x93NUMPY";
inline constexpr size_t kMagicLen = 6;
inline constexpr size_t kAlign = 64;  // the data starts at a multiple of this

struct Descr {
  DType dtype;
  bool swap;  // big-endian data on this little-endian host
};

struct NpyHeader {
  Descr descr;
  bool fortran_order = false;
  Shape shape;
  size_t data_offset = 0;  // bytes before the data
  size_t data_bytes = 0;
};

// "<f4" for kF32: the descr numpy writes for a dtype.
const char* DescrOf(DType t);
// A descr as opscope reads it; unsupported ones named as numpy names them.
StatusOr<Descr> ParseDescr(const std::string& descr, const std::string& name);

// The length of the fixed prefix (magic, version, header length: 10 or 12
// bytes) from the file's first bytes; errors name `name`.
StatusOr<size_t> PrefixLength(std::string_view start, const std::string& name);
// The whole header's length (prefix and dict) from the prefix alone.
StatusOr<size_t> HeaderLength(std::string_view prefix, size_t prefix_len);
// The dict literal between the prefix and the data.
StatusOr<NpyHeader> ParseHeaderDict(std::string_view dict_text, size_t data_offset, const std::string& name);
// Prefix and dict at the start of `bytes`, which must hold the whole header.
StatusOr<NpyHeader> ParseHeader(std::string_view bytes, const std::string& name);

// "float32[2,3] (24 bytes of data)".
std::string DescribeData(const NpyHeader& h);
// The error for `have` bytes of data where the header says otherwise.
Status SizeMismatch(const NpyHeader& h, uint64_t have, const std::string& name);

// The header numpy's np.save writes for a C-order array: version 1.0 while
// the length fits, padded so the data is 64-byte aligned.
std::string NpyHeaderFor(DType dtype, const Shape& shape);

}  // namespace opscope::npy_format
