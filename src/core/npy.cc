// numpy's .npy format (numpy/lib/format.py, "NEP 1") and the .npz zip archive
// of .npy members that np.savez / np.savez_compressed write.
//
// .npy: "\x93NUMPY", major, minor, a little-endian header length (2 bytes in
// version 1.0, 4 in 2.0 and 3.0), then a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final '\n' so the data starts at a multiple of 64.
//
// bfloat16: numpy has no such type. ml_dtypes (what JAX and TensorFlow use to
// give numpy a bfloat16) registers it as a 2-byte type of kind 'V', so
// np.save of an ml_dtypes.bfloat16 array writes descr '<V2'. We write the same,
// so `np.load(f).view(ml_dtypes.bfloat16)` gives the values back, and plain
// numpy gets them with `(a.view('<u2').astype('<u4') << 16).view('<f4')`.
// Any 2-byte void descr ('<V2', '|V2', '>V2') reads back as kBF16.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include "core/file_util.h"
#include "opscope/npy.h"

namespace opscope {
namespace {

static_assert(std::endian::native == std::endian::little, "the .npy code assumes a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;
// numpy leaves room to rewrite the header in place when the first axis grows.
constexpr size_t kGrowthAxisMaxDigits = 21;

// ---------------------------------------------------------------- dtypes

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

struct Descr {
  DType dtype;
  bool swap;  // big-endian data on this little-endian host
};

// `size` is whatever the header says: its bits are counted in 64 bits, so
// '<f2115054602' is named, not an int overflow (found by npy_fuzzer).
std::string NumpyNameOf(char kind, int size) {
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

// ---------------------------------------------------------------- header literal

// The subset of Python literals a .npy header uses: a dict of str keys whose
// values are str, bool, int or tuples/lists (a list descr is a structured dtype).
struct PyField;
struct PyValue {
  enum Kind { kStr, kBool, kInt, kNone, kSeq, kDict } kind = kNone;
  std::string str;
  bool boolean = false;
  int64_t integer = 0;
  std::vector<PyValue> items;                          // kSeq
  bool list = false;                                   // kSeq: [..], not (..)
  // A struct, not std::pair: clang rejects a pair of the still incomplete
  // PyValue here (libstdc++'s pair traits need the complete type).
  std::vector<PyField> fields;  // kDict
};
struct PyField {
  std::string key;
  PyValue value;
};

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : text_(text) {}

  StatusOr<PyValue> ParseAll() {
    OPSCOPE_ASSIGN_OR_RETURN(PyValue v, Value(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the dict");
    return v;
  }

 private:
  Status Error(const std::string& why) const {
    return InvalidArgumentError(why + " at offset " + std::to_string(pos_));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::string_view(" \t\r\n").find(text_[pos_]) != std::string_view::npos) ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool EatWord(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  StatusOr<PyValue> Value(int depth) {
    if (depth > 32) return Error("nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end");
    char c = text_[pos_];
    PyValue v;
    if (c == '\'' || c == '"') {
      v.kind = PyValue::kStr;
      OPSCOPE_ASSIGN_OR_RETURN(v.str, String());
    } else if (c == '{') {
      v.kind = PyValue::kDict;
      ++pos_;
      while (!Eat('}')) {
        SkipSpace();
        if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return Error("expected a quoted key");
        OPSCOPE_ASSIGN_OR_RETURN(std::string key, String());
        if (!Eat(':')) return Error("expected ':' after key '" + key + "'");
        OPSCOPE_ASSIGN_OR_RETURN(PyValue item, Value(depth + 1));
        v.fields.push_back({std::move(key), std::move(item)});
        if (!Eat(',')) {
          if (!Eat('}')) return Error("expected ',' or '}'");
          break;
        }
      }
    } else if (c == '(' || c == '[') {
      char close = c == '(' ? ')' : ']';
      v.kind = PyValue::kSeq;
      v.list = c == '[';
      ++pos_;
      bool comma = false;
      while (!Eat(close)) {
        OPSCOPE_ASSIGN_OR_RETURN(PyValue item, Value(depth + 1));
        v.items.push_back(std::move(item));
        if (!Eat(',')) {
          if (!Eat(close)) return Error(std::string("expected ',' or '") + close + "'");
          break;
        }
        comma = true;
      }
      // As in Python, "(4)" is the number 4, not a tuple: only a comma (or
      // nothing, "()") makes one.
      if (!v.list && v.items.size() == 1 && !comma) return std::move(v.items[0]);
    } else if (EatWord("True")) {
      v.kind = PyValue::kBool;
      v.boolean = true;
    } else if (EatWord("False")) {
      v.kind = PyValue::kBool;
    } else if (EatWord("None")) {
      v.kind = PyValue::kNone;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind = PyValue::kInt;
      const char* begin = text_.data() + pos_;
      auto [end, ec] = std::from_chars(begin, text_.data() + text_.size(), v.integer);
      if (ec != std::errc()) return Error("integer out of range");
      pos_ += static_cast<size_t>(end - begin);
      if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;  // Python 2 longs
    } else {
      return Error(std::string("unexpected character '") + c + "'");
    }
    return v;
  }

  StatusOr<std::string> String() {
    char quote = text_[pos_++];
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out += text_[pos_++];
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    ++pos_;
    return out;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------- .npy header

struct NpyHeader {
  Descr descr;
  bool fortran_order = false;
  Shape shape;
  size_t data_offset = 0;  // bytes before the data
  size_t data_bytes = 0;
};

// Length of the fixed prefix (magic, version, header length) once the version is known.
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

uint32_t GetLE32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}
uint16_t GetLE16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(b[at]) | (static_cast<unsigned char>(b[at + 1]) << 8));
}
uint64_t GetLE64(std::string_view b, size_t at) {
  return static_cast<uint64_t>(GetLE32(b, at)) | (static_cast<uint64_t>(GetLE32(b, at + 4)) << 32);
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
  StatusOr<PyValue> parsed = LiteralParser(dict_text).ParseAll();
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

// A host tensor whose every byte the caller is about to overwrite.
StatusOr<Tensor> TensorToFill(const NpyHeader& h, const std::string& name) {
  StatusOr<std::shared_ptr<Buffer>> buffer = Buffer::AllocateHostUninitialized(h.data_bytes);
  if (!buffer.ok()) return std::move(buffer).status().WithContext(name + ": " + DescribeData(h));
  return Tensor(std::move(buffer).value(), h.descr.dtype, h.shape, h.shape.ContiguousStrides());
}

// Swaps the bytes of n elements of U in place (unaligned-safe).
template <typename U, typename Swap>
void ByteSwapAll(char* p, size_t n, Swap swap) {
  for (size_t i = 0; i < n; ++i) {
    U v;
    std::memcpy(&v, p + sizeof(U) * i, sizeof(U));
    v = swap(v);
    std::memcpy(p + sizeof(U) * i, &v, sizeof(U));
  }
}

// Makes the raw data read straight into `t` right for this host: byte order,
// canonical bools (a byte other than 0/1 is not a valid C++ bool), C order.
StatusOr<Tensor> FinishData(Tensor t, const NpyHeader& h) {
  const size_t n = static_cast<size_t>(t.numel());
  char* p = static_cast<char*>(t.raw_data());
  if (h.descr.swap) {
    switch (t.element_size()) {
      case 2: ByteSwapAll<uint16_t>(p, n, [](uint16_t v) { return __builtin_bswap16(v); }); break;
      case 4: ByteSwapAll<uint32_t>(p, n, [](uint32_t v) { return __builtin_bswap32(v); }); break;
      case 8: ByteSwapAll<uint64_t>(p, n, [](uint64_t v) { return __builtin_bswap64(v); }); break;
    }
  }
  if (h.descr.dtype == DType::kBool) {
    auto* b = reinterpret_cast<unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) b[i] = b[i] != 0;
  }
  if (!h.fortran_order || t.rank() < 2) return t;
  // Fortran order is C order of the reversed dims; reverse the axes back and copy.
  std::vector<int64_t> reversed(h.shape.dims().rbegin(), h.shape.dims().rend());
  Tensor column_major(t.buffer(), t.dtype(), Shape(reversed), Shape(reversed).ContiguousStrides());
  std::vector<int> perm(t.rank());
  for (int i = 0; i < t.rank(); ++i) perm[i] = t.rank() - 1 - i;
  OPSCOPE_ASSIGN_OR_RETURN(Tensor view, column_major.Permute(perm));
  return view.Clone();
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

// A host, contiguous version of `t` and its npy header: what a writer needs.
struct NpyParts {
  Tensor data;  // keeps the bytes alive
  std::string header;
  std::string_view bytes() const {
    return std::string_view(static_cast<const char*>(data.raw_data()), data.nbytes());
  }
};

StatusOr<NpyParts> PrepareNpy(const Tensor& t) {
  if (!t.defined()) return InvalidArgumentError("cannot write an undefined tensor");
  // Core cannot copy from a device: the caller brings the tensor home (ToHost).
  if (!t.on_host()) {
    return FailedPreconditionError("cannot write a " + t.Describe() + " that lives on a device the host cannot read: "
                                   "copy it to the host first (ToHost in opscope/device.h)");
  }
  OPSCOPE_ASSIGN_OR_RETURN(Tensor contiguous, t.Contiguous());
  std::string header = NpyHeaderFor(contiguous.dtype(), contiguous.shape());
  return NpyParts{std::move(contiguous), std::move(header)};
}

StatusOr<Tensor> ParseNpyView(std::string_view bytes, const std::string& name) {
  OPSCOPE_ASSIGN_OR_RETURN(NpyHeader h, ParseHeader(bytes, name));
  uint64_t have = bytes.size() - h.data_offset;
  if (have != h.data_bytes) return SizeMismatch(h, have, name);
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, TensorToFill(h, name));
  if (h.data_bytes) std::memcpy(t.raw_data(), bytes.data() + h.data_offset, h.data_bytes);
  return FinishData(std::move(t), h);
}

// ---------------------------------------------------------------- mapped .npy

// Below this, reading costs no more than mapping, and the file's pages stay private to us.
constexpr int64_t kAutoMapMinBytes = int64_t{1} << 20;

// Data that needs no change for this host (byte order, bool bytes, axis order)
// and sits as aligned as a host buffer would.
bool UsableInPlace(const NpyHeader& h) {
  return !h.descr.swap && h.descr.dtype != DType::kBool && (!h.fortran_order || h.shape.rank() < 2) &&
         h.data_offset % kAlign == 0 && h.data_bytes > 0;
}

// A tensor over `path`'s own pages, or an undefined one when the file cannot be
// used in place; the caller then reads it, and that path reports every error.
Tensor TryMapNpy(const std::string& path, int64_t min_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // never waits on a FIFO
  if (fd < 0) return Tensor();
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < std::max<int64_t>(min_bytes, 1)) {
    ::close(fd);
    return Tensor();
  }
  const size_t size = static_cast<size_t>(st.st_size);
  // Private and writable: the tensor may be written like a read one, copy on write.
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping holds the file
  if (base == MAP_FAILED) return Tensor();
  StatusOr<NpyHeader> h = ParseHeader(std::string_view(static_cast<const char*>(base), size), path);
  if (!h.ok() || size - h->data_offset != h->data_bytes || !UsableInPlace(*h)) {
    ::munmap(base, size);
    return Tensor();
  }
  ::madvise(base, size, MADV_WILLNEED);  // start reading ahead of the first use; advice only
  auto buffer = std::make_shared<Buffer>(static_cast<char*>(base) + h->data_offset, h->data_bytes,
                                         [base, size](void*) { ::munmap(base, size); });
  return Tensor(std::move(buffer), h->descr.dtype, h->shape, h->shape.ContiguousStrides());
}

// A regular file's bytes, mapped read-only; empty when it cannot be mapped.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // never waits on a FIFO
    if (fd < 0) return;
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = p;
        size_ = static_cast<size_t>(st.st_size);
        ::madvise(p, size_, MADV_SEQUENTIAL);
      }
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(data_, size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool ok() const { return data_ != nullptr; }
  std::string_view bytes() const { return std::string_view(static_cast<const char*>(data_), size_); }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// ---------------------------------------------------------------- zip (.npz)

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50;
constexpr uint32_t kEnd64LocatorSig = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kVersionZip64 = 45;
constexpr uint16_t kMadeByUnix = 3 << 8;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // fixed: same arrays, same bytes
// Python's zipfile switches to zip64 fields past 2^31-1 (some readers use signed 32-bit fields).
constexpr uint64_t kZip64Limit = 0x7fffffff;

void PutLE(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t Crc32(uint32_t crc, std::string_view bytes) {
  return static_cast<uint32_t>(
      crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

// Raw deflate (no zlib header), as zip method 8 wants.
StatusOr<std::string> Deflate(const std::vector<std::string_view>& pieces, const std::string& name) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return InternalError("zlib deflateInit2 failed for " + name);
  }
  std::string out;
  constexpr size_t kChunk = size_t{1} << 30;  // z_stream counts are 32-bit
  size_t produced = 0;
  for (size_t p = 0; p < pieces.size(); ++p) {
    std::string_view in = pieces[p];
    bool last_piece = p + 1 == pieces.size();
    do {
      size_t take = std::min(in.size(), kChunk);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
      zs.avail_in = static_cast<uInt>(take);
      in.remove_prefix(take);
      int flush = last_piece && in.empty() ? Z_FINISH : Z_NO_FLUSH;
      int rc;
      do {
        if (out.size() - produced < 65536) out.resize(std::max<size_t>(out.size() * 2, produced + (1 << 20)));
        size_t room = std::min(out.size() - produced, kChunk);
        zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
        zs.avail_out = static_cast<uInt>(room);
        rc = deflate(&zs, flush);
        produced += room - zs.avail_out;
        if (rc == Z_STREAM_ERROR) {
          deflateEnd(&zs);
          return InternalError("zlib deflate failed for " + name);
        }
      } while (zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    } while (!in.empty());
  }
  deflateEnd(&zs);
  out.resize(produced);
  return out;
}

Status Inflate(std::string_view in, char* out, size_t out_size, const std::string& name) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return InternalError("zlib inflateInit2 failed for " + name);
  constexpr size_t kChunk = size_t{1} << 30;
  size_t in_pos = 0, out_pos = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    size_t in_take = std::min(in.size() - in_pos, kChunk);
    size_t out_room = std::min(out_size - out_pos, kChunk);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_pos));
    zs.avail_in = static_cast<uInt>(in_take);
    zs.next_out = reinterpret_cast<Bytef*>(out + out_pos);
    zs.avail_out = static_cast<uInt>(out_room);
    rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_take - zs.avail_in;
    out_pos += out_room - zs.avail_out;
    if (rc == Z_OK || rc == Z_STREAM_END) continue;
    std::string why = rc != Z_BUF_ERROR ? std::string("corrupt deflated data (") + (zs.msg ? zs.msg : "zlib error") + ")"
                      : out_pos == out_size ? "deflated data is longer than the " + std::to_string(out_size) +
                                                  " bytes the zip directory says"
                                            : std::string("deflated data is truncated");
    inflateEnd(&zs);
    return DataLossError(name + ": " + why);
  }
  inflateEnd(&zs);
  if (out_pos != out_size) {
    return DataLossError(name + ": deflated data gives " + std::to_string(out_pos) + " bytes, the zip directory says " +
                         std::to_string(out_size));
  }
  return Status::Ok();
}

// The first `n` bytes the deflated data gives (fewer when it ends sooner),
// without inflating the rest: enough to read a member's .npy header before
// trusting its declared size.
StatusOr<std::string> InflatePrefix(std::string_view in, size_t n, const std::string& name) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return InternalError("zlib inflateInit2 failed for " + name);
  std::string out(n, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(std::min(in.size(), size_t{1} << 30));
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(n);
  int rc = Z_OK;
  while (zs.avail_out > 0 && rc == Z_OK) rc = inflate(&zs, Z_NO_FLUSH);
  const size_t got = n - zs.avail_out;
  const char* msg = zs.msg;
  inflateEnd(&zs);
  if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && got == n)) {
    return DataLossError(name + ": corrupt deflated data (" + (msg ? msg : "zlib error") + ")");
  }
  out.resize(got);
  return out;
}

