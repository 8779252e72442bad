// numpy's .npy header (numpy/lib/format.py, "NEP 1"): "\x93NUMPY", major,
// minor, a little-endian header length (2 bytes in version 1.0, 4 in 2.0 and
// 3.0), then a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final '\n' so the data starts at a multiple of 64.
#include "core/npy_header.h"

#include <charconv>
#include <limits>

#include "core/little_endian.h"
#include "core/py_literal.h"

namespace opscope::npy_format {

// numpy leaves room to rewrite the header in place when the first axis grows.
constexpr size_t kGrowthAxisMaxDigits = 21;

const char* DescrOf(DType t) {
  switch (t) {
    case DType::kF64: return "<f8";
    case DType::kF32: return "<f4";
    case DType::kF16: return "<f2";
    case DType::kBF16: return "<V2";
    case DType::kI64: return "<i8";
    case DType::kI32: return "<i4";
    case DType::kI16: return "<i2";
    case DType::kI8: return "|i1";
    case DType::kU8: return "|u1";
    case DType::kU16: return "<u2";
    case DType::kU32: return "<u4";
    case DType::kU64: return "<u8";
    case DType::kBool: return "|b1";
  }
  return "?";
}

// `size` is whatever the header says: its bits are counted in 64 bits, so
// '<f2115054602' is named, not an int overflow (found by npy_fuzzer).
static std::string NumpyNameOf(char kind, int size) {
  const std::string bits = std::to_string(int64_t{size} * 8);
  switch (kind) {
    case 'c': return "complex" + bits;
    case 'u': return "uint" + bits;
    case 'f': return size == 16 ? "longdouble" : "float" + bits;
    case 'i': return "int" + bits;
    case 'U': return "unicode string";
    case 'S': case 'a': return "byte string";
    case 'O': return "Python objects";
    case 'M': return "datetime64";
    case 'm': return "timedelta64";
    case 'V': return "raw void";
    default: return "unknown kind";
  }
}

StatusOr<Descr> ParseDescr(const std::string& descr, const std::string& name) {
  auto unsupported = [&](const std::string& what) {
    return InvalidArgumentError(name + ": unsupported dtype '" + descr + "' (" + what +
                                "); opscope reads <f8 <f4 <f2 <V2 (bfloat16) <i8 <i4 <i2 |i1 <u8 <u4 <u2 |u1 |b1, "
                                "little- or big-endian");
  };
  std::string_view d = descr;
  char order = '=';
  if (!d.empty() && std::string_view("<>|=").find(d.front()) != std::string_view::npos) {
    order = d.front();
    d.remove_prefix(1);
  }
  if (d.empty()) return unsupported("no type code");
  char kind = d.front();
  int size = 0;
  d.remove_prefix(1);
  auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), size);
  if (d.empty() || ec != std::errc() || end != d.data() + d.size()) {
    return unsupported(kind == 'O' ? "Python objects" : "not a plain numeric type");
  }
  struct Known { char kind; int size; DType dtype; };
  static constexpr Known kKnown[] = {
      {'f', 8, DType::kF64}, {'f', 4, DType::kF32}, {'f', 2, DType::kF16}, {'V', 2, DType::kBF16},
      {'i', 8, DType::kI64}, {'i', 4, DType::kI32}, {'i', 2, DType::kI16}, {'i', 1, DType::kI8},
      {'u', 8, DType::kU64}, {'u', 4, DType::kU32}, {'u', 2, DType::kU16}, {'u', 1, DType::kU8},
      {'b', 1, DType::kBool},
  };
  for (const Known& k : kKnown) {
    if (k.kind == kind && k.size == size) return Descr{k.dtype, order == '>' && size > 1};
  }
  return unsupported(NumpyNameOf(kind, size));
}

