// File: opscope/plugin.h
// Loading custom ops from a user's shared library. A plugin is an ordinary
// .so built against libopscope.so whose OPSCOPE_OP registrations run when it
// is loaded; it needs no entry point of its own.
//
//   OPSCOPE_ASSIGN_OR_RETURN(const PluginInfo* p, LoadPlugin("build/lib/libmy_ops.so"));
//   // p->ops == {"my_bias_gelu", "my_norm"}: now in OpRegistry::Global()
//   OPSCOPE_RETURN_IF_ERROR(LoadPluginsFromEnv());  // OPSCOPE_PLUGINS=a.so:b.so
//
// A plugin that fails (dlopen error, no op, an op name already taken, built
// against another OPSCOPE_PLUGIN_ABI_VERSION than this library's, see
// opscope/op.h) leaves the registry as it was: the ops it added are removed
// and it is unloaded.
#pragma once

#include <string>
#include <vector>

#include "opscope/status.h"

namespace opscope {

struct PluginInfo {
  std::string name;              // file name: "libmy_ops.so"
  std::string path;              // as given to LoadPlugin; the source its ops record
  std::vector<std::string> ops;  // the ops it registered, sorted
};

// Loads one plugin. Loading the same file again returns the first load's info.
StatusOr<const PluginInfo*> LoadPlugin(const std::string& path);
// Loads every plugin named in OPSCOPE_PLUGINS (':'-separated); unset or empty
// loads nothing. The error names the variable and the failing plugin.
Status LoadPluginsFromEnv();
// The plugins loaded so far, in load order.
std::vector<PluginInfo> LoadedPlugins();

}  // namespace opscope
