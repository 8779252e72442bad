#include "opscope/plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>

#include "opscope/op.h"
#include "ops/registry_internal.h"

namespace opscope {

namespace {

struct LoadedPlugin {
  PluginInfo info;
  std::string real_path;
  void* handle = nullptr;  // never closed: its ops' kernels live in it
};

struct PluginTable {
  std::mutex mu;  // one load at a time: the registry's current source is global
  std::vector<std::unique_ptr<LoadedPlugin>> plugins;
};

PluginTable& Table() {
  static PluginTable* table = new PluginTable();  // never destroyed, like the registry
  return *table;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

// Restores the registry's source even when loading fails half-way.
class ScopedSource {
 public:
  explicit ScopedSource(const std::string& source) { registry_internal::SetCurrentSource(source); }
  ~ScopedSource() { registry_internal::SetCurrentSource("builtin"); }
};

}  // namespace

StatusOr<const PluginInfo*> LoadPlugin(const std::string& path) {
  const std::string name = BaseName(path);
  if (path.empty()) return InvalidArgumentError("plugin: empty path");
  PluginTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mu);
  const std::string real = RealPath(path);
  for (const auto& p : table.plugins) {
    if (p->real_path == real) return &p->info;
  }

  OpRegistry& registry = OpRegistry::Global();
  // Errors already waiting belong to someone else: set them aside and put them back.
  std::vector<Status> earlier = registry_internal::TakePendingErrors();
  const std::vector<std::string> before = registry.Names();

  void* handle;
  {
    ScopedSource source(path);
    dlerror();
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  std::vector<Status> errors = registry_internal::TakePendingErrors();
  for (Status& s : earlier) registry_internal::AddPendingError(std::move(s));

  if (handle == nullptr) {
    const char* why = dlerror();
    return InvalidArgumentError("plugin " + name + ": cannot load: " + (why ? why : "dlopen failed"));
  }

  std::vector<std::string> after = registry.Names();
  std::vector<std::string> added;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::back_inserter(added));

  if (!errors.empty()) {
    for (const std::string& op : added) registry_internal::Unregister(op);
    dlclose(handle);
    // Each op of a plugin of another ABI says the same: say it once.
    std::vector<std::string> messages;
    for (const Status& e : errors) {
      if (std::find(messages.begin(), messages.end(), e.message()) == messages.end()) messages.push_back(e.message());
    }
    std::string msg = "plugin " + name + ": ";
    for (size_t i = 0; i < messages.size(); ++i) msg += (i ? "; " : "") + messages[i];
    return InvalidArgumentError(msg);
  }
  if (added.empty()) {
    dlclose(handle);
    return InvalidArgumentError("plugin " + name + ": registers no op (expected OPSCOPE_OP definitions in " +
                                path + ")");
  }

  auto loaded = std::make_unique<LoadedPlugin>();
  loaded->info = PluginInfo{name, path, std::move(added)};
  loaded->real_path = real;
  loaded->handle = handle;
  table.plugins.push_back(std::move(loaded));
  return &table.plugins.back()->info;
}

Status LoadPluginsFromEnv() {
  const char* env = std::getenv("OPSCOPE_PLUGINS");
  if (env == nullptr) return Status::Ok();
  std::string list = env;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    std::string path = list.substr(start, end - start);
    if (!path.empty()) {
      auto p = LoadPlugin(path);
      if (!p.ok()) return std::move(p).status().WithContext("OPSCOPE_PLUGINS");
    }
    start = end + 1;
  }
  return Status::Ok();
}

std::vector<PluginInfo> LoadedPlugins() {
  PluginTable& table = Table();
  std::lock_guard<std::mutex> lock(table.mu);
  std::vector<PluginInfo> out;
  for (const auto& p : table.plugins) out.push_back(p->info);
  return out;
}

}  // namespace opscope
