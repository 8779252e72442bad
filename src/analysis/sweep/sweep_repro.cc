// The command that runs a sweep again, made from its request: what the
// report, sweep.json and sweep.html keep as "repro".
#include <algorithm>
#include <filesystem>

#include "analysis/harness/inputs.h"
#include "analysis/harness/repro.h"
#include "core/command_line.h"
#include "core/text_format.h"
#include "opscope/sweep.h"

namespace opscope {

namespace {

std::string ValuesText(const std::vector<int64_t>& values) {
  const std::string s = JoinMapped(values, ",", [](int64_t v) { return std::to_string(v); });
  return s;
}

}  // namespace

std::string SweepCommand(const SweepRequest& r) {
  const OpRunRequest& run = r.base.run;
  CommandLine c("ops-debug sweep");
  c.Repeated("--plugin", run.plugins).Flag("--op", run.op);
  if (!run.input_shapes.empty()) {
    std::vector<std::string> shapes;
    for (size_t i = 0; i < run.input_shapes.size(); ++i) {
      const bool omitted = std::find(run.omitted_inputs.begin(), run.omitted_inputs.end(), static_cast<int>(i)) !=
                           run.omitted_inputs.end();
      shapes.push_back(omitted ? "" : run.input_shapes[i].ToString());  // "[4,8];;[4,8]": left out
    }
    c.Flag("--input-shapes", shapes, ";");
  }
  if (!run.input_files.empty()) c.Flag("--inputs", run.input_files, ",");
  if (!run.dtypes.empty()) {
    std::vector<std::string> names;
    for (DType t : run.dtypes) names.push_back(DTypeName(t));
    c.Flag("--dtype", names, ",");
  }
  c.FlagIf(!run.attrs.empty(), "--attrs", run.attrs);
  if (run.seed != 0) c.Flag("--seed", std::to_string(run.seed));
  if (run.fill != FillKind::kNormal) c.Flag("--fill", FillKindName(run.fill));
  c.Flag("--device", run.device);
  if (!run.tunables.empty()) c.Flag("--tunables", TunablesText(run.tunables));
  for (const auto& [name, values] : r.values) {
    if (name == "block" || name == "vec") {
      c.Flag("--" + name, ValuesText(values));
    } else {
      c.Flag("--tunable", name + "=" + ValuesText(values));
    }
  }
  c.Flag("--warmup", r.base.warmup).Flag("--iters", r.base.iterations);
  const std::string dir = std::filesystem::path(r.cache_file).parent_path().string();
  if (!dir.empty() && dir != ".") c.Flag("--output-dir", dir);
  if (!r.cache_file.empty() && !r.use_cache) c.Switch("--no-cache");
  return c.str();
}

}  // namespace opscope
