// The --attrs syntax of ops-debug run ("eps=1e-6,axis=-1,kernel_shape=[3,3]"):
// OpSchema::ParseAttrs by each op's declared types, then ValidateAttrs, as
// the op harness does. The first byte picks the op (every registered one, in
// name order), the rest is the flag's text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opscope/op.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> ops = opscope::OpRegistry::Global().Names();
  if (size < 1 || ops.empty()) return 0;
  const opscope::OpSchema* op = opscope::OpRegistry::Global().Find(ops[data[0] % ops.size()]);
  if (op == nullptr) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  opscope::StatusOr<opscope::Attrs> attrs = op->ParseAttrs(text);
  if (attrs.ok()) (void)op->ValidateAttrs(*attrs);
  return 0;
}
