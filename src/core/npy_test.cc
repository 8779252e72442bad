#include "opscope/npy.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <climits>
#include <limits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/file_util.h"
#include "opscope/fill.h"

namespace opscope {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "opscope_npy_XXXXXX";
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }
  std::vector<std::string> List() const {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(path_.c_str())) {
      while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") names.push_back(n);
      }
      ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

Tensor Filled(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t = *Tensor::Empty(dtype, shape);
  FillSpec spec{.kind = dtype == DType::kBool ? FillKind::kInt : FillKind::kNormal, .seed = seed, .low = 0, .high = 1,
                .stddev = 50};
  EXPECT_TRUE(Fill(t, spec).ok());
  return t;
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// A .npy file as numpy would lay it out, from a header dict and raw data.
std::string NpyBytes(const std::string& dict, const std::string& data, int major = 1) {
  std::string body = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + body.size() + 1) % 64) body += ' ';
  body += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((body.size() >> (8 * i)) & 0xff);
  return out + body + data;
}

template <typename T>
std::string Raw(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return s;
}

template <typename T>
std::string RawBigEndian(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) {
    std::string le(reinterpret_cast<const char*>(&v), sizeof(T));
    s.append(le.rbegin(), le.rend());
  }
  return s;
}

TEST(Npy, RoundTripsEveryDtypeBitExactly) {
  for (DType dtype : kAllDTypes) {
    Tensor t = Filled(dtype, Shape({3, 5}), 11);
    std::string bytes = SerializeNpy(t);
    ASSERT_EQ(bytes.size() % 64, t.nbytes() % 64) << "data must start at a multiple of 64";
    auto back = ParseNpy(bytes, "mem.npy");
    ASSERT_TRUE(back.ok()) << DTypeName(dtype) << ": " << back.status().ToString();
    EXPECT_TRUE(SameBytes(t, *back)) << DTypeName(dtype);
  }
}

TEST(Npy, HeaderMatchesNumpyLayout) {
  // np.save(f, np.zeros((2, 3), np.float32)) starts with exactly these bytes
  // (numpy >= 1.24 leaves spare room after the dict for the first axis to grow).
  Tensor t = *Tensor::Zeros(DType::kF32, Shape({2, 3}));
  std::string bytes = SerializeNpy(t);
  std::string expected_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ASSERT_GE(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes.substr(0, 10), std::string("\x93NUMPY\x01\x00v\x00", 10));
  EXPECT_EQ(bytes.substr(10, expected_dict.size()), expected_dict);
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(bytes.size(), 128u + 24u);

  EXPECT_NE(SerializeNpy(*Tensor::Zeros(DType::kF64, Shape({}))).find("'shape': (), }"), std::string::npos);
  EXPECT_NE(SerializeNpy(*Tensor::Zeros(DType::kBool, Shape({4}))).find("'descr': '|b1', 'fortran_order': False, 'shape': (4,), }"),
            std::string::npos);
  EXPECT_NE(SerializeNpy(*Tensor::Zeros(DType::kBF16, Shape({1}))).find("'descr': '<V2'"), std::string::npos);
}

TEST(Npy, ScalarAndEmptyArrays) {
  Tensor scalar = *Tensor::Empty(DType::kF64, Shape({}));
  scalar.data<double>()[0] = -2.5;
  auto s = ParseNpy(SerializeNpy(scalar), "s.npy");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(s->FlatGetAsDouble(0), -2.5);

  for (Shape shape : {Shape({0}), Shape({3, 0, 2})}) {
    Tensor empty = *Tensor::Empty(DType::kI32, shape);
    auto e = ParseNpy(SerializeNpy(empty), "e.npy");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    EXPECT_EQ(e->shape(), shape);
    EXPECT_EQ(e->numel(), 0);
  }
}

TEST(Npy, WritesNonContiguousViewsInLogicalOrder) {
  Tensor t = Filled(DType::kF32, Shape({4, 6}), 3);
  Tensor transposed = *t.Permute({1, 0});
  auto back = ParseNpy(SerializeNpy(transposed), "t.npy");
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->shape(), Shape({6, 4}));
  for (int64_t i = 0; i < 6; ++i) {
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(back->GetAsDouble({i, j}), t.GetAsDouble({j, i}));
  }
}

