// opscope's .npy/.npz against the real numpy (Debian's python3-numpy under
// /usr/bin/python3): numpy writes and opscope reads, opscope writes and numpy
// reads, and the float16/bfloat16 conversions against numpy's astype.
// A machine without numpy fails here on purpose: setup.sh installs it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "opscope/dtype.h"
#include "opscope/npy.h"
#include "opscope/tensor.h"

namespace opscope {
namespace {

constexpr char kPython[] = "/usr/bin/python3";

class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "opscope_numpy_XXXXXX";
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct PyResult {
  int exit_code = -1;
  std::string output;
};

// Runs `script` with /usr/bin/python3, the folder as argv[1]; stdout and stderr together.
PyResult RunPython(const TempDir& dir, const std::string& script) {
  std::string path = dir.File("script.py");
  std::ofstream(path) << script;
  PyResult r;
  std::string cmd = std::string(kPython) + " '" + path + "' '" + dir.path() + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The values both sides generate: exact in every dtype (k in [-125, 125]).
// Kept in step with value() in the Python scripts below.
constexpr char kPyCommon[] = R"PY(
import io, sys, os
import numpy as np
d = sys.argv[1]
NAMES = ['float64', 'float32', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool',
         'uint16', 'uint32', 'uint64']
def k_of(n):
    return (np.arange(n, dtype=np.int64) * 7919) % 251 - 125
def value(name, shape):
    k = k_of(int(np.prod(shape, dtype=np.int64))).reshape(shape)
    if name in ('float64', 'float32', 'float16'): return (k * 0.25).astype(name)
    if name == 'bfloat16': return (k * 0.25).astype(np.float32)
    if name == 'int64': return (k * 1000003).astype(np.int64)
    if name == 'int32': return (k * 1009).astype(np.int32)
    if name == 'int16': return (k * 200).astype(np.int16)
    if name == 'int8': return k.astype(np.int8)
    if name == 'uint8': return (k + 125).astype(np.uint8)
    if name == 'uint16': return ((k + 125) * 250).astype(np.uint16)
    if name == 'uint32': return ((k + 125) * 17000000).astype(np.uint32)
    if name == 'uint64':  # beyond 2^53: a double in between would lose the low bits
        u = (k + 125).astype(np.uint64)
        return u * np.uint64(1 << 56) + u
    return k > 0
def to_bf16_void(f32):  # exact values: the top 16 bits are the bfloat16
    return (np.ascontiguousarray(f32).view(np.uint32) >> 16).astype('<u2').view('V2')
def bf16_to_f32(v):
    return (np.ascontiguousarray(v).view('<u2').astype('<u4') << 16).view('<f4')
)PY";

double Expected(DType dtype, int64_t i) {
  int64_t k = (i * 7919) % 251 - 125;
  switch (dtype) {
    case DType::kF64: case DType::kF32: case DType::kF16: case DType::kBF16: return k * 0.25;
    case DType::kI64: return static_cast<double>(k * 1000003);
    case DType::kI32: return static_cast<double>(k * 1009);
    case DType::kI16: return static_cast<double>(k * 200);
    case DType::kI8: return static_cast<double>(k);
    case DType::kU8: return static_cast<double>(k + 125);
    case DType::kU16: return static_cast<double>((k + 125) * 250);
    case DType::kU32: return static_cast<double>((k + 125) * 17000000);
    case DType::kU64: return 0;  // not a double: see ExpectedU64
    case DType::kBool: return k > 0 ? 1.0 : 0.0;
  }
  return 0;
}

uint64_t ExpectedU64(int64_t i) {
  uint64_t u = static_cast<uint64_t>((i * 7919) % 251 - 125 + 125);
  return u * (uint64_t{1} << 56) + u;
}

Tensor ExpectedTensor(DType dtype, const Shape& shape) {
  Tensor t = *Tensor::Empty(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::kU64) t.data<uint64_t>()[i] = ExpectedU64(i);
    else t.FlatSetFromDouble(i, Expected(dtype, i));
  }
  return t;
}

// Every element equal to the shared formula; returns a description of the first few misses.
std::string CheckValues(const Tensor& t, DType dtype, const Shape& shape) {
  if (t.dtype() != dtype) return std::string("dtype ") + DTypeName(t.dtype()) + ", expected " + DTypeName(dtype);
  if (t.shape() != shape) return "shape " + t.shape().ToString() + ", expected " + shape.ToString();
  std::string misses;
  int count = 0;
  Tensor c = *t.Contiguous();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::kU64) {
      uint64_t got = c.data<uint64_t>()[i], want = ExpectedU64(i);
      if (got != want && ++count <= 3) {
        misses += "[" + std::to_string(i) + "] " + std::to_string(got) + " != " + std::to_string(want) + "; ";
      }
      continue;
    }
    double got = t.FlatGetAsDouble(i), want = Expected(dtype, i);
    if (got != want && ++count <= 3) {
      misses += "[" + std::to_string(i) + "] " + std::to_string(got) + " != " + std::to_string(want) + "; ";
    }
  }
  return count ? std::to_string(count) + " wrong values: " + misses : "";
}