struct ZipEntry {
  std::string name;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
};

// Replaces the 32-bit fields that hold the 0xffffffff marker by their values
// from the zip64 extra field, which lists them in this fixed order.
Status ApplyZip64Extra(std::string_view extra, ZipEntry& e, bool size32_max, bool csize32_max,
                       bool offset32_max, const std::string& where) {
  while (extra.size() >= 4) {
    uint16_t id = GetLE16(extra, 0), len = GetLE16(extra, 2);
    if (static_cast<size_t>(len) + 4 > extra.size()) break;
    if (id == kZip64ExtraId) {
      std::string_view d = extra.substr(4, len);
      size_t at = 0;
      auto take = [&](uint64_t& field, const char* what) -> Status {
        if (at + 8 > d.size()) return DataLossError(where + ": zip64 extra field lacks the " + what);
        field = GetLE64(d, at);
        at += 8;
        return Status::Ok();
      };
      if (size32_max) OPSCOPE_RETURN_IF_ERROR(take(e.uncompressed, "uncompressed size"));
      if (csize32_max) OPSCOPE_RETURN_IF_ERROR(take(e.compressed, "compressed size"));
      if (offset32_max) OPSCOPE_RETURN_IF_ERROR(take(e.local_offset, "local header offset"));
      return Status::Ok();
    }
    extra.remove_prefix(4 + len);
  }
  if (size32_max || csize32_max || offset32_max) {
    return DataLossError(where + ": a size or offset says 'see zip64 extra field', which is missing");
  }
  return Status::Ok();
}