TEST(Npy, ReadsFortranOrderIntoRowMajor) {
  // a = [[1, 2, 3], [4, 5, 6]] stored column by column.
  std::string file = NpyBytes("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                              Raw<int32_t>({1, 4, 2, 5, 3, 6}));
  auto t = ParseNpy(file, "f.npy");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(t->is_contiguous());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t->FlatGetAsDouble(i), i + 1);

  // Rank 3, shape (2, 3, 4): element [i,j,k] sits at i + 2j + 6k.
  std::string data;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) {
        int16_t v = static_cast<int16_t>(100 * i + 10 * j + k);
        data.append(reinterpret_cast<const char*>(&v), 2);
      }
  auto r3 = ParseNpy(NpyBytes("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3, 4), }", data), "f3.npy");
  ASSERT_TRUE(r3.ok()) << r3.status().ToString();
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(r3->GetAsDouble({i, j, k}), 100 * i + 10 * j + k);
}

TEST(Npy, ReadsBigEndianBySwapping) {
  auto f4 = ParseNpy(NpyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }",
                              RawBigEndian<float>({1.5f, -2.0f, 1e-3f})), "be.npy");
  ASSERT_TRUE(f4.ok()) << f4.status().ToString();
  EXPECT_EQ(f4->dtype(), DType::kF32);
  EXPECT_EQ(f4->data<float>()[0], 1.5f);
  EXPECT_EQ(f4->data<float>()[1], -2.0f);
  EXPECT_EQ(f4->data<float>()[2], 1e-3f);

  auto i8 = ParseNpy(NpyBytes("{'descr': '>i8', 'fortran_order': False, 'shape': (2,), }",
                              RawBigEndian<int64_t>({-3, int64_t{1} << 40})), "be.npy");
  ASSERT_TRUE(i8.ok());
  EXPECT_EQ(i8->data<int64_t>()[0], -3);
  EXPECT_EQ(i8->data<int64_t>()[1], int64_t{1} << 40);

  auto bf = ParseNpy(NpyBytes("{'descr': '>V2', 'fortran_order': False, 'shape': (1,), }",
                              RawBigEndian<uint16_t>({0x3fc0})), "be.npy");
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ(bf->dtype(), DType::kBF16);
  EXPECT_EQ(bf->FlatGetAsDouble(0), 1.5);
}

TEST(Npy, ReadsUnsignedWiderThanOneByteInBothByteOrders) {
  const uint64_t big = (uint64_t{1} << 63) + 3;  // beyond 2^53 and int64: must come back bit for bit
  auto u8 = ParseNpy(NpyBytes("{'descr': '>u8', 'fortran_order': False, 'shape': (2,), }",
                              RawBigEndian<uint64_t>({big, 7})), "be.npy");
  ASSERT_TRUE(u8.ok()) << u8.status().ToString();
  EXPECT_EQ(u8->dtype(), DType::kU64);
  EXPECT_EQ(u8->data<uint64_t>()[0], big);
  EXPECT_EQ(u8->data<uint64_t>()[1], 7u);
  auto u4 = ParseNpy(NpyBytes("{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", Raw<uint32_t>({4000000000u})),
                     "le.npy");
  ASSERT_TRUE(u4.ok()) << u4.status().ToString();
  EXPECT_EQ(u4->dtype(), DType::kU32);
  EXPECT_EQ(u4->data<uint32_t>()[0], 4000000000u);
  auto u2 = ParseNpy(NpyBytes("{'descr': '>u2', 'fortran_order': False, 'shape': (1,), }", RawBigEndian<uint16_t>({65000})),
                     "be.npy");
  ASSERT_TRUE(u2.ok()) << u2.status().ToString();
  EXPECT_EQ(u2->dtype(), DType::kU16);
  EXPECT_EQ(u2->data<uint16_t>()[0], 65000);
  EXPECT_NE(SerializeNpy(*u8).find("'descr': '<u8'"), std::string::npos);
  EXPECT_NE(SerializeNpy(*u4).find("'descr': '<u4'"), std::string::npos);
  EXPECT_NE(SerializeNpy(*u2).find("'descr': '<u2'"), std::string::npos);
}