TEST(NumpyInterop, PythonWithNumpyIsInstalled) {
  ASSERT_EQ(::access(kPython, X_OK), 0)
      << kPython << " is missing: these tests need Debian's python3 and python3-numpy (setup.sh installs them)";
  TempDir dir;
  PyResult r = RunPython(dir, "import numpy; print(numpy.__version__)\n");
  ASSERT_EQ(r.exit_code, 0) << "numpy does not import under " << kPython
                            << " (install Debian's python3-numpy; setup.sh does): " << r.output;
}

TEST(NumpyInterop, OpscopeReadsWhatNumpyWrites) {
  TempDir dir;
  PyResult r = RunPython(dir, std::string(kPyCommon) + R"PY(
from numpy.lib import format as fmt
def save_raw(path, descr, fortran, shape, raw):  # for layouts np.save cannot make ('>V2')
    with open(path, 'wb') as f:
        fmt.write_array_header_1_0(f, {'descr': descr, 'fortran_order': fortran, 'shape': shape})
        f.write(raw)
shape = (3, 4, 5)
arrays = {}
for name in NAMES:
    a = value(name, shape)
    if name == 'bfloat16':
        a = to_bf16_void(a)
        save_raw(os.path.join(d, 'be_bfloat16.npy'), '>V2', False, shape,
                 np.ascontiguousarray(a).view('<u2').byteswap().tobytes())
    else:
        np.save(os.path.join(d, 'be_' + name + '.npy'), a.astype(a.dtype.newbyteorder('>')))
    np.save(os.path.join(d, 'c_' + name + '.npy'), a)
    np.save(os.path.join(d, 'f_' + name + '.npy'), np.asfortranarray(a))
    arrays[name] = a
for version in [(2, 0), (3, 0)]:
    with open(os.path.join(d, 'v%d_float32.npy' % version[0]), 'wb') as f:
        fmt.write_array(f, value('float32', shape), version=version)
np.save(os.path.join(d, 'scalar.npy'), np.float64(-31.25))
np.save(os.path.join(d, 'empty.npy'), np.zeros((0, 3), np.float32))
np.savez(os.path.join(d, 'stored.npz'), **arrays)
np.savez_compressed(os.path.join(d, 'deflated.npz'), **arrays)
print('written')
)PY");
  ASSERT_EQ(r.exit_code, 0) << r.output;

  const Shape shape({3, 4, 5});
  for (DType dtype : kAllDTypes) {
    for (const char* layout : {"c_", "f_", "be_"}) {
      std::string path = dir.File(std::string(layout) + DTypeName(dtype) + ".npy");
      auto t = ReadNpy(path);
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      EXPECT_EQ(CheckValues(*t, dtype, shape), "") << path;
    }
  }
  for (int v : {2, 3}) {
    auto t = ReadNpy(dir.File("v" + std::to_string(v) + "_float32.npy"));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(CheckValues(*t, DType::kF32, shape), "") << "version " << v;
  }
  auto scalar = ReadNpy(dir.File("scalar.npy"));
  ASSERT_TRUE(scalar.ok()) << scalar.status().ToString();
  EXPECT_EQ(scalar->rank(), 0);
  EXPECT_EQ(scalar->FlatGetAsDouble(0), -31.25);
  auto empty = ReadNpy(dir.File("empty.npy"));
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->shape(), Shape({0, 3}));

  for (const char* npz : {"stored.npz", "deflated.npz"}) {
    auto arrays = ReadNpz(dir.File(npz));
    ASSERT_TRUE(arrays.ok()) << arrays.status().ToString();
    ASSERT_EQ(arrays->size(), std::size(kAllDTypes)) << npz;
    for (size_t i = 0; i < arrays->size(); ++i) {
      EXPECT_EQ((*arrays)[i].first, DTypeName(kAllDTypes[i])) << npz;
      EXPECT_EQ(CheckValues((*arrays)[i].second, kAllDTypes[i], shape), "") << npz << " " << (*arrays)[i].first;
    }
  }
}