StatusOr<size_t> PrefixLength(std::string_view start, const std::string& name) {
  if (start.empty()) return DataLossError(name + ": the file is empty, expected a .npy header");
  if (start.size() < kMagicLen || start.substr(0, kMagicLen) != std::string_view(kMagic, kMagicLen)) {
    return InvalidArgumentError(name + ": not a .npy file (it does not start with \"\\x93NUMPY\")");
  }
  if (start.size() < kMagicLen + 2) return DataLossError(name + ": truncated inside the .npy magic");
  int major = static_cast<unsigned char>(start[6]);
  int minor = static_cast<unsigned char>(start[7]);
  if ((major == 1 || major == 2 || major == 3) && minor == 0) return major == 1 ? 10 : 12;
  return InvalidArgumentError(name + ": unsupported .npy format version " + std::to_string(major) + "." +
                              std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
}

// Total header size (prefix + dict) from the prefix alone.
StatusOr<size_t> HeaderLength(std::string_view prefix, size_t prefix_len) {
  return prefix_len + (prefix_len == 10 ? GetLE16(prefix, 8) : static_cast<size_t>(GetLE32(prefix, 8)));
}

StatusOr<NpyHeader> ParseHeaderDict(std::string_view dict_text, size_t data_offset, const std::string& name) {
  auto bad = [&](const std::string& why) {
    std::string shown(dict_text.substr(0, 200));
    while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\n')) shown.pop_back();
    return InvalidArgumentError(name + ": bad .npy header: " + why + " (header: " + shown + ")");
  };
  StatusOr<PyValue> parsed = ParsePyLiteral(dict_text);
  if (!parsed.ok()) return bad(parsed.status().message());
  if (parsed->kind != PyValue::kDict) return bad("expected a dict");
  const PyValue *descr = nullptr, *fortran = nullptr, *shape = nullptr;
  for (const auto& [key, value] : parsed->fields) {
    if (key == "descr") descr = &value;
    else if (key == "fortran_order") fortran = &value;
    else if (key == "shape") shape = &value;
    else return bad("unexpected key '" + key + "'");
  }
  if (!descr || !fortran || !shape) return bad("expected the keys 'descr', 'fortran_order' and 'shape'");
  if (descr->kind == PyValue::kSeq) {
    return InvalidArgumentError(name + ": unsupported dtype: a structured array (descr is a list of fields); "
                                "opscope reads plain numeric arrays");
  }
  if (descr->kind != PyValue::kStr) return bad("'descr' is not a string");
  if (fortran->kind != PyValue::kBool) return bad("'fortran_order' is not True or False");
  if (shape->kind != PyValue::kSeq || shape->list) return bad("'shape' is not a tuple (numpy reads only a tuple)");
  NpyHeader h;
  OPSCOPE_ASSIGN_OR_RETURN(h.descr, ParseDescr(descr->str, name));
  h.fortran_order = fortran->boolean;
  std::vector<int64_t> dims;
  for (const PyValue& d : shape->items) {
    if (d.kind != PyValue::kInt) return bad("'shape' holds a non-integer");
    if (d.integer < 0) return bad("'shape' holds a negative dim");
    dims.push_back(d.integer);
  }
  h.shape = Shape(dims);
  Status valid = h.shape.Validate();
  if (!valid.ok()) return bad(valid.message());
  const size_t es = DTypeSize(h.descr.dtype);
  if (static_cast<uint64_t>(h.shape.numel()) > std::numeric_limits<size_t>::max() / es) {
    return bad("the data size overflows");
  }
  h.data_offset = data_offset;
  h.data_bytes = static_cast<size_t>(h.shape.numel()) * es;
  return h;
}

// Parses the prefix and dict at the start of `bytes` (which must hold the whole header).
StatusOr<NpyHeader> ParseHeader(std::string_view bytes, const std::string& name) {
  OPSCOPE_ASSIGN_OR_RETURN(size_t prefix_len, PrefixLength(bytes, name));
  if (bytes.size() < prefix_len) return DataLossError(name + ": truncated inside the .npy header length");
  OPSCOPE_ASSIGN_OR_RETURN(size_t header_len, HeaderLength(bytes, prefix_len));
  if (bytes.size() < header_len) {
    return DataLossError(name + ": truncated: the header says it is " + std::to_string(header_len) +
                         " bytes long, the file has " + std::to_string(bytes.size()));
  }
  return ParseHeaderDict(bytes.substr(prefix_len, header_len - prefix_len), header_len, name);
}

std::string DescribeData(const NpyHeader& h) {
  return std::string(DTypeName(h.descr.dtype)) + h.shape.ToString() + " (" + std::to_string(h.data_bytes) +
         " bytes of data)";
}

Status SizeMismatch(const NpyHeader& h, uint64_t have, const std::string& name) {
  if (have < h.data_bytes) {
    return DataLossError(name + ": truncated: header says " + DescribeData(h) + ", file has " +
                         std::to_string(have));
  }
  return DataLossError(name + ": header says " + DescribeData(h) + ", file has " + std::to_string(have) +
                       " (" + std::to_string(have - h.data_bytes) + " bytes too many)");
}


std::string NpyHeaderFor(DType dtype, const Shape& shape) {
  std::string shape_repr = "(";
  for (int i = 0; i < shape.rank(); ++i) {
    if (i) shape_repr += ", ";
    shape_repr += std::to_string(shape[i]);
  }
  shape_repr += shape.rank() == 1 ? ",)" : ")";
  std::string dict = std::string("{'descr': '") + DescrOf(dtype) + "', 'fortran_order': False, 'shape': " +
                     shape_repr + ", }";
  if (shape.rank() > 0) {
    size_t digits = std::to_string(shape[0]).size();
    if (digits < kGrowthAxisMaxDigits) dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  // Version 1.0 while the header length fits its 2-byte field, as numpy does;
  // like numpy, an already aligned header still gets a full 64 bytes of padding.
  size_t prefix_len = 10;
  size_t header_len = 0;
  for (size_t prefix : {size_t{10}, size_t{12}}) {
    prefix_len = prefix;
    header_len = dict.size() + 1 + (kAlign - (prefix + dict.size() + 1) % kAlign);
    if (prefix == 12 || header_len <= 0xffff) break;
  }
  dict.append(header_len - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(prefix_len == 10 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < prefix_len - 8; ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xff);
  return out + dict;
}

}  // namespace opscope::npy_format
