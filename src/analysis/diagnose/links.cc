#include "analysis/diagnose/links.h"

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "core/json_field.h"
#include "opscope/npy.h"

namespace opscope {

std::vector<DiagLink> LinkEarlierReports(const Diagnosis& d, const std::vector<std::string>& dirs) {
  std::vector<DiagLink> links;
  // The failing launch first; without one, every op instance the run launched.
  std::vector<const DiagLaunch*> wanted;
  for (const DiagLaunch& l : d.trajectory) {
    if (l.kind == "launch" && !l.instance_key.empty() && (l.failing || d.op.empty())) wanted.push_back(&l);
  }
  if (wanted.empty()) return links;
  std::set<std::string> seen_files;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
      const std::string file = std::filesystem::weakly_canonical(entry.path()).string();
      if (!seen_files.insert(file).second) continue;
      auto text = ReadFile(file);
      if (!text.ok() || text->size() > (64u << 20)) continue;
      auto j = nlohmann::json::parse(*text, nullptr, false);
      if (j.is_discarded() || !j.is_object() || StringMember(j, "schema") != "opscope.report/1") continue;
      if (!j.contains("instance") || !j["instance"].is_object()) continue;
      const std::string key = StringMember(j["instance"], "key");
      const std::string then = StringMember(j["instance"], "input_fingerprint");
      for (const DiagLaunch* l : wanted) {
        if (key != l->instance_key) continue;
        DiagLink link;
        link.report = file;
        link.kind = j.contains("profile") && !j["profile"].is_null() ? "profile" : "run";
        link.status = StringMember(j, "status");
        link.op = l->op;
        link.op_id = StringMember(j, "op_id");
        link.instance_key = key;
        link.fingerprint_then = then;
        link.fingerprint_now = l->input_fingerprint;
        link.same_data = then == l->input_fingerprint;
        const std::string verb = link.status == "passed" ? "passed" : "was " + link.status + " under";
        link.text = "this op instance (" + l->op + ") " + verb + " ops-debug " + link.kind + " (" + file +
                    ") with input fingerprint " + then + "; " +
                    (d.status == DiagnosisStatus::kClean ? "it ran clean" : "it " + std::string(d.status == DiagnosisStatus::kHung ? "hung" : d.status == DiagnosisStatus::kCrashed ? "crashed" : "failed")) +
                    " with fingerprint " + l->input_fingerprint +
                    (link.same_data ? " (the same data: the difference is elsewhere)" : " (other data)");
        links.push_back(std::move(link));
      }
    }
  }
  return links;
}

}  // namespace opscope