StatusOr<std::vector<ZipEntry>> ReadCentralDirectory(std::string_view zip, const std::string& path) {
  auto corrupt = [&](const std::string& why) { return DataLossError(path + ": corrupt zip archive: " + why); };
  if (zip.size() < 22) {
    return InvalidArgumentError(path + ": not a .npz (zip) file: " + std::to_string(zip.size()) +
                                " bytes is too short for a zip archive");
  }
  // The end record is last, followed only by a comment of at most 65535 bytes.
  size_t end = std::string_view::npos;
  size_t lowest = zip.size() > 22 + 0xffff ? zip.size() - 22 - 0xffff : 0;
  for (size_t at = zip.size() - 22 + 1; at-- > lowest;) {
    if (GetLE32(zip, at) == kEndSig) {
      end = at;
      break;
    }
  }
  if (end == std::string_view::npos) {
    if (zip.substr(0, kMagicLen) == std::string_view(kMagic, kMagicLen)) {
      return InvalidArgumentError(path + ": a .npy file, where a .npz archive was expected");
    }
    return InvalidArgumentError(path + ": not a .npz (zip) file: no end-of-central-directory record");
  }
  uint64_t count = GetLE16(zip, end + 10);
  uint64_t cd_size = GetLE32(zip, end + 12);
  uint64_t cd_offset = GetLE32(zip, end + 16);
  if (end >= 20 && GetLE32(zip, end - 20) == kEnd64LocatorSig) {
    uint64_t end64 = GetLE64(zip, end - 20 + 8);
    if (zip.size() < 56 || end64 > zip.size() - 56 || GetLE32(zip, end64) != kEnd64Sig) return corrupt("bad zip64 end record");
    count = GetLE64(zip, end64 + 32);
    cd_size = GetLE64(zip, end64 + 40);
    cd_offset = GetLE64(zip, end64 + 48);
  }
  if (cd_offset > zip.size() || cd_size > zip.size() - cd_offset) {
    return corrupt("the central directory (" + std::to_string(cd_size) + " bytes at offset " +
                   std::to_string(cd_offset) + ") lies past the end of the " + std::to_string(zip.size()) +
                   "-byte file; is it truncated?");
  }
  std::vector<ZipEntry> entries;
  size_t at = cd_offset;
  const size_t cd_end = cd_offset + cd_size;
  for (uint64_t i = 0; i < count; ++i) {
    if (at + 46 > cd_end || GetLE32(zip, at) != kCentralSig) {
      return corrupt("central directory entry " + std::to_string(i) + " of " + std::to_string(count) + " is bad");
    }
    ZipEntry e;
    e.flags = GetLE16(zip, at + 8);
    e.method = GetLE16(zip, at + 10);
    e.crc = GetLE32(zip, at + 16);
    uint32_t csize = GetLE32(zip, at + 20), usize = GetLE32(zip, at + 24);
    uint16_t name_len = GetLE16(zip, at + 28), extra_len = GetLE16(zip, at + 30), comment_len = GetLE16(zip, at + 32);
    uint32_t offset = GetLE32(zip, at + 42);
    if (at + 46 + name_len + extra_len + comment_len > cd_end) return corrupt("central directory entry overruns");
    e.name = std::string(zip.substr(at + 46, name_len));
    e.compressed = csize;
    e.uncompressed = usize;
    e.local_offset = offset;
    OPSCOPE_RETURN_IF_ERROR(ApplyZip64Extra(zip.substr(at + 46 + name_len, extra_len), e, usize == 0xffffffffu,
                                            csize == 0xffffffffu, offset == 0xffffffffu,
                                            path + " member " + e.name));
    entries.push_back(std::move(e));
    at += 46 + name_len + extra_len + comment_len;
  }
  return entries;
}