TEST(Npy, ReadsVersions2And3AndPython2Headers) {
  for (int major : {2, 3}) {
    auto t = ParseNpy(NpyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", Raw<double>({7.25}), major),
                      "v.npy");
    ASSERT_TRUE(t.ok()) << major << ": " << t.status().ToString();
    EXPECT_EQ(t->FlatGetAsDouble(0), 7.25);
  }
  auto py2 = ParseNpy(NpyBytes("{'descr': '|u1', 'fortran_order': False, 'shape': (2L, 1L), }", "\x05\x06"), "p.npy");
  ASSERT_TRUE(py2.ok()) << py2.status().ToString();
  EXPECT_EQ(py2->shape(), Shape({2, 1}));
  EXPECT_EQ(py2->FlatGetAsDouble(1), 6);
}

TEST(Npy, NormalisesBoolBytes) {
  auto t = ParseNpy(NpyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", std::string("\x00\x02\x01", 3)),
                    "b.npy");
  ASSERT_TRUE(t.ok());
  const auto* raw = static_cast<const unsigned char*>(t->raw_data());
  EXPECT_EQ(raw[0], 0);
  EXPECT_EQ(raw[1], 1);
  EXPECT_EQ(raw[2], 1);
}

TEST(Npy, TruncatedDataNamesFileHeaderAndSize) {
  Tensor t = *Tensor::Zeros(DType::kF32, Shape({4, 4}));
  std::string bytes = SerializeNpy(t);
  std::string cut = bytes.substr(0, bytes.size() - 64 + 12);
  auto r = ParseNpy(cut, "x.npy");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message(), "x.npy: truncated: header says float32[4,4] (64 bytes of data), file has 12");

  TempDir dir;
  std::string path = dir.File("cut.npy");
  ASSERT_TRUE(WriteFileAtomic(path, cut).ok());
  auto f = ReadNpy(path);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(f.status().message(), path + ": truncated: header says float32[4,4] (64 bytes of data), file has 12");

  auto in_header = ParseNpy(bytes.substr(0, 40), "h.npy");
  ASSERT_FALSE(in_header.ok());
  EXPECT_EQ(in_header.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(in_header.status().message().find("h.npy: truncated"), std::string::npos) << in_header.status().message();

  auto extra = ParseNpy(bytes + "zz", "y.npy");
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("2 bytes too many"), std::string::npos) << extra.status().message();

  auto empty = ParseNpy("", "e.npy");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("e.npy: the file is empty"), std::string::npos);
}

TEST(Npy, BadMagicVersionAndHeader) {
  auto magic = ParseNpy("PK\x03\x04 this is a zip", "m.npy");
  ASSERT_FALSE(magic.ok());
  EXPECT_EQ(magic.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(magic.status().message().find("m.npy: not a .npy file"), std::string::npos);

  std::string v9 = NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", Raw<float>({1}));
  v9[6] = 9;
  auto version = ParseNpy(v9, "v.npy");
  ASSERT_FALSE(version.ok());
  EXPECT_NE(version.status().message().find("version 9.0"), std::string::npos) << version.status().message();

  for (const char* dict : {"{'descr': '<f4', 'fortran_order': False}", "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }",
                           "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
                           "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "not a dict",
                           "{'descr': '<f4', 'fortran_order': False, 'shape': (1,"}) {
    auto r = ParseNpy(NpyBytes(dict, Raw<float>({1})), "h.npy");
    ASSERT_FALSE(r.ok()) << dict;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << dict;
    EXPECT_NE(r.status().message().find("h.npy: bad .npy header"), std::string::npos) << r.status().message();
  }
}

// An empty array whose other dims multiply past int64 (npy_fuzzer's find):
// read as the empty tensor it is, its strides saturated instead of overflowing.
TEST(Npy, AnEmptyArrayWithHugeOtherDimsReadsAsEmpty) {
  auto r = ParseNpy(NpyBytes("{'descr': '<f8', 'fortran_order': False, "
                             "'shape': (8, 6, 800, 80, 8, 4, 8, 0, 0, 0, 8040, 80, 0, 0, 80, 80, 8), }", ""), "e.npy");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->numel(), 0);
  const std::vector<int64_t> st = Shape({0, int64_t{1} << 62, 8}).ContiguousStrides();
  EXPECT_EQ(st, (std::vector<int64_t>{std::numeric_limits<int64_t>::max(), 8, 1}));
}

