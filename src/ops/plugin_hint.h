// File: ops/plugin_hint.h
// An op name nobody registered may be a plugin's that was not loaded
// (`--op my_norm` without `--plugin`). The hint names the plugin libraries
// found beside the tool (its ../lib) and in the folders of OPSCOPE_PLUGINS,
// and which of them holds the name as a string: read as bytes, never loaded
// (a library is code; only --plugin runs it).
#pragma once

#include <string>
#include <string_view>

#include "opscope/op.h"

namespace opscope {

// "; a plugin may define it: --plugin build/lib/libmy_ops.so names 'my_norm'"
// or "; a plugin may define it (--plugin LIB.so; found: ...)"; empty when
// `op` is a name of the registry.
std::string PluginHintForUnknownOp(std::string_view op);

// OpRegistry::Lookup for a name a user typed (--op): an unknown name gets
// the hint (where no registered name is close, or a plugin holds it).
StatusOr<const OpSchema*> LookupTypedOp(std::string_view op);

}  // namespace opscope
