// Built as if against another version of include/opscope/: its CMake target
// defines OPSCOPE_PLUGIN_ABI_VERSION one past the real one. Loading must
// refuse the whole plugin, naming both versions, and register none of its ops.
#include "opscope/op.h"

namespace {

opscope::Status Copy(opscope::KernelContext& ctx) {
  for (int64_t i = 0; i < ctx.in(0).numel(); ++i) ctx.out(0).FlatSetFromDouble(i, ctx.in(0).FlatGetAsDouble(i));
  return opscope::Status::Ok();
}

}  // namespace

OPSCOPE_OP("abi_plugin_copy").Input("x").Output("y").SameShape().Reference(Copy).Kernel("cpu", Copy);
OPSCOPE_OP("abi_plugin_copy2").Input("x").Output("y").SameShape().Reference(Copy).Kernel("cpu", Copy);