TEST(NumpyInterop, NumpyReadsWhatOpscopeWrites) {
  TempDir dir;
  const Shape shape({3, 4, 5});
  NamedTensors arrays;
  for (DType dtype : kAllDTypes) {
    Tensor t = ExpectedTensor(dtype, shape);
    ASSERT_TRUE(WriteNpy(dir.File(std::string("c_") + DTypeName(dtype) + ".npy"), t).ok());
    arrays.emplace_back(DTypeName(dtype), t);
  }
  Tensor scalar = *Tensor::Empty(DType::kF64, Shape({}));
  scalar.data<double>()[0] = -31.25;
  ASSERT_TRUE(WriteNpy(dir.File("scalar.npy"), scalar).ok());
  ASSERT_TRUE(WriteNpy(dir.File("empty.npy"), *Tensor::Zeros(DType::kF32, Shape({0, 3}))).ok());
  ASSERT_TRUE(WriteNpz(dir.File("stored.npz"), arrays, false).ok());
  ASSERT_TRUE(WriteNpz(dir.File("deflated.npz"), arrays, true).ok());
  // More members than the 16-bit count of a plain zip: needs the zip64 end record.
  NamedTensors many;
  for (int i = 0; i < 65600; ++i) {
    Tensor t = *Tensor::Empty(DType::kI32, Shape({}));
    t.data<int32_t>()[0] = i;
    many.emplace_back("m" + std::to_string(i), t);
  }
  ASSERT_TRUE(WriteNpz(dir.File("many.npz"), many, false).ok());

  PyResult r = RunPython(dir, std::string(kPyCommon) + R"PY(
bad = []
def check(label, a, name, shape):
    want = value(name, shape)
    if name == 'bfloat16':
        if a.dtype != np.dtype('V2'):
            bad.append('%s: dtype %s, expected V2' % (label, a.dtype)); return
        a = bf16_to_f32(a).reshape(a.shape)
    elif a.dtype != want.dtype:
        bad.append('%s: dtype %s, expected %s' % (label, a.dtype, want.dtype)); return
    if a.shape != tuple(shape):
        bad.append('%s: shape %s, expected %s' % (label, a.shape, shape)); return
    if not np.array_equal(a, want):
        bad.append('%s: %d wrong values' % (label, int(np.sum(a != want))))
shape = (3, 4, 5)
for name in NAMES:
    path = os.path.join(d, 'c_' + name + '.npy')
    a = np.load(path)
    check(path, a, name, shape)
    if name != 'bfloat16':  # byte for byte what np.save writes
        buf = io.BytesIO(); np.save(buf, a)
        if buf.getvalue() != open(path, 'rb').read():
            bad.append(path + ': bytes differ from np.save')
s = np.load(os.path.join(d, 'scalar.npy'))
if s.shape != () or s.dtype != np.float64 or s != -31.25: bad.append('scalar: %r' % s)
e = np.load(os.path.join(d, 'empty.npy'))
if e.shape != (0, 3) or e.dtype != np.float32: bad.append('empty: %r %s' % (e.shape, e.dtype))
for npz in ('stored.npz', 'deflated.npz'):
    with np.load(os.path.join(d, npz)) as z:
        if z.files != NAMES: bad.append('%s: members %s' % (npz, z.files))
        for name in NAMES: check(npz + ':' + name, z[name], name, shape)
import zipfile
with zipfile.ZipFile(os.path.join(d, 'deflated.npz')) as zf:
    if any(i.compress_type != zipfile.ZIP_DEFLATED for i in zf.infolist()): bad.append('deflated.npz: not deflated')
    if zf.testzip() is not None: bad.append('deflated.npz: bad CRC')
with zipfile.ZipFile(os.path.join(d, 'stored.npz')) as zf:
    if any(i.compress_type != zipfile.ZIP_STORED for i in zf.infolist()): bad.append('stored.npz: not stored')
with np.load(os.path.join(d, 'many.npz')) as z:
    if len(z.files) != 65600: bad.append('many.npz: %d members' % len(z.files))
    for i in list(range(0, 65600, 997)) + [65534, 65535, 65536, 65599]:
        if z['m%d' % i] != i: bad.append('many.npz: m%d = %r' % (i, z['m%d' % i]))
print('\n'.join(bad) if bad else 'OK')
sys.exit(1 if bad else 0)
)PY");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "OK\n");
}

