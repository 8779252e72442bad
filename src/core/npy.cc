// numpy's .npy files and the .npz zip archives of .npy members that
// np.savez / np.savez_compressed write: the data behind the header
// (core/npy_header.h), read in one read or mapped in place, and the members
// of the zip container (core/zip_archive.h).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "core/file_util.h"
#include "core/npy_header.h"
#include "core/zip_archive.h"
#include "opscope/npy.h"

namespace opscope {
namespace {

using namespace npy_format;

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

StatusOr<Tensor> ReadMember(std::string_view zip, const zip::ZipEntry& e, const std::string& where) {
  if (e.flags & 1) return UnimplementedError(where + ": the member is encrypted");
  OPSCOPE_ASSIGN_OR_RETURN(std::string_view raw, zip::MemberData(zip, e, where));
  std::string inflated;
  std::string_view npy = raw;
  if (e.method == zip::kMethodDeflate) {
    // deflate cannot expand more than ~1032:1; a bigger claim is a corrupt directory.
    if (e.uncompressed / 1032 > e.compressed + 1) {
      return DataLossError(where + ": the zip directory claims " + std::to_string(e.uncompressed) +
                           " bytes from " + std::to_string(e.compressed) + " deflated ones");
    }
    // The declared size is checked against a limit and against the member's
    // own .npy header before memory for it is taken (a zip bomb claims little
    // in the header and much in the directory, or much in both).
    if (e.uncompressed > MaxInputBytes()) return InputTooLarge(where, e.uncompressed);
    OPSCOPE_ASSIGN_OR_RETURN(std::string start, zip::InflatePrefix(raw, std::min<uint64_t>(e.uncompressed, 12), where));
    OPSCOPE_ASSIGN_OR_RETURN(size_t prefix_len, PrefixLength(start, where));
    if (start.size() < prefix_len) return DataLossError(where + ": truncated inside the .npy header length");
    OPSCOPE_ASSIGN_OR_RETURN(size_t header_len, HeaderLength(start, prefix_len));
    if (header_len > e.uncompressed) {
      return DataLossError(where + ": truncated: the header says it is " + std::to_string(header_len) +
                           " bytes long, the zip directory says the member has " + std::to_string(e.uncompressed));
    }
    OPSCOPE_ASSIGN_OR_RETURN(std::string head, zip::InflatePrefix(raw, header_len, where));
    OPSCOPE_ASSIGN_OR_RETURN(NpyHeader h, ParseHeader(head, where));
    if (e.uncompressed - header_len != h.data_bytes) return SizeMismatch(h, e.uncompressed - header_len, where);
    inflated.resize(e.uncompressed);
    OPSCOPE_RETURN_IF_ERROR(zip::Inflate(raw, inflated.data(), inflated.size(), where));
    npy = inflated;
  } else if (e.method != zip::kMethodStored) {
    return UnimplementedError(where + ": compressed with " + zip::MethodName(e.method) +
                              "; opscope reads stored and deflated members (np.savez, np.savez_compressed)");
  } else if (e.compressed != e.uncompressed) {
    return DataLossError(where + ": stored member with compressed size " + std::to_string(e.compressed) +
                         " != uncompressed size " + std::to_string(e.uncompressed));
  }
  uint32_t crc = zip::Crc32(0, npy);
  if (crc != e.crc) {
    char msg[96];
    std::snprintf(msg, sizeof(msg), "CRC-32 mismatch (directory says %08x, data gives %08x)", e.crc, crc);
    return DataLossError(where + ": " + msg + ": the archive is corrupt");
  }
  return ParseNpyView(npy, where);
}

struct PreparedMember {
  zip::ZipMember zip;  // its name with .npy
  NpyParts npy;
  std::string deflated;  // when compressing
};

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
  StatusOr<std::vector<zip::ZipEntry>> entries = zip::ReadCentralDirectory(zip, path);
  if (!entries.ok() && zip.size() >= 22 && zip.substr(0, kMagicLen) == std::string_view(kMagic, kMagicLen)) {
    return InvalidArgumentError(path + ": a .npy file, where a .npz archive was expected");
  }
  if (!entries.ok()) return std::move(entries).status();
  NamedTensors out;
  for (const zip::ZipEntry& e : *entries) {
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
    m.zip.name = name + ".npy";
    OPSCOPE_ASSIGN_OR_RETURN(m.npy, PrepareNpy(tensor));
    m.zip.crc = zip::Crc32(zip::Crc32(0, m.npy.header), m.npy.bytes());
    m.zip.size = m.npy.header.size() + m.npy.bytes().size();
    if (compress) {
      OPSCOPE_ASSIGN_OR_RETURN(m.deflated, zip::Deflate({m.npy.header, m.npy.bytes()}, m.zip.name));
      m.zip.csize = m.deflated.size();
    } else {
      m.zip.csize = m.zip.size;
    }
    members.push_back(std::move(m));
  }
  const uint16_t method = compress ? zip::kMethodDeflate : zip::kMethodStored;
  std::vector<std::string> headers;  // owns the bytes `parts` points at
  headers.reserve(members.size() + 2);
  std::vector<std::string_view> parts;
  uint64_t offset = 0;
  for (PreparedMember& m : members) {
    // Bit 11: the name is UTF-8, for names beyond ASCII.
    bool ascii = std::all_of(m.zip.name.begin(), m.zip.name.end(), [](char c) { return (c & 0x80) == 0; });
    uint16_t flags = ascii ? 0 : (1 << 11);
    m.zip.offset = offset;
    headers.push_back(zip::LocalHeader(m.zip, method, flags));
    parts.push_back(headers.back());
    offset += headers.back().size();
    if (compress) {
      parts.push_back(m.deflated);
    } else {
      parts.push_back(m.npy.header);
      parts.push_back(m.npy.bytes());
    }
    offset += m.zip.csize;
  }
  std::string central;
  for (const PreparedMember& m : members) {
    bool ascii = std::all_of(m.zip.name.begin(), m.zip.name.end(), [](char c) { return (c & 0x80) == 0; });
    central += zip::CentralHeader(m.zip, method, ascii ? 0 : (1 << 11));
  }
  central += zip::EndRecords(members.size(), offset, central.size());
  parts.push_back(central);
  return WriteFileAtomicParts(path, parts);
}

}  // namespace opscope
