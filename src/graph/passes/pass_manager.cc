#include "graph/passes/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "core/text_format.h"
#include "graph/passes/passes.h"

namespace opscope::graph {

void CompileContext::MarkRemoved(const Node& compiled_node, const std::string& reason) {
  for (int64_t f : compiled_node.fused_from) removed_[f] = reason;
}

void CompileContext::MarkRemoved(const std::vector<int64_t>& framework_ids, const std::string& reason) {
  for (int64_t f : framework_ids) removed_[f] = reason;
}

Node CompileContext::MakeNode(const std::vector<const Node*>& parts, const Node& anchor, std::string op_type,
                              std::string domain, NodeKind kind) {
  Node n;
  n.id = NewNodeId();
  n.layer = Layer::kCompiled;
  n.kind = kind;
  n.op_type = std::move(op_type);
  n.domain = std::move(domain);
  n.name = anchor.name;
  n.name_space = anchor.name_space;
  std::set<int64_t> from;
  for (const Node* p : parts) from.insert(p->fused_from.begin(), p->fused_from.end());
  n.fused_from.assign(from.begin(), from.end());
  return n;
}

void CompileContext::Replace(int64_t replaced, Node node, const std::vector<int64_t>& remove) {
  Node* at = graph().FindNode(replaced);
  *at = std::move(node);
  for (int64_t id : remove) {
    if (id != replaced) pending_removals_.push_back(id);
  }
}

Status CompileContext::Commit() {
  std::vector<int64_t> ids;
  ids.swap(pending_removals_);
  return graph().RemoveNodes(ids);
}

namespace {

Status CheckPassNames(const std::vector<Pass>& passes, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (std::none_of(passes.begin(), passes.end(), [&](const Pass& p) { return p.name == name; })) {
      const std::string known = JoinMapped(passes, ", ", [](const Pass& p) { return p.name; });
      return InvalidArgumentError("unknown pass '" + name + "'; the passes are " + known);
    }
  }
  return Status::Ok();
}

}  // namespace

Status PassManager::KeepOnly(const std::vector<std::string>& names) {
  OPSCOPE_RETURN_IF_ERROR(CheckPassNames(passes_, names));
  std::erase_if(passes_, [&](const Pass& p) { return std::find(names.begin(), names.end(), p.name) == names.end(); });
  return Status::Ok();
}

Status PassManager::Disable(const std::vector<std::string>& names) {
  OPSCOPE_RETURN_IF_ERROR(CheckPassNames(passes_, names));
  std::erase_if(passes_, [&](const Pass& p) { return std::find(names.begin(), names.end(), p.name) != names.end(); });
  return Status::Ok();
}

PassManager PassManager::Default() {
  PassManager pm;
  for (Pass p : {ShapeInferencePass(), ConstantFoldingPass(), IfResolutionPass(), ConvBnFoldingPass(),
                 LayerNormFusionPass(), GeluFusionPass(), BiasActivationFusionPass(), ElementwiseChainFusionPass(),
                 LayoutPass(), MemoryPlanningPass()}) {
    pm.Add(std::move(p));
  }
  return pm;
}

void MapFrameworkToCompiled(Model& model, const std::map<int64_t, std::string>& removed) {
  for (Node& f : model.framework.mutable_nodes()) {
    f.absorbed_into = -1;
    f.executed = true;
    f.not_executed_reason.clear();
  }
  for (const Node& c : model.compiled.nodes()) {
    const bool same = c.fused_from.size() == 1 && c.fused_from[0] == c.id;
    for (int64_t id : c.fused_from) {
      Node* f = model.framework.FindNode(id);
      if (!f) continue;
      f->absorbed_into = c.id;
      if (!same) {
        f->executed = false;
        f->not_executed_reason = FusedIntoReason(c);
      }
    }
  }
  for (Node& f : model.framework.mutable_nodes()) {
    if (f.absorbed_into >= 0) continue;
    auto it = removed.find(f.id);
    f.executed = false;
    f.not_executed_reason = it != removed.end() ? it->second : "removed by the compiler";
  }
}

StatusOr<std::vector<PassResult>> PassManager::Run(Model& model, const AfterPassFn& after) const {
  model.compiled = model.framework;
  model.compiled.set_layer(Layer::kCompiled);
  model.compiled.memory() = MemoryPlan{};
  for (Node& n : model.compiled.mutable_nodes()) {
    n.fused_from = {n.id};
    n.absorbed_into = -1;
  }
  OPSCOPE_RETURN_IF_ERROR(model.compiled.Rebuild());
  CompileContext ctx(model);
  std::vector<PassResult> results;
  int index = 0;
  for (const Pass& pass : passes_) {
    auto start = std::chrono::steady_clock::now();
    StatusOr<int> rewrites = pass.run(ctx);
    if (!rewrites.ok()) return std::move(rewrites).status().WithContext("pass " + pass.name);
    // A pass that rewrote nothing and removes nothing left the structure as it
    // was: no rebuild (its topological sort and value table took 300 ms after
    // each of the ten passes on a 100,000-node model).
    if (*rewrites > 0 || ctx.has_pending_removals()) {
      OPSCOPE_RETURN_IF_ERROR(ctx.Commit().WithContext("pass " + pass.name));
    }
    PassResult r;
    r.index = ++index;
    r.name = pass.name;
    r.rewrites = *rewrites;
    r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    r.nodes_after = static_cast<int64_t>(model.compiled.nodes().size());
    results.push_back(r);
    if (after) OPSCOPE_RETURN_IF_ERROR(after(r, model));
  }
  MapFrameworkToCompiled(model, ctx.removed());
  return results;
}

Status Compile(Model& model) { return PassManager::Default().Run(model).status(); }

}  // namespace opscope::graph