// The member's stored bytes (compressed or not) inside the archive.
StatusOr<std::string_view> MemberData(std::string_view zip, const ZipEntry& e, const std::string& where) {
  if (e.local_offset > zip.size() || zip.size() - e.local_offset < 30 || GetLE32(zip, e.local_offset) != kLocalSig) {
    return DataLossError(where + ": no local file header at offset " + std::to_string(e.local_offset));
  }
  // The local header's own sizes may be zero (data descriptor) or zip64 markers:
  // the central directory is authoritative, as in Python's zipfile.
  uint64_t start = e.local_offset + 30 + GetLE16(zip, e.local_offset + 26) + GetLE16(zip, e.local_offset + 28);
  if (start > zip.size() || e.compressed > zip.size() - start) {
    return DataLossError(where + ": truncated: the zip directory says " + std::to_string(e.compressed) +
                         " bytes of data, the file has " +
                         std::to_string(start > zip.size() ? 0 : zip.size() - start) + " after its header");
  }
  return zip.substr(start, e.compressed);
}

std::string MethodName(uint16_t m) {
  switch (m) {
    case 12: return "bzip2";
    case 14: return "LZMA";
    case 93: return "Zstandard";
    case 99: return "AES encryption";
    default: return "method " + std::to_string(m);
  }
}

