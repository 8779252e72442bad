#include <cctype>
#include <charconv>
#include <limits>

#include "opscope/tensor.h"

namespace opscope {

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

std::string Shape::ToString() const {
  std::string s = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

std::vector<int64_t> Shape::ContiguousStrides() const {
  std::vector<int64_t> st(dims_.size());
  int64_t s = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    st[i] = s;
    // A zero dim lets the other dims' product pass Validate() and still
    // overflow here (npy_fuzzer: shape (8, 6, 800, 80, 8, 4, 8, 0, ...)): the
    // tensor holds nothing, so a stride saturated at the int64 limit is never used.
    if (__builtin_mul_overflow(s, std::max<int64_t>(dims_[i], 1), &s)) s = std::numeric_limits<int64_t>::max();
  }
  return st;
}

Status Shape::Validate() const {
  int64_t n = 1;
  for (size_t i = 0; i < dims_.size(); ++i) {
    int64_t d = dims_[i];
    if (d < 0) return InvalidArgumentError("shape " + ToString() + ": dim " + std::to_string(i) + " is negative");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      return InvalidArgumentError("shape " + ToString() + ": element count overflows int64");
    }
    n *= d;
  }
  return Status::Ok();
}

StatusOr<Shape> Shape::Parse(std::string_view text) {
  std::string_view t = text;
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  t = trim(t);
  auto bad = [&](const std::string& why) {
    return InvalidArgumentError("bad shape '" + std::string(text) + "': " + why +
                                " (expected e.g. [2,3,4] or 2x3x4)");
  };
  // One separator per shape: ',' inside brackets, 'x' or ',' without them,
  // so "[0x10]" is a bad dim, not [0,10].
  const std::string_view seps = !t.empty() && t.front() == '[' ? std::string_view(",")
                                : t.find(',') != std::string_view::npos ? std::string_view(",")
                                                                        : std::string_view("x");
  if (!t.empty() && t.front() == '[') {
    if (t.back() != ']') return bad("missing ']'");
    t = trim(t.substr(1, t.size() - 2));
  }
  std::vector<int64_t> dims;
  if (t.empty()) return Shape(dims);
  size_t pos = 0;
  while (pos <= t.size()) {
    size_t next = t.find_first_of(seps, pos);
    std::string_view tok = trim(t.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos));
    if (!tok.empty() && tok.front() == '-') return bad("dims must be >= 0");
    int64_t v = 0;
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec == std::errc::result_out_of_range) return bad("'" + std::string(tok) + "' is beyond 2^63-1");
    if (tok.empty() || ec != std::errc() || p != tok.data() + tok.size()) {
      return bad("'" + std::string(tok) + "' is not an integer");
    }
    dims.push_back(v);
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  Shape s(dims);
  OPSCOPE_RETURN_IF_ERROR(s.Validate());
  return s;
}

StatusOr<size_t> ByteSize(const Shape& shape, DType dtype) {
  OPSCOPE_RETURN_IF_ERROR(shape.Validate());
  const int64_t item = static_cast<int64_t>(DTypeSize(dtype));
  int64_t bytes = 0;
  if (__builtin_mul_overflow(shape.numel(), item, &bytes)) {
    return InvalidArgumentError(std::string(DTypeName(dtype)) + " " + shape.ToString() + " needs " +
                                std::to_string(shape.numel()) + " x " + std::to_string(item) +
                                " bytes, more than 2^63-1: too large to allocate");
  }
  return static_cast<size_t>(bytes);
}

StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  int r = std::max(a.rank(), b.rank());
  std::vector<int64_t> out(r);
  for (int i = 0; i < r; ++i) {
    int64_t da = i < r - a.rank() ? 1 : a[i - (r - a.rank())];
    int64_t db = i < r - b.rank() ? 1 : b[i - (r - b.rank())];
    if (da != db && da != 1 && db != 1) {
      return InvalidArgumentError("shapes " + a.ToString() + " and " + b.ToString() +
                                  " do not broadcast (dim " + std::to_string(i) + ": " +
                                  std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return Shape(out);
}

StatusOr<int> NormalizeAxis(int64_t axis, int rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max(rank, 1)) {
    return InvalidArgumentError("axis " + std::to_string(axis) + " is out of range for rank " +
                                std::to_string(rank));
  }
  return static_cast<int>(a);
}

}  // namespace opscope
