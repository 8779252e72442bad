#include "opscope/plugin.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

// The ELF machine this process runs on: a plugin for another cannot load.
#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
constexpr uint16_t kHostMachine = EM_NONE;  // not checked
#endif

// dlopen maps a shared library's segments straight from the file: one that
// was cut short (a copy interrupted, a full disk) faults with SIGBUS inside
// dlopen instead of failing. So the headers are checked first, and every
// loadable segment must lie within the file. Returns why it cannot load.
Status CheckElfFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return InvalidArgumentError("cannot open '" + path + "': " + std::strerror(errno));
  std::unique_ptr<int, void (*)(int*)> closer(&fd, [](int* f) { ::close(*f); });
  struct stat st;
  if (::fstat(fd, &st) != 0) return InvalidArgumentError("cannot stat '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return InvalidArgumentError("'" + path + "' is not a regular file");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const std::string bad = "'" + path + "' is not a loadable shared library: ";
  Elf64_Ehdr eh;
  if (size < sizeof(eh) || ::pread(fd, &eh, sizeof(eh), 0) != static_cast<ssize_t>(sizeof(eh))) {
    return InvalidArgumentError(bad + "the file is " + std::to_string(size) + " bytes, shorter than an ELF header");
  }
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return InvalidArgumentError(bad + "no ELF magic (not an ELF file)");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return InvalidArgumentError(bad + "not a 64-bit ELF file");
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB) return InvalidArgumentError(bad + "not little-endian");
  if (kHostMachine != EM_NONE && eh.e_machine != kHostMachine) {
    return InvalidArgumentError(bad + "built for ELF machine " + std::to_string(eh.e_machine) + ", this host is " +
                                std::to_string(kHostMachine));
  }
  if (eh.e_type != ET_DYN) return InvalidArgumentError(bad + "not a shared object (ELF type " + std::to_string(eh.e_type) + ")");
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0) {
    return InvalidArgumentError(bad + "bad program header table (entry size " + std::to_string(eh.e_phentsize) +
                                ", " + std::to_string(eh.e_phnum) + " entries)");
  }
  const uint64_t table_bytes = uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr);
  if (eh.e_phoff > size || table_bytes > size - eh.e_phoff) {
    return InvalidArgumentError(bad + "truncated: the program header table ends past the file's " +
                                std::to_string(size) + " bytes");
  }
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  if (::pread(fd, ph.data(), table_bytes, static_cast<off_t>(eh.e_phoff)) != static_cast<ssize_t>(table_bytes)) {
    return InvalidArgumentError(bad + "cannot read the program header table");
  }
  for (const Elf64_Phdr& p : ph) {
    if (p.p_type != PT_LOAD) continue;
    if (p.p_offset > size || p.p_filesz > size - p.p_offset) {
      return InvalidArgumentError(bad + "truncated: a loadable segment ends at byte " +
                                  std::to_string(p.p_offset + p.p_filesz) + ", the file has " +
                                  std::to_string(size));
    }
  }
  return Status::Ok();
}

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

  // A bare name ("libx.so") is dlopen's to search for; a path is checked.
  if (path.find('/') != std::string::npos || ::access(path.c_str(), F_OK) == 0) {
    Status elf = CheckElfFile(path);
    if (!elf.ok()) return InvalidArgumentError("plugin " + name + ": cannot load: " + elf.message());
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
