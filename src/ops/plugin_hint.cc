#include "ops/plugin_hint.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <vector>

#include "core/text_format.h"
#include "opscope/plugin.h"

namespace opscope {
namespace fs = std::filesystem;
namespace {

constexpr uintmax_t kMaxScanBytes = uintmax_t{64} << 20;  // a plugin is far smaller; a bigger file is not read

// The folders where plugins are found: the tool's own ../lib (build/lib in
// a build tree), and those of OPSCOPE_PLUGINS's entries.
std::vector<fs::path> PluginFolders() {
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "lib");
  if (const char* env = std::getenv("OPSCOPE_PLUGINS")) {
    std::string list = env;
    for (size_t start = 0; start <= list.size();) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      if (end > start) dirs.push_back(fs::path(list.substr(start, end - start)).parent_path());
      start = end + 1;
    }
  }
  return dirs;
}

// The library holds `name` as a whole C string (a string literal in its data).
bool NamesOp(const fs::path& lib, std::string_view name) {
  std::error_code ec;
  if (!fs::is_regular_file(lib, ec) || fs::file_size(lib, ec) > kMaxScanBytes || ec) return false;
  std::ifstream in(lib, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string needle(1, '\0');
  needle.append(name);
  needle.push_back('\0');
  return bytes.find(needle) != std::string::npos;
}

// A path as the user would type it: relative to the current folder when under it.
std::string Shown(const fs::path& p) {
  std::error_code ec;
  const fs::path canon = fs::weakly_canonical(p, ec);
  const fs::path cwd = fs::current_path(ec);
  if (!ec) {
    const fs::path rel = canon.lexically_relative(cwd);
    if (!rel.empty() && *rel.begin() != "..") return rel.string();
  }
  return canon.string();
}

}  // namespace

std::string PluginHintForUnknownOp(std::string_view op) {
  std::set<std::string> loaded;
  for (const PluginInfo& p : LoadedPlugins()) {
    std::error_code ec;
    loaded.insert(fs::weakly_canonical(p.path, ec).string());
  }
  std::set<std::string> seen;
  std::vector<std::string> found, naming;
  for (const fs::path& dir : PluginFolders()) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> libs;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      const std::string file = e.path().filename().string();
      // The tool's own libraries define no plugin ops.
      if (file.rfind("lib", 0) == 0 && e.path().extension() == ".so" && file.rfind("libopscope", 0) != 0) libs.push_back(e.path());
    }
    std::sort(libs.begin(), libs.end());
    for (const fs::path& lib : libs) {
      const std::string shown = Shown(lib);
      if (!seen.insert(fs::weakly_canonical(lib, ec).string()).second || loaded.count(fs::weakly_canonical(lib, ec).string())) continue;
      found.push_back(shown);
      if (NamesOp(lib, op)) naming.push_back(shown);
    }
  }
  if (!naming.empty()) {
    return "; a plugin may define it: " + JoinMapped(naming, " or ", [](const std::string& p) { return "--plugin " + p; }) +
           " (its library holds the name '" + std::string(op) + "')";
  }
  if (!found.empty()) {
    const size_t shown = std::min<size_t>(found.size(), 6);
    std::vector<std::string> some(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(shown));
    return "; a plugin may define it (--plugin LIB.so); none of the plugins found holds the name: " + JoinStrings(some, ", ") +
           (found.size() > shown ? ", ..." : "");
  }
  return "; a plugin may define it: --plugin LIB.so (or OPSCOPE_PLUGINS=LIB.so)";
}

StatusOr<const OpSchema*> LookupTypedOp(std::string_view op) {
  auto found = OpRegistry::Global().Lookup(op);
  if (found.ok()) return found;
  const bool close = !OpRegistry::Global().ClosestNames(op).empty();
  const std::string hint = PluginHintForUnknownOp(op);
  // A close registered name is likelier a typo than a plugin not loaded,
  // unless a plugin library holds the very name.
  if (close && hint.find("holds the name '") == std::string::npos) return found;
  return NotFoundError(std::string(found.status().message()) + hint);
}

}  // namespace opscope