// float32 bit patterns that exercise every rounding class of float -> half.
std::vector<uint32_t> Float32Patterns() {
  std::vector<uint32_t> p;
  for (uint32_t sign : {0u, 0x80000000u}) {
    // Each finite half, the midpoint to the next one, and one ulp either side of it.
    for (uint32_t h = 0; h < 0x7c00; ++h) {
      float lo = Half::ToFloat(static_cast<uint16_t>(h)), hi = Half::ToFloat(static_cast<uint16_t>(h + 1));
      float mid = static_cast<float>((static_cast<double>(lo) + hi) / 2);
      for (float f : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
        p.push_back(sign | std::bit_cast<uint32_t>(f));
      }
    }
    // Every exponent with mantissas around each possible rounding bit.
    for (uint32_t e = 0; e < 256; ++e) {
      for (int j = 0; j < 23; ++j) {
        for (uint32_t m : {1u << j, (1u << j) - 1, (1u << j) + 1, (3u << j) & 0x7fffffu, 0x7fffffu ^ (1u << j)}) {
          p.push_back(sign | (e << 23) | (m & 0x7fffffu));
        }
      }
    }
  }
  uint64_t s = 0x9e3779b97f4a7c15ull;  // xorshift: arbitrary patterns, NaN payloads included
  for (int i = 0; i < 2000000; ++i) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    p.push_back(static_cast<uint32_t>(s >> 32));
  }
  return p;
}

std::vector<uint64_t> Float64Patterns() {
  std::vector<uint64_t> p;
  for (uint64_t sign : {0ull, 0x8000000000000000ull}) {
    for (uint32_t h = 0; h < 0x7c00; ++h) {
      double lo = Half::ToFloat(static_cast<uint16_t>(h)), hi = Half::ToFloat(static_cast<uint16_t>(h + 1));
      double mid = (lo + hi) / 2;
      // Just above the tie, below float's resolution: rounding through float would miss it.
      double above = mid + std::ldexp(std::fabs(mid), -40);
      for (double v : {lo, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e300), above}) {
        p.push_back(sign | std::bit_cast<uint64_t>(v));
      }
    }
    for (uint64_t e : {0ull, 1ull, 0x3e5ull, 0x3e6ull, 0x3f0ull, 0x3ffull, 0x40eull, 0x40full, 0x7feull, 0x7ffull}) {
      for (uint64_t m : {0ull, 1ull, 0x8000000000000ull, 0xfffffffffffffull, 0x20000000000ull, 0x40000000000ull}) {
        p.push_back(sign | (e << 52) | m);
      }
    }
  }
  uint64_t s = 0x2545f4914f6cdd1dull;
  for (int i = 0; i < 500000; ++i) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    // Exponents near the half range, so most draws land in interesting territory.
    uint64_t exp = 0x3e0 + (s >> 58) % 0x40;
    p.push_back((s & 0x800fffffffffffffull) | (exp << 52));
  }
  return p;
}

template <typename Bits>
Tensor TensorOfBits(DType dtype, const std::vector<Bits>& bits) {
  Tensor t = *Tensor::Empty(dtype, Shape({static_cast<int64_t>(bits.size())}));
  std::memcpy(t.raw_data(), bits.data(), bits.size() * sizeof(Bits));
  return t;
}