StatusOr<Tensor> ReadMember(std::string_view zip, const ZipEntry& e, const std::string& where) {
  if (e.flags & 1) return UnimplementedError(where + ": the member is encrypted");
  OPSCOPE_ASSIGN_OR_RETURN(std::string_view raw, MemberData(zip, e, where));
  std::string inflated;
  std::string_view npy = raw;
  if (e.method == kMethodDeflate) {
    // deflate cannot expand more than ~1032:1; a bigger claim is a corrupt directory.
    if (e.uncompressed / 1032 > e.compressed + 1) {
      return DataLossError(where + ": the zip directory claims " + std::to_string(e.uncompressed) +
                           " bytes from " + std::to_string(e.compressed) + " deflated ones");
    }
    // The declared size is checked against a limit and against the member's
    // own .npy header before memory for it is taken (a zip bomb claims little
    // in the header and much in the directory, or much in both).
    if (e.uncompressed > MaxInputBytes()) return InputTooLarge(where, e.uncompressed);
    OPSCOPE_ASSIGN_OR_RETURN(std::string start, InflatePrefix(raw, std::min<uint64_t>(e.uncompressed, 12), where));
    OPSCOPE_ASSIGN_OR_RETURN(size_t prefix_len, PrefixLength(start, where));
    if (start.size() < prefix_len) return DataLossError(where + ": truncated inside the .npy header length");
    OPSCOPE_ASSIGN_OR_RETURN(size_t header_len, HeaderLength(start, prefix_len));
    if (header_len > e.uncompressed) {
      return DataLossError(where + ": truncated: the header says it is " + std::to_string(header_len) +
                           " bytes long, the zip directory says the member has " + std::to_string(e.uncompressed));
    }
    OPSCOPE_ASSIGN_OR_RETURN(std::string head, InflatePrefix(raw, header_len, where));
    OPSCOPE_ASSIGN_OR_RETURN(NpyHeader h, ParseHeader(head, where));
    if (e.uncompressed - header_len != h.data_bytes) return SizeMismatch(h, e.uncompressed - header_len, where);
    inflated.resize(e.uncompressed);
    OPSCOPE_RETURN_IF_ERROR(Inflate(raw, inflated.data(), inflated.size(), where));
    npy = inflated;
  } else if (e.method != kMethodStored) {
    return UnimplementedError(where + ": compressed with " + MethodName(e.method) +
                              "; opscope reads stored and deflated members (np.savez, np.savez_compressed)");
  } else if (e.compressed != e.uncompressed) {
    return DataLossError(where + ": stored member with compressed size " + std::to_string(e.compressed) +
                         " != uncompressed size " + std::to_string(e.uncompressed));
  }
  uint32_t crc = Crc32(0, npy);
  if (crc != e.crc) {
    char msg[96];
    std::snprintf(msg, sizeof(msg), "CRC-32 mismatch (directory says %08x, data gives %08x)", e.crc, crc);
    return DataLossError(where + ": " + msg + ": the archive is corrupt");
  }
  return ParseNpyView(npy, where);
}