TEST(Npy, UnsupportedDescrNamesFileAndDescr) {
  struct Case { const char* descr; const char* what; };
  for (Case c : {Case{"<c8", "complex64"}, Case{"<U3", "unicode string"}, Case{"|O", "Python objects"},
                 Case{"<m8", "timedelta64"}, Case{"<V4", "raw void"},
                 // Bits past an int: the fuzzer's find, once a signed overflow.
                 Case{"<f2115054602", "float16920436816"}, Case{"<i2147483647", "int17179869176"}}) {
    std::string dict = std::string("{'descr': '") + c.descr + "', 'fortran_order': False, 'shape': (1,), }";
    auto r = ParseNpy(NpyBytes(dict, std::string(8, '\0')), "odd.npy");
    ASSERT_FALSE(r.ok()) << c.descr;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::string("odd.npy: unsupported dtype '") + c.descr + "' (" + c.what + ")"),
              std::string::npos)
        << r.status().message();
  }
  auto structured = ParseNpy(NpyBytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                                      std::string(4, '\0')), "s.npy");
  ASSERT_FALSE(structured.ok());
  EXPECT_NE(structured.status().message().find("structured"), std::string::npos);
}

TEST(Npy, ReadAndWriteFiles) {
  TempDir dir;
  Tensor t = Filled(DType::kF16, Shape({7, 3}), 5);
  ASSERT_TRUE(WriteNpy(dir.File("h.npy"), t).ok());
  auto back = ReadNpy(dir.File("h.npy"));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(SameBytes(t, *back));

  auto missing = ReadNpy(dir.File("nope.npy"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir.File("nope.npy")), std::string::npos);

  auto folder = ReadNpy(dir.path());
  ASSERT_FALSE(folder.ok());
  EXPECT_NE(folder.status().message().find("is a directory"), std::string::npos);
}

// Whether `p` lies in a mapping of the file at `path`, by /proc/self/maps.
bool InMappingOf(const void* p, const std::string& path) {
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved)) return false;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto at = reinterpret_cast<uintptr_t>(p);
  while (std::getline(maps, line)) {
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) != 2) continue;
    size_t slash = line.find('/');
    if (at >= begin && at < end && slash != std::string::npos && line.substr(slash) == resolved) return true;
  }
  return false;
}

StatusOr<Tensor> ReadAs(const std::string& path, NpyReadMode mode) { return ReadNpy(path, NpyReadOptions{.mode = mode}); }

TEST(NpyMapped, MappedReadEqualsPlainReadAndViewsTheFile) {
  TempDir dir;
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBool) continue;  // bytes other than 0/1 must be rewritten: always read
    const std::string path = dir.File(std::string(DTypeName(dtype)) + ".npy");
    Tensor t = Filled(dtype, Shape({33, 17}), 3);
    ASSERT_TRUE(WriteNpy(path, t).ok());
    auto mapped = ReadAs(path, NpyReadMode::kMap);
    auto read = ReadAs(path, NpyReadMode::kRead);
    ASSERT_TRUE(mapped.ok() && read.ok()) << DTypeName(dtype);
    EXPECT_TRUE(SameBytes(t, *mapped)) << DTypeName(dtype);
    EXPECT_TRUE(SameBytes(t, *read)) << DTypeName(dtype);
    EXPECT_TRUE(mapped->is_contiguous());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(mapped->raw_data()) % 64, 0u) << "as aligned as a host buffer";
    EXPECT_TRUE(InMappingOf(mapped->raw_data(), path)) << DTypeName(dtype);
    EXPECT_FALSE(InMappingOf(read->raw_data(), path)) << DTypeName(dtype);
  }
}

