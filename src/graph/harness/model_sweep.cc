// `ops-debug sweep --graph` as a library call (opscope/model.h): the model's
// hot kernels found by one run, each swept as an op instance.
#include <algorithm>
#include <filesystem>

#include "opscope/model.h"
#include "opscope/op.h"

namespace opscope {

StatusOr<std::vector<HotNode>> HotNodes(const ModelRunRequest& model) {
  auto run = RunModel(model);
  if (!run.ok()) return std::move(run).status().WithContext("model " + model.model);
  std::vector<HotNode> nodes;
  for (const NodeTime& n : run->nodes) {
    if (n.op_type.empty() || n.roofline.measured_us < 0) continue;
    // Only a kernel with knobs can be swept: the others are not candidates for the top N.
    auto op = OpRegistry::Global().Lookup(n.op_type);
    if (!op.ok() || (*op)->tunables.empty()) continue;
    HotNode h{.name = n.name, .op_type = n.op_type, .attrs = n.attrs.ToString(), .us = n.roofline.measured_us};
    for (const TensorDesc& in : n.inputs) {
      if (!in.present) break;  // trailing optional inputs left out, as --input-shapes can say
      h.input_shapes.push_back(in.shape);
      h.dtypes.push_back(in.dtype);
    }
    nodes.push_back(std::move(h));
  }
  std::stable_sort(nodes.begin(), nodes.end(), [](const HotNode& a, const HotNode& b) { return a.us > b.us; });
  return nodes;
}

StatusOr<ModelSweep> SweepModel(const ModelSweepRequest& r) {
  if (r.top < 1) return InvalidArgumentError("top: expected at least 1 task, got " + std::to_string(r.top));
  if (!r.each.base.run.op.empty()) {
    return InvalidArgumentError("op: not with `model` (the graph's tasks name their ops)");
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<HotNode> hot, HotNodes(r.model));
  if (hot.empty()) {
    return InvalidArgumentError("model " + r.model.model + ": no kernel that ran declares a tunable: nothing to sweep");
  }
  if (static_cast<int>(hot.size()) > r.top) hot.resize(static_cast<size_t>(r.top));
  ModelSweep sweep;
  const int total = static_cast<int>(hot.size());
  for (int k = 1; k <= total; ++k) {
    if (r.each.cancel != nullptr && r.each.cancel->load()) {
      sweep.complete = false;
      break;
    }
    SweptNode done{.node = std::move(hot[k - 1])};
    const HotNode& n = done.node;
    done.dir = (std::filesystem::path(r.output_dir) / (std::to_string(k) + "_" + n.op_type)).string();
    if (r.on_node) r.on_node(k, total, n);
    SweepRequest one = r.each;
    one.base.run.op = n.op_type;
    one.base.run.input_files.clear();
    one.base.run.input_tensors.clear();
    one.base.run.input_shapes = n.input_shapes;
    one.base.run.dtypes = n.dtypes;
    one.base.run.attrs = n.attrs;
    one.base.run.attr_values = {};
    one.cache_file = (std::filesystem::path(done.dir) / "sweep.json").string();
    one.repro.clear();  // SweepCommand of this node's request
    StatusOr<SweepReport> report = RunSweep(one);
    StatusOr<std::string> page = report.ok() ? WriteSweepFiles(*report, one.cache_file) : report.status();
    if (page.ok()) {
      done.page = *page;
      done.report = std::move(*report);
    } else {
      done.skipped = page.status().message();
    }
    const bool stopped = done.report && !done.report->complete;
    sweep.nodes.push_back(std::move(done));
    if (r.on_swept) r.on_swept(sweep.nodes.back());
    if (stopped) {
      sweep.complete = false;
      break;
    }
  }
  return sweep;
}

}  // namespace opscope