struct PreparedMember {
  std::string name;  // with .npy
  NpyParts npy;
  std::string deflated;  // when compressing
  uint32_t crc = 0;
  uint64_t size = 0, csize = 0, offset = 0;
};

std::string LocalHeader(const PreparedMember& m, uint16_t method, uint16_t flags) {
  // Sizes always go in a zip64 extra field, as numpy's savez does (force_zip64).
  std::string h;
  PutLE(h, kLocalSig, 4);
  PutLE(h, kVersionZip64, 2);
  PutLE(h, flags, 2);
  PutLE(h, method, 2);
  PutLE(h, 0, 2);  // time 00:00:00
  PutLE(h, kDosDate1980, 2);
  PutLE(h, m.crc, 4);
  PutLE(h, 0xffffffffu, 4);
  PutLE(h, 0xffffffffu, 4);
  PutLE(h, m.name.size(), 2);
  PutLE(h, 20, 2);
  h += m.name;
  PutLE(h, kZip64ExtraId, 2);
  PutLE(h, 16, 2);
  PutLE(h, m.size, 8);
  PutLE(h, m.csize, 8);
  return h;
}

std::string CentralHeader(const PreparedMember& m, uint16_t method, uint16_t flags) {
  bool big_sizes = m.size > kZip64Limit || m.csize > kZip64Limit;
  bool big_offset = m.offset > kZip64Limit;
  std::string extra;
  if (big_sizes || big_offset) {
    std::string fields;
    if (big_sizes) {
      PutLE(fields, m.size, 8);
      PutLE(fields, m.csize, 8);
    }
    if (big_offset) PutLE(fields, m.offset, 8);
    PutLE(extra, kZip64ExtraId, 2);
    PutLE(extra, fields.size(), 2);
    extra += fields;
  }
  std::string h;
  PutLE(h, kCentralSig, 4);
  PutLE(h, kMadeByUnix | kVersionZip64, 2);
  PutLE(h, kVersionZip64, 2);
  PutLE(h, flags, 2);
  PutLE(h, method, 2);
  PutLE(h, 0, 2);
  PutLE(h, kDosDate1980, 2);
  PutLE(h, m.crc, 4);
  PutLE(h, big_sizes ? 0xffffffffu : m.csize, 4);
  PutLE(h, big_sizes ? 0xffffffffu : m.size, 4);
  PutLE(h, m.name.size(), 2);
  PutLE(h, extra.size(), 2);
  PutLE(h, 0, 2);  // comment
  PutLE(h, 0, 2);  // disk
  PutLE(h, 0, 2);  // internal attributes
  PutLE(h, uint64_t{0100644} << 16, 4);  // a regular file, rw-r--r--
  PutLE(h, big_offset ? 0xffffffffu : m.offset, 4);
  return h + m.name + extra;
}