TEST(NumpyInterop, HalfConversionsAreBitIdenticalToNumpy) {
  TempDir dir;
  std::vector<uint32_t> p32 = Float32Patterns();
  std::vector<uint64_t> p64 = Float64Patterns();
  ASSERT_TRUE(WriteNpy(dir.File("p32.npy"), TensorOfBits(DType::kF32, p32)).ok());
  ASSERT_TRUE(WriteNpy(dir.File("p64.npy"), TensorOfBits(DType::kF64, p64)).ok());
  PyResult r = RunPython(dir, R"PY(
import sys, os
import numpy as np
d = sys.argv[1]
with np.errstate(all='ignore'):
    np.save(os.path.join(d, 'h32.npy'), np.load(os.path.join(d, 'p32.npy')).astype(np.float16))
    np.save(os.path.join(d, 'h64.npy'), np.load(os.path.join(d, 'p64.npy')).astype(np.float16))
    np.save(os.path.join(d, 'all_halves.npy'), np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32))
)PY");
  ASSERT_EQ(r.exit_code, 0) << r.output;

  auto h32 = ReadNpy(dir.File("h32.npy"));
  auto h64 = ReadNpy(dir.File("h64.npy"));
  auto all = ReadNpy(dir.File("all_halves.npy"));
  ASSERT_TRUE(h32.ok() && h64.ok() && all.ok());
  ASSERT_EQ(h32->numel(), static_cast<int64_t>(p32.size()));
  ASSERT_EQ(h64->numel(), static_cast<int64_t>(p64.size()));
  ASSERT_EQ(all->numel(), 65536);

  size_t bad32 = 0, bad64 = 0, bad_to_float = 0;
  std::string first;
  for (size_t i = 0; i < p32.size(); ++i) {
    uint16_t ours = Half::FromFloat(std::bit_cast<float>(p32[i])), numpy = h32->data<Half>()[i].bits;
    if (ours != numpy && bad32++ < 3) {
      char line[96];
      std::snprintf(line, sizeof(line), "f32 %08x: ours %04x numpy %04x; ", p32[i], ours, numpy);
      first += line;
    }
  }
  for (size_t i = 0; i < p64.size(); ++i) {
    uint16_t ours = Half::FromDouble(std::bit_cast<double>(p64[i])), numpy = h64->data<Half>()[i].bits;
    if (ours != numpy && bad64++ < 3) {
      char line[96];
      std::snprintf(line, sizeof(line), "f64 %016llx: ours %04x numpy %04x; ", static_cast<unsigned long long>(p64[i]),
                    ours, numpy);
      first += line;
    }
  }
  for (uint32_t h = 0; h < 65536; ++h) {
    uint32_t ours = std::bit_cast<uint32_t>(Half::ToFloat(static_cast<uint16_t>(h)));
    uint32_t numpy = std::bit_cast<uint32_t>(all->data<float>()[h]);
    if (ours != numpy && bad_to_float++ < 3) first += "half " + std::to_string(h) + " -> float differs; ";
  }
  EXPECT_EQ(bad32, 0u) << first;
  EXPECT_EQ(bad64, 0u) << first;
  EXPECT_EQ(bad_to_float, 0u) << first;
  // The f64 -> f16 path of CastTo must agree as well (one rounding, not two).
  Tensor cast = *TensorOfBits(DType::kF64, p64).CastTo(DType::kF16);
  EXPECT_EQ(std::memcmp(cast.raw_data(), h64->raw_data(), cast.nbytes()), 0);
}

TEST(NumpyInterop, BFloat16FilesRoundToNearestEvenAsNumpyComputesIt) {
  TempDir dir;
  std::vector<uint32_t> p32 = Float32Patterns();
  Tensor f = TensorOfBits(DType::kF32, p32);
  ASSERT_TRUE(WriteNpy(dir.File("p.npy"), f).ok());
  ASSERT_TRUE(WriteNpy(dir.File("b.npy"), *f.CastTo(DType::kBF16)).ok());
  // The reference is computed by numpy in integer arithmetic, apart from opscope.
  PyResult r = RunPython(dir, R"PY(
import sys, os
import numpy as np
d = sys.argv[1]
u = np.load(os.path.join(d, 'p.npy')).view(np.uint32).astype(np.uint64)
ref = ((u + 0x7fff + ((u >> 16) & 1)) >> 16) & 0xffff
nan = (u & 0x7fffffff) > 0x7f800000
ref[nan] = (u[nan] >> 16) | 0x40
b = np.load(os.path.join(d, 'b.npy'))
if b.dtype != np.dtype('V2') or b.shape != u.shape:
    print('dtype/shape', b.dtype, b.shape); sys.exit(1)
got = b.view('<u2').astype(np.uint64)
wrong = np.nonzero(got != ref)[0]
for i in wrong[:3]: print('f32 %08x: file %04x numpy %04x' % (u[i], got[i], ref[i]))
print('mismatches', len(wrong), 'of', len(u))
sys.exit(1 if len(wrong) else 0)
)PY");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "mismatches 0 of " + std::to_string(p32.size()) + "\n");
}

}  // namespace
}  // namespace opscope
