#include "analysis/suspects/suspects_json.h"

namespace opscope {

nlohmann::json SuspectsJson(const std::vector<Suspect>& suspects) {
  nlohmann::json out = nlohmann::json::array();
  int rank = 0;
  for (const Suspect& s : suspects) {
    nlohmann::json j = {{"rank", ++rank},           {"kind", SuspectKindName(s.kind)},
                        {"nodes", s.names},         {"direction", s.direction},
                        {"text", s.text},           {"saving_us", s.saving_us},
                        {"critical_path", s.critical}};
    switch (s.kind) {
      case SuspectKind::kFusion:
        j["tensor"] = s.tensor;
        j["traffic_bytes"] = s.traffic_bytes;
        j["bandwidth_gbs"] = s.bandwidth_gbs;
        j["bandwidth_source"] = s.bandwidth_source;
        break;
      case SuspectKind::kReads:
        j["input"] = s.input_name;
        j["pattern"] = s.reads.Name();
        j["read_ratio"] = s.reads.ratio;
        j["box"] = s.reads.typical_box.ToString();
        j["box_runs"] = s.reads.box_runs;
        j["run_stride"] = s.reads.run_stride;
        j["neighbour_step"] = s.reads.neighbour_step;
        break;
      case SuspectKind::kSmallGrid:
        j["kernel"] = s.kernel;
        j["grid_blocks"] = s.grid_blocks;
        j["compute_units"] = s.compute_units;
        j["efficiency"] = s.efficiency;
        break;
      case SuspectKind::kSlowKernel:
        j["efficiency"] = s.efficiency;
        break;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace opscope