std::string EndRecords(uint64_t count, uint64_t cd_offset, uint64_t cd_size) {
  std::string out;
  if (count >= 0xffff || cd_offset > kZip64Limit || cd_size > kZip64Limit) {
    uint64_t end64_offset = cd_offset + cd_size;
    PutLE(out, kEnd64Sig, 4);
    PutLE(out, 44, 8);  // size of the rest of this record
    PutLE(out, kMadeByUnix | kVersionZip64, 2);
    PutLE(out, kVersionZip64, 2);
    PutLE(out, 0, 4);
    PutLE(out, 0, 4);
    PutLE(out, count, 8);
    PutLE(out, count, 8);
    PutLE(out, cd_size, 8);
    PutLE(out, cd_offset, 8);
    PutLE(out, kEnd64LocatorSig, 4);
    PutLE(out, 0, 4);
    PutLE(out, end64_offset, 8);
    PutLE(out, 1, 4);
  }
  PutLE(out, kEndSig, 4);
  PutLE(out, 0, 2);
  PutLE(out, 0, 2);
  PutLE(out, std::min<uint64_t>(count, 0xffff), 2);
  PutLE(out, std::min<uint64_t>(count, 0xffff), 2);
  PutLE(out, std::min<uint64_t>(cd_size, 0xffffffffu), 4);
  PutLE(out, std::min<uint64_t>(cd_offset, 0xffffffffu), 4);
  PutLE(out, 0, 2);
  return out;
}

}  // namespace

// ---------------------------------------------------------------- public API

StatusOr<Tensor> ParseNpy(const std::string& bytes, const std::string& name_for_errors) {
  return ParseNpyView(bytes, name_for_errors);
}

StatusOr<Tensor> ReadNpy(const std::string& path) { return ReadNpy(path, NpyReadOptions{}); }

StatusOr<Tensor> ReadNpy(const std::string& path, const NpyReadOptions& options) {
  // Opened first: a device or a FIFO is refused before anything maps or reads it.
  OPSCOPE_ASSIGN_OR_RETURN(InputFile f, InputFile::Open(path));
  if (options.mode != NpyReadMode::kRead) {
    Tensor mapped = TryMapNpy(path, options.mode == NpyReadMode::kAuto ? kAutoMapMinBytes : 1);
    if (mapped.defined()) return mapped;
  }
  // Read the header, then the data straight into the tensor in one read.
  std::string head(12, '\0');
  OPSCOPE_ASSIGN_OR_RETURN(size_t got, f.Read(head.data(), head.size()));
  head.resize(got);
  OPSCOPE_ASSIGN_OR_RETURN(size_t prefix_len, PrefixLength(head, path));
  if (head.size() < prefix_len) return DataLossError(path + ": truncated inside the .npy header length");
  OPSCOPE_ASSIGN_OR_RETURN(size_t header_len, HeaderLength(head, prefix_len));
  // A v2/v3 length field may claim 4 GiB: the file's size says no before any is taken.
  if (header_len > static_cast<uint64_t>(f.size())) {
    return DataLossError(path + ": truncated: the header says it is " + std::to_string(header_len) +
                         " bytes long, the file has " + std::to_string(f.size()));
  }
  size_t have = head.size();
  head.resize(std::max(header_len, have));
  if (header_len > have) {
    OPSCOPE_ASSIGN_OR_RETURN(size_t more, f.Read(head.data() + have, header_len - have));
    if (more != header_len - have) {
      return DataLossError(path + ": truncated: the header says it is " + std::to_string(header_len) +
                           " bytes long, the file has " + std::to_string(have + more));
    }
  }
  OPSCOPE_ASSIGN_OR_RETURN(NpyHeader h, ParseHeaderDict(std::string_view(head).substr(prefix_len, header_len - prefix_len),
                                                        header_len, path));
  // Before the tensor is allocated: a huge declared shape is a size mismatch.
  if (static_cast<uint64_t>(f.size()) - header_len != h.data_bytes) {
    return SizeMismatch(h, static_cast<uint64_t>(f.size()) - header_len, path);
  }
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, TensorToFill(h, path));
  // The few data bytes that came in with a short header.
  size_t early = std::min(head.size() - header_len, h.data_bytes);
  std::memcpy(t.raw_data(), head.data() + header_len, early);
  OPSCOPE_ASSIGN_OR_RETURN(size_t data_got, f.Read(static_cast<char*>(t.raw_data()) + early, h.data_bytes - early));
  char extra;
  OPSCOPE_ASSIGN_OR_RETURN(size_t extra_got, f.Read(&extra, 1));
  if (early + data_got != h.data_bytes || extra_got != 0 || head.size() - header_len > h.data_bytes) {
    return SizeMismatch(h, early + data_got + extra_got, path);
  }
  return FinishData(std::move(t), h);
}

