#include "graph/ort/ort_run.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "graph/onnx/onnx_import.h"
#include "graph/ort/ort_profile.h"
#include "graph/run/mapping.h"
#include "graph/runtime/iteration_stats.h"
#include "opscope/dtype.h"

namespace opscope::graph {

namespace {

std::string Absolute(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

// "Conv#0", "Conv#1", ...: a node's kernels in one run, in the order they started.
std::vector<std::string> KernelKeys(const OrtProfileRun& r) {
  std::vector<std::string> keys;
  std::unordered_map<std::string, int> seen;
  for (const OrtKernelEvent& e : r.kernels) keys.push_back(e.node + "#" + std::to_string(seen[e.node]++));
  return keys;
}

TaskKind KindOf(const std::string& op_type) {
  if (op_type == "ReorderInput" || op_type == "ReorderOutput") return TaskKind::kTransdata;
  if (op_type == "MemcpyFromHost") return TaskKind::kMemcpyH2D;
  if (op_type == "MemcpyToHost") return TaskKind::kMemcpyD2H;
  return TaskKind::kKernel;
}

// The optimized model's graph inputs must be the model's: otherwise it is
// another model's, and nothing tied between the two would mean anything.
Status CheckSameInputs(const Model& model, const Graph& optimized, const OrtRunFiles& files) {
  for (const std::string& in : optimized.inputs()) {
    const Value* v = model.framework.FindValue(in);
    if (v == nullptr || !v->is_graph_input) {
      return InvalidArgumentError(files.optimized + ": graph input '" + in + "' is not an input of " + files.model +
                                  " (expected the model onnxruntime optimized from it)");
    }
  }
  return Status::Ok();
}

// The optimized graph as the compiled layer: its node ids after the framework's.
Status AdoptCompiled(Model& model, Model optimized) {
  const int64_t offset = model.next_node_id;
  Graph compiled = std::move(optimized.framework);
  for (Node& n : compiled.mutable_nodes()) {
    n.id += offset;
    if (n.branch_of >= 0) n.branch_of += offset;
  }
  compiled.set_layer(Layer::kCompiled);
  OPSCOPE_RETURN_IF_ERROR(compiled.Rebuild());
  model.compiled = std::move(compiled);
  model.next_node_id = offset + optimized.next_node_id;
  for (const std::string& w : optimized.warnings) model.warnings.push_back("optimized model: " + w);
  return Status::Ok();
}

// What the kernel said of its outputs, for the tensors the optimized model
// leaves without dtype or shape (onnxruntime writes no value_info for them).
void FillShapes(Graph& g, const Node& n, const OrtKernelEvent& e) {
  for (size_t k = 0; k < e.outputs.size() && k < n.outputs.size(); ++k) {
    Value* v = g.FindValue(n.outputs[k]);
    if (v == nullptr || (v->dtype_known && v->shape_known())) continue;
    StatusOr<DType> t = ParseDType(e.outputs[k].type);
    if (!t.ok()) continue;
    v->SetDesc(*t, Shape(e.outputs[k].dims));
  }
}

}  // namespace

StatusOr<OrtRun> ImportOrtRun(const OrtRunFiles& files) {
  OrtRun out;
  CapturedRun& run = out.run;
  OPSCOPE_ASSIGN_OR_RETURN(run.model, ImportOnnx(files.model));
  OPSCOPE_ASSIGN_OR_RETURN(Model optimized, ImportOptimizedOnnx(files.optimized));
  OPSCOPE_RETURN_IF_ERROR(CheckSameInputs(run.model, optimized.framework, files));
  OPSCOPE_ASSIGN_OR_RETURN(OrtProfile profile, ReadOrtProfile(files.profile));
  OPSCOPE_RETURN_IF_ERROR(AdoptCompiled(run.model, std::move(optimized)));
  out.mapping = MapOrtGraph(run.model);

  const int runs = static_cast<int>(profile.runs.size());
  const int warmup = files.warmup >= 0 ? files.warmup : (runs > 1 ? 1 : 0);
  if (warmup >= runs) {
    return InvalidArgumentError("warmup " + std::to_string(warmup) + ": " + files.profile + " holds " +
                                std::to_string(runs) + " run(s) of the model (expected fewer warm-up runs)");
  }
  out.profile_runs = runs;
  out.kernels_outside_runs = profile.kernels_outside_runs;

  std::unordered_map<std::string, const Node*> by_name;
  for (const Node& n : run.model.compiled.nodes()) by_name.emplace(n.name, &n);
  const OrtProfileRun& first = profile.runs[warmup];
  const std::vector<std::string> keys = KernelKeys(first);

  // One stream per (provider, thread) that ran kernels, in order of first use.
  std::map<std::pair<std::string, int64_t>, int> stream_of;
  std::vector<std::string> stream_names;
  for (const OrtKernelEvent& e : first.kernels) {
    if (stream_of.emplace(std::make_pair(e.provider, e.tid), static_cast<int>(stream_of.size())).second) {
      stream_names.push_back(e.provider);
    }
    if (std::find(out.providers.begin(), out.providers.end(), e.provider) == out.providers.end()) {
      out.providers.push_back(e.provider);
    }
  }
  // Several threads of one provider: numbered, so each stream has its own name.
  std::map<std::string, int> per_provider;
  for (const std::string& n : stream_names) ++per_provider[n];
  std::map<std::string, int> numbered;
  for (std::string& n : stream_names) {
    const std::string provider = n.empty() ? "onnxruntime" : n;
    // "CPUExecutionProvider" -> "ort CPU": the summary's stream column is narrow.
    std::string shortname = provider;
    if (const size_t at = shortname.find("ExecutionProvider"); at != std::string::npos && at > 0) {
      shortname = "ort " + shortname.substr(0, at);
    }
    n = per_provider[n] > 1 ? shortname + " thread " + std::to_string(numbered[n]++) : shortname;
  }

  Schedule& s = run.schedule;
  s.compute_streams = static_cast<int>(stream_of.size());
  s.copy_stream = s.compute_streams;
  s.stream_names = stream_names;
  s.stream_names.push_back("copy");
  bool any_node = false;  // a kernel event named a node of the optimized model
  std::unordered_map<int64_t, int64_t> last_task_of;  // compiled node -> its latest task so far
  for (size_t i = 0; i < first.kernels.size(); ++i) {
    const OrtKernelEvent& e = first.kernels[i];
    auto it = by_name.find(e.node);
    const Node* node = it != by_name.end() ? it->second : nullptr;
    ScheduledTask t;
    t.desc.task_id = static_cast<int64_t>(i);
    t.desc.op_node_id = node != nullptr ? node->id : -1;
    t.desc.stream_id = stream_of.at({e.provider, e.tid});
    t.desc.kind = KindOf(e.op_type);
    t.desc.kernel_name = e.op_type;
    t.op_type = node != nullptr ? node->op_type : e.op_type;
    t.node_name = e.node;
    if (node == nullptr) {
      t.desc.label = "kernel event of '" + e.node + "', a node the optimized model does not have";
      ++out.unmapped_tasks;
    } else {
      any_node = true;
      for (const std::string& in : node->inputs) {
        const Value* v = in.empty() ? nullptr : run.model.compiled.FindValue(in);
        auto dep = v != nullptr ? last_task_of.find(v->producer) : last_task_of.end();
        if (dep != last_task_of.end() &&
            std::find(t.deps.begin(), t.deps.end(), dep->second) == t.deps.end()) {
          t.deps.push_back(dep->second);
        }
      }
      last_task_of[node->id] = t.desc.task_id;
      FillShapes(run.model.compiled, *node, e);
    }
    s.tasks.push_back(std::move(t));
  }
  // A few events of nodes the saved model lacks can be onnxruntime's own;
  // most of them: the profile of another model or another optimisation.
  if (!any_node || 2 * out.unmapped_tasks > static_cast<int64_t>(first.kernels.size())) {
    return InvalidArgumentError(files.profile + ": " + std::to_string(out.unmapped_tasks) + " of its " +
                                std::to_string(first.kernels.size()) + " kernel events name no node of " +
                                files.optimized + " (expected the profile of the session that wrote that optimized model)");
  }

  // Each timed run is an iteration when it ran the same kernels.
  std::vector<std::string> sorted_keys = keys;
  std::sort(sorted_keys.begin(), sorted_keys.end());
  for (int r = warmup; r < runs; ++r) {
    const OrtProfileRun& pr = profile.runs[r];
    const std::vector<std::string> k = KernelKeys(pr);
    std::vector<std::string> sorted = k;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != sorted_keys) {
      ++out.runs_left_out;
      continue;
    }
    std::unordered_map<std::string, const OrtKernelEvent*> event_of;
    for (size_t i = 0; i < k.size(); ++i) event_of[k[i]] = &pr.kernels[i];
    IterationTimes times(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      const OrtKernelEvent& e = *event_of.at(keys[i]);
      const int64_t start = e.ts_us * 1000, end = (e.ts_us + e.dur_us) * 1000;
      times[i] = {.raw_start_ns = start, .raw_end_ns = end, .cal_start_ns = start, .cal_end_ns = end};
    }
    run.iteration_times.push_back(std::move(times));
  }
  run.iterations = static_cast<int>(run.iteration_times.size());
  run.warmup = warmup;
  run.median_iteration = MedianIteration(run.iteration_times);
  RestoreIteration(s, run.iteration_times[run.median_iteration]);

  for (Node& n : run.model.compiled.mutable_nodes()) {
    const bool ran = std::any_of(s.tasks.begin(), s.tasks.end(),
                                 [&](const ScheduledTask& t) { return t.desc.op_node_id == n.id; });
    if (!ran) n.not_executed_reason = "no kernel event of it in the profile";
  }
  OPSCOPE_RETURN_IF_ERROR(MapTasks(run.model, s));

  std::string providers;
  for (const std::string& p : out.providers) providers += (providers.empty() ? "" : ",") + p;
  run.device = std::string(kOnnxruntime) + ":" + providers;
  run.race_check = RaceCheckOutcome{.skipped = "an onnxruntime run: its kernels' memory accesses were not recorded"};
  EngineSource src{.engine = kOnnxruntime, .optimized_model = Absolute(files.optimized),
                   .profile = Absolute(files.profile)};
  OPSCOPE_ASSIGN_OR_RETURN(src.optimized_fingerprint, ModelFingerprint(files.optimized));
  OPSCOPE_ASSIGN_OR_RETURN(src.profile_fingerprint, ModelFingerprint(files.profile));
  run.source = std::move(src);
  return out;
}

}  // namespace opscope::graph