TEST(NpyMapped, WritesStayPrivateAndTheMappingGoesWithTheTensor) {
  TempDir dir;
  const std::string path = dir.File("x.npy");
  Tensor t = Filled(DType::kF32, Shape({1000}), 4);
  ASSERT_TRUE(WriteNpy(path, t).ok());
  const void* where = nullptr;
  {
    auto mapped = ReadAs(path, NpyReadMode::kMap);
    ASSERT_TRUE(mapped.ok());
    where = mapped->raw_data();
    ASSERT_TRUE(InMappingOf(where, path));
    mapped->data<float>()[7] = 12345.0f;
    EXPECT_EQ(mapped->data<float>()[7], 12345.0f);
    auto again = ReadAs(path, NpyReadMode::kRead);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(SameBytes(t, *again)) << "a write to a mapped tensor reached the file";
  }
  EXPECT_FALSE(InMappingOf(where, path)) << "the mapping outlived its tensor";
}

TEST(NpyMapped, AutoMapsLargeFilesOnly) {
  TempDir dir;
  ASSERT_TRUE(WriteNpy(dir.File("small.npy"), Filled(DType::kF32, Shape({1000}), 1)).ok());
  ASSERT_TRUE(WriteNpy(dir.File("large.npy"), Filled(DType::kF32, Shape({1 << 19}), 2)).ok());  // 2 MiB
  auto small = ReadNpy(dir.File("small.npy"));
  auto large = ReadNpy(dir.File("large.npy"));
  ASSERT_TRUE(small.ok() && large.ok());
  EXPECT_FALSE(InMappingOf(small->raw_data(), dir.File("small.npy")));
  EXPECT_TRUE(InMappingOf(large->raw_data(), dir.File("large.npy")));
}

TEST(NpyMapped, DataThatNeedsChangingIsReadNotMapped) {
  TempDir dir;
  struct Case { const char* name; std::string bytes; std::vector<double> values; };
  // A 16-byte aligned header, as numpy before 1.14 wrote: 10 + 70 = 80 bytes.
  std::string dict16 = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  dict16.append(69 - dict16.size(), ' ');
  std::string old_layout = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(70) + '\0' + dict16 + "\n" +
                           Raw<float>({1.5f, -2, 3});
  const std::vector<Case> cases = {
      {"big.npy", NpyBytes("{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }", RawBigEndian<int32_t>({1, -2, 3})),
       {1, -2, 3}},
      {"fortran.npy", NpyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", Raw<float>({1, 2, 3, 4})),
       {1, 3, 2, 4}},
      {"bool.npy", NpyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", std::string("\x00\x02\x01", 3)),
       {0, 1, 1}},
      {"old.npy", old_layout, {1.5, -2, 3}},
  };
  for (const Case& c : cases) {
    const std::string path = dir.File(c.name);
    ASSERT_TRUE(WriteFileAtomic(path, c.bytes).ok());
    auto t = ReadAs(path, NpyReadMode::kMap);
    ASSERT_TRUE(t.ok()) << c.name << ": " << t.status().ToString();
    EXPECT_FALSE(InMappingOf(t->raw_data(), path)) << c.name;
    ASSERT_EQ(t->numel(), static_cast<int64_t>(c.values.size())) << c.name;
    for (size_t i = 0; i < c.values.size(); ++i) EXPECT_EQ(t->FlatGetAsDouble(i), c.values[i]) << c.name << " " << i;
  }
}

TEST(NpyMapped, DamagedFilesGiveTheSameErrorsAsAPlainRead) {
  TempDir dir;
  std::string whole = SerializeNpy(Filled(DType::kF32, Shape({64, 64}), 9));
  const std::vector<std::pair<const char*, std::string>> files = {
      {"cut_data.npy", whole.substr(0, whole.size() - 100)},
      {"extra.npy", whole + "zz"},
      {"cut_header.npy", whole.substr(0, 40)},
      {"empty.npy", ""},
      {"not_npy.npy", "PK\x03\x04 this is a zip archive, not an array"},
  };
  for (const auto& [name, bytes] : files) {
    const std::string path = dir.File(name);
    ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
    auto mapped = ReadAs(path, NpyReadMode::kMap);
    auto read = ReadAs(path, NpyReadMode::kRead);
    ASSERT_FALSE(mapped.ok()) << name;
    ASSERT_FALSE(read.ok()) << name;
    EXPECT_EQ(mapped.status().code(), read.status().code()) << name;
    EXPECT_EQ(mapped.status().message(), read.status().message()) << name;
    EXPECT_NE(mapped.status().message().find(path), std::string::npos) << mapped.status().message();
  }
  auto cut = ReadAs(dir.File("cut_data.npy"), NpyReadMode::kMap);
  EXPECT_EQ(cut.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(cut.status().message().find("truncated"), std::string::npos) << cut.status().message();
}

TEST(AtomicWrite, LeavesOnlyTheTargetAndReplacesIt) {
  TempDir dir;
  std::string path = dir.File("out.bin");
  ASSERT_TRUE(WriteFileAtomic(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "second version").ok());
  EXPECT_EQ(*ReadFile(path), "second version");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"out.bin"});
}

