#include "analysis/diagnose/run_verdict.h"

#include <nlohmann/json.hpp>

#include "opscope/npy.h"  // ReadFile
#include "core/json_field.h"
#include "core/text_format.h"

namespace opscope {

void ReadRunVerdict(const std::string& path, Diagnosis& d) {
  auto text = ReadFile(path);
  if (!text.ok()) {
    d.notes.push_back("the run wrote no report.json (" + path + "): its verdict is not known");
    return;
  }
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    d.notes.push_back("the run's report.json (" + path + ") is not JSON: its verdict is not known");
    return;
  }
  d.run_status = StringMember(j, "status");
  if (const std::string error = StringMember(j, "error"); !error.empty()) d.run_verdict.push_back("the kernel failed: " + error);
  if (auto det = j.find("determinism"); det != j.end() && det->is_object()) {
    for (const auto& diff : det->value("differences", nlohmann::json::array())) {
      if (!diff.is_object()) continue;
      d.run_verdict.push_back("output " + StringMember(diff, "output") + " differs between repeats: " +
                              WithThousands(IntMember(diff, "elements_differing", 0)) + " elements, in " +
                              std::to_string(IntMember(diff, "repeats_differing", 0)) + " of " +
                              std::to_string(IntMember(diff, "repeats", 0)) + " repeats");
    }
  }
  for (const auto& o : j.value("outputs", nlohmann::json::array())) {
    if (!o.is_object()) continue;
    const std::string name = StringMember(o, "name");
    if (const std::string oob = StringMember(o, "out_of_bounds"); !oob.empty()) d.run_verdict.push_back("written out of bounds: " + oob);
    auto c = o.find("compare");
    if (c == o.end() || !c->is_object() || c->value("passed", true)) continue;
    std::string line = "output " + name + " " + StringMember(o, "tensor") + " FAILED " + WithThousands(IntMember(*c, "mismatched", 0)) +
                       " / " + WithThousands(IntMember(*c, "total", 0)) + " mismatched: " + StringMember(*c, "pattern");
    d.run_verdict.push_back(line);
    for (const auto& f : c->value("findings", nlohmann::json::array())) {
      if (f.is_object() && !StringMember(f, "text").empty()) d.run_verdict.push_back(StringMember(f, "text"));
    }
  }
}

}  // namespace opscope
