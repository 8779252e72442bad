#include "capture/output_canary.h"

#include <cstring>
#include <vector>

#include "core/text_format.h"

namespace opscope {

namespace {

bool HasCanaries(const Tensor& t) {
  return t.defined() && t.byte_offset() == static_cast<int64_t>(kCanaryBytes) &&
         t.buffer()->bytes() == t.nbytes() + 2 * kCanaryBytes;
}

Status CopyOut(const Tensor& t, std::vector<unsigned char>& bytes) {
  bytes.resize(t.buffer()->bytes());
  if (t.buffer()->host_accessible()) {
    std::memcpy(bytes.data(), t.buffer()->data(), bytes.size());
    return Status::Ok();
  }
  return t.device()->CopySync(bytes.data(), t.buffer()->data(), bytes.size(), CopyKind::kDeviceToHost);
}

// The value an element-sized run of bytes holds, as the output's dtype reads it.
std::string ValueText(DType dtype, const unsigned char* p) {
  auto one = Tensor::Empty(dtype, Shape({1}));
  if (!one.ok()) return "?";
  std::memcpy(one->raw_data(), p, DTypeSize(dtype));
  return ShortNum(one->FlatGetAsDouble(0));
}

}  // namespace

StatusOr<Tensor> EmptyWithCanaries(DType dtype, const Shape& shape, Device* device) {
  OPSCOPE_ASSIGN_OR_RETURN(const size_t bytes, ByteSize(shape, dtype));
  OPSCOPE_ASSIGN_OR_RETURN(Tensor whole, EmptyOnDevice(DType::kU8, Shape({static_cast<int64_t>(bytes + 2 * kCanaryBytes)}), device));
  std::vector<unsigned char> pattern(whole.nbytes(), kCanaryByte);
  if (device == nullptr || device->host_accessible()) std::memcpy(whole.raw_data(), pattern.data(), pattern.size());
  else OPSCOPE_RETURN_IF_ERROR(device->CopySync(whole.raw_data(), pattern.data(), pattern.size(), CopyKind::kHostToDevice));
  return Tensor(whole.buffer(), dtype, shape, shape.ContiguousStrides(), static_cast<int64_t>(kCanaryBytes));
}

StatusOr<std::optional<CanaryDamage>> CheckCanaries(const std::string& name, const Tensor& t) {
  if (!HasCanaries(t)) return std::optional<CanaryDamage>();
  std::vector<unsigned char> bytes;
  OPSCOPE_RETURN_IF_ERROR(CopyOut(t, bytes));
  const size_t width = t.element_size();
  const unsigned char* head = bytes.data();
  const unsigned char* tail = bytes.data() + kCanaryBytes + t.nbytes();
  auto changed = [&](const unsigned char* p) {
    for (size_t b = 0; b < width; ++b) {
      if (p[b] != kCanaryByte) return true;
    }
    return false;
  };
  CanaryDamage d;
  const int64_t slots = static_cast<int64_t>(kCanaryBytes / width);
  std::string first_after, first_before;
  for (int64_t k = 0; k < slots; ++k) {
    const unsigned char* p = tail + k * width;
    if (!changed(p)) continue;
    if (d.after++ == 0) first_after = name + "[" + std::to_string(t.numel() + k) + "], value " + ValueText(t.dtype(), p);
  }
  for (int64_t k = 1; k <= slots; ++k) {  // k elements before the start
    const unsigned char* p = head + kCanaryBytes - k * width;
    if (!changed(p)) continue;
    if (d.before++ == 0) first_before = name + "[-" + std::to_string(k) + "], value " + ValueText(t.dtype(), p);
  }
  if (d.before == 0 && d.after == 0) return std::optional<CanaryDamage>();
  auto count = [](int64_t n) { return std::to_string(n) + (n == 1 ? " element" : " elements"); };
  std::string text = name + ": ";
  if (d.after) text += count(d.after) + " written past the end (" + first_after + ")";
  if (d.before) text += std::string(d.after ? "; " : "") + count(d.before) + " written before the start (" + first_before + ")";
  d.text = text;
  return std::optional<CanaryDamage>(d);
}

}  // namespace opscope