TEST(AtomicWrite, MissingFolderFailsCleanly) {
  TempDir dir;
  std::string path = dir.File("no/such/folder/x.npy");
  Status st = WriteNpy(path, *Tensor::Zeros(DType::kF32, Shape({2})));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_TRUE(dir.List().empty());
}

TEST(AtomicWrite, FailedWriteKeepsTargetAndRemovesTemp) {
  TempDir dir;
  std::string path = dir.File("keep.npy");
  ASSERT_TRUE(WriteFileAtomic(path, "old content").ok());

  // Make the write itself fail half way: a file size limit turns the big
  // write into EFBIG (with SIGXFSZ ignored) after the temp file exists.
  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Status st = WriteNpy(path, *Tensor::Zeros(DType::kF64, Shape({100000})));
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
  EXPECT_EQ(*ReadFile(path), "old content");
  EXPECT_EQ(dir.List(), std::vector<std::string>{"keep.npy"});

  Status undefined = WriteNpy(path, Tensor());
  ASSERT_FALSE(undefined.ok());
  EXPECT_EQ(*ReadFile(path), "old content");
}

TEST(Npz, RoundTripsStoredAndDeflatedInOrder) {
  TempDir dir;
  NamedTensors arrays;
  uint64_t seed = 1;
  for (DType dtype : kAllDTypes) arrays.emplace_back(std::string("a_") + DTypeName(dtype), Filled(dtype, Shape({9, 4}), seed++));
  arrays.emplace_back("scalar", Filled(DType::kF32, Shape({}), 99));
  arrays.emplace_back("empty", *Tensor::Zeros(DType::kI64, Shape({0, 5})));
  for (bool compress : {false, true}) {
    std::string path = dir.File(compress ? "c.npz" : "s.npz");
    ASSERT_TRUE(WriteNpz(path, arrays, compress).ok());
    auto back = ReadNpz(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ASSERT_EQ(back->size(), arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      EXPECT_EQ((*back)[i].first, arrays[i].first);
      EXPECT_TRUE(SameBytes((*back)[i].second, arrays[i].second)) << arrays[i].first;
    }
  }
  // Constant data compresses: the deflated archive must be much smaller.
  NamedTensors zeros{{"z", *Tensor::Zeros(DType::kF32, Shape({10000}))}};
  ASSERT_TRUE(WriteNpz(dir.File("zs.npz"), zeros, false).ok());
  ASSERT_TRUE(WriteNpz(dir.File("zc.npz"), zeros, true).ok());
  EXPECT_LT(ReadFile(dir.File("zc.npz"))->size() * 20, ReadFile(dir.File("zs.npz"))->size());
}

TEST(Npz, RejectsBadNamesAndCorruption) {
  TempDir dir;
  Tensor t = Filled(DType::kI32, Shape({64}), 4);
  EXPECT_FALSE(WriteNpz(dir.File("d.npz"), {{"x", t}, {"x", t}}).ok());
  EXPECT_FALSE(WriteNpz(dir.File("e.npz"), {{"", t}}).ok());

  std::string path = dir.File("ok.npz");
  ASSERT_TRUE(WriteNpz(path, {{"x", t}}).ok());
  std::string zip = *ReadFile(path);

  std::string flipped = zip;
  flipped[200] ^= 0x10;  // inside x.npy's data
  ASSERT_TRUE(WriteFileAtomic(dir.File("crc.npz"), flipped).ok());
  auto crc = ReadNpz(dir.File("crc.npz"));
  ASSERT_FALSE(crc.ok());
  EXPECT_EQ(crc.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(crc.status().message().find("member x.npy: CRC-32 mismatch"), std::string::npos) << crc.status().message();

  ASSERT_TRUE(WriteFileAtomic(dir.File("cut.npz"), zip.substr(0, zip.size() / 2)).ok());
  auto cut = ReadNpz(dir.File("cut.npz"));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("cut.npz"), std::string::npos);

  ASSERT_TRUE(WriteNpy(dir.File("plain.npy"), t).ok());
  auto npy = ReadNpz(dir.File("plain.npy"));
  ASSERT_FALSE(npy.ok());
  EXPECT_NE(npy.status().message().find("a .npy file, where a .npz archive was expected"), std::string::npos) << npy.status().message();

  std::string bzip = zip;
  bzip[8] = 12;  // local header method
  size_t cd = bzip.find(std::string("PK\x01\x02", 4));
  ASSERT_NE(cd, std::string::npos);
  bzip[cd + 10] = 12;  // central directory method
  ASSERT_TRUE(WriteFileAtomic(dir.File("bz.npz"), bzip).ok());
  auto bz = ReadNpz(dir.File("bz.npz"));
  ASSERT_FALSE(bz.ok());
  EXPECT_EQ(bz.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(bz.status().message().find("bzip2"), std::string::npos) << bz.status().message();
}

void Put(std::string& s, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

TEST(Npz, ReadsZip64CentralDirectoryAndEndRecord) {
  // Built by hand per the zip spec (APPNOTE 4.5.3): sizes and offset in the
  // zip64 extra field, and a zip64 end record with its locator.
  Tensor t = Filled(DType::kF32, Shape({3}), 8);
  std::string npy = SerializeNpy(t);
  std::string zip;
  Put(zip, 0x04034b50, 4); Put(zip, 45, 2); Put(zip, 0, 2); Put(zip, 0, 2); Put(zip, 0, 4);
  uint32_t crc = 0;
  {
    // CRC-32 (IEEE), bitwise: independent of the zlib call the reader uses.
    uint32_t c = 0xffffffffu;
    for (unsigned char b : npy) {
      c ^= b;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    crc = ~c;
  }
  Put(zip, crc, 4); Put(zip, npy.size(), 4); Put(zip, npy.size(), 4); Put(zip, 5, 2); Put(zip, 0, 2);
  zip += "w.npy";
  zip += npy;
  uint64_t cd_offset = zip.size();
  std::string extra;
  Put(extra, 1, 2); Put(extra, 24, 2); Put(extra, npy.size(), 8); Put(extra, npy.size(), 8); Put(extra, 0, 8);
  Put(zip, 0x02014b50, 4); Put(zip, 45, 2); Put(zip, 45, 2); Put(zip, 0, 2); Put(zip, 0, 2); Put(zip, 0, 4);
  Put(zip, crc, 4); Put(zip, 0xffffffff, 4); Put(zip, 0xffffffff, 4); Put(zip, 5, 2); Put(zip, extra.size(), 2);
  Put(zip, 0, 2); Put(zip, 0, 2); Put(zip, 0, 2); Put(zip, 0, 4); Put(zip, 0xffffffff, 4);
  zip += "w.npy" + extra;
  uint64_t cd_size = zip.size() - cd_offset;
  uint64_t end64 = zip.size();
  Put(zip, 0x06064b50, 4); Put(zip, 44, 8); Put(zip, 45, 2); Put(zip, 45, 2); Put(zip, 0, 4); Put(zip, 0, 4);
  Put(zip, 1, 8); Put(zip, 1, 8); Put(zip, cd_size, 8); Put(zip, cd_offset, 8);
  Put(zip, 0x07064b50, 4); Put(zip, 0, 4); Put(zip, end64, 8); Put(zip, 1, 4);
  Put(zip, 0x06054b50, 4); Put(zip, 0, 2); Put(zip, 0, 2); Put(zip, 0xffff, 2); Put(zip, 0xffff, 2);
  Put(zip, 0xffffffff, 4); Put(zip, 0xffffffff, 4); Put(zip, 0, 2);

  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.File("z64.npz"), zip).ok());
  auto r = ReadNpz(dir.File("z64.npz"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].first, "w");
  EXPECT_TRUE(SameBytes((*r)[0].second, t));
}

}  // namespace
}  // namespace opscope