std::string SerializeNpy(const Tensor& t) {
  StatusOr<NpyParts> parts = PrepareNpy(t);
  if (!parts.ok()) return std::string();
  return parts->header + std::string(parts->bytes());
}

Status WriteNpy(const std::string& path, const Tensor& t) {
  StatusOr<NpyParts> parts = PrepareNpy(t);
  if (!parts.ok()) return std::move(parts).status().WithContext(path);
  return WriteFileAtomicParts(path, {parts->header, parts->bytes()});
}

StatusOr<NamedTensors> ReadNpz(const std::string& path) {
  // Members are copied out of the mapped archive once, instead of the whole
  // archive being read into memory first; pipes and empty files are read.
  {
    // A device or a FIFO is refused, and an archive over the size limit.
    OPSCOPE_ASSIGN_OR_RETURN(InputFile f, InputFile::Open(path));
  }
  MappedFile mapped(path);
  std::string read;
  if (!mapped.ok()) {
    OPSCOPE_ASSIGN_OR_RETURN(read, ReadFile(path));
  }
  const std::string_view zip = mapped.ok() ? mapped.bytes() : std::string_view(read);
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<ZipEntry> entries, ReadCentralDirectory(zip, path));
  NamedTensors out;
  for (const ZipEntry& e : entries) {
    if (!e.name.empty() && e.name.back() == '/') continue;  // a folder entry
    std::string where = path + " member " + e.name;
    OPSCOPE_ASSIGN_OR_RETURN(Tensor t, ReadMember(zip, e, where));
    std::string key = e.name;
    if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    out.emplace_back(std::move(key), std::move(t));
  }
  return out;
}

Status WriteNpz(const std::string& path, const NamedTensors& arrays, bool compress) {
  std::vector<PreparedMember> members;
  members.reserve(arrays.size());
  std::set<std::string> seen;
  for (const auto& [name, tensor] : arrays) {
    if (name.empty()) return InvalidArgumentError(path + ": an array has an empty name");
    if (name.size() > 0xffff - 4) return InvalidArgumentError(path + ": array name is longer than zip allows");
    if (!seen.insert(name).second) return InvalidArgumentError(path + ": two arrays are named '" + name + "'");
    PreparedMember m;
    m.name = name + ".npy";
    OPSCOPE_ASSIGN_OR_RETURN(m.npy, PrepareNpy(tensor));
    m.crc = Crc32(Crc32(0, m.npy.header), m.npy.bytes());
    m.size = m.npy.header.size() + m.npy.bytes().size();
    if (compress) {
      OPSCOPE_ASSIGN_OR_RETURN(m.deflated, Deflate({m.npy.header, m.npy.bytes()}, m.name));
      m.csize = m.deflated.size();
    } else {
      m.csize = m.size;
    }
    members.push_back(std::move(m));
  }
  const uint16_t method = compress ? kMethodDeflate : kMethodStored;
  std::vector<std::string> headers;  // owns the bytes `parts` points at
  headers.reserve(members.size() + 2);
  std::vector<std::string_view> parts;
  uint64_t offset = 0;
  for (PreparedMember& m : members) {
    // Bit 11: the name is UTF-8, for names beyond ASCII.
    bool ascii = std::all_of(m.name.begin(), m.name.end(), [](char c) { return (c & 0x80) == 0; });
    uint16_t flags = ascii ? 0 : (1 << 11);
    m.offset = offset;
    headers.push_back(LocalHeader(m, method, flags));
    parts.push_back(headers.back());
    offset += headers.back().size();
    if (compress) {
      parts.push_back(m.deflated);
    } else {
      parts.push_back(m.npy.header);
      parts.push_back(m.npy.bytes());
    }
    offset += m.csize;
  }
  std::string central;
  for (const PreparedMember& m : members) {
    bool ascii = std::all_of(m.name.begin(), m.name.end(), [](char c) { return (c & 0x80) == 0; });
    central += CentralHeader(m, method, ascii ? 0 : (1 << 11));
  }
  central += EndRecords(members.size(), offset, central.size());
  parts.push_back(central);
  return WriteFileAtomicParts(path, parts);
}

}  // namespace opscope
