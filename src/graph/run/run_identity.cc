#include "graph/run/run_identity.h"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <random>

#include "core/text_format.h"
#include "opscope/npy.h"

namespace opscope::graph {

using nlohmann::json;

RunIdentity NewRunIdentity(const std::string& model_fingerprint) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char when[32];
  std::strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &utc);
  // Time and pid alone repeat for two runs in one second of one process
  // (tests, a library user); 64 random bits do not.
  std::random_device rd;
  const uint64_t random = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  char id[96];
  std::snprintf(id, sizeof(id), "%s-%d-%016llx", when, static_cast<int>(::getpid()),
                static_cast<unsigned long long>(random));
  return RunIdentity{.id = id, .model_fingerprint = model_fingerprint};
}

json RunIdentityJson(const RunIdentity& id) { return {{"id", id.id}, {"model_fingerprint", id.model_fingerprint}}; }

std::string StampSvg(const std::string& svg, const RunIdentity& id) {
  // At the end of the <svg ...> tag, so the chart still opens as it did.
  const size_t open = svg.find("<svg");
  size_t at = open == std::string::npos ? open : svg.find('>', open);
  if (at == std::string::npos) return svg;
  if (svg[at - 1] == '/') --at;
  return svg.substr(0, at) + " data-run-id=\"" + id.id + "\" data-model-fingerprint=\"" + id.model_fingerprint +
         "\"" + svg.substr(at);
}

StatusOr<std::string> ModelFingerprint(const std::string& path) {
  OPSCOPE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return std::to_string(bytes.size()) + ":" + Hex16(h);
}

}  // namespace opscope::graph
