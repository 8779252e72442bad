// The minimal build's stand-in for the libclang half of this room (no
// libclang there): `ops-debug check` and diagnose's --source answer in one
// line that the static checks are not in this build.
#include "analysis/static_check/static_check.h"

namespace opscope {

StatusOr<StaticCheckResult> CheckKernelSource(const std::string& path, const std::vector<std::string>&) {
  return UnimplementedError(path + ": the static checks (ops-debug check, diagnose --source) are not in this build "
                                   "(the minimal build, OPSCOPE_MINIMAL, has no libclang): run them where the full build is");
}

}  // namespace opscope
