// opscope.static-check/1: what `ops-debug check --json` writes.
#include <nlohmann/json.hpp>

#include "analysis/static_check/static_check.h"
#include "core/json_text.h"

namespace opscope {

std::string StaticCheckJson(const std::string& file, const StaticCheckResult& result) {
  using ordered = nlohmann::ordered_json;  // reads top-down: schema first
  ordered findings = ordered::array();
  for (const StaticFinding& f : result.findings) {
    findings.push_back({{"file", f.file}, {"line", f.line}, {"column", f.column}, {"severity", f.severity},
                        {"kernel", f.kernel}, {"check", f.check}, {"message", f.message}});
  }
  ordered j = {{"schema", "opscope.static-check/1"}, {"file", file}, {"findings", findings},
               {"parse_errors", result.parse_errors}};
  return JsonText(j, 2) + "\n";
}

}  // namespace opscope
