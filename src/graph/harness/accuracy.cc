// The accuracy run (opscope/accuracy.h): the golden chain of the framework
// graph, the compiled graph as it executes, and every compiled node held
// against the golden three ways (inherited, output, local).
#include "opscope/accuracy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <filesystem>
#include <map>
#include <set>

#include "capture/dispatcher.h"
#include "capture/op_instance.h"
#include "core/clock.h"
#include "core/command_line.h"
#include "core/file_util.h"
#include "core/text_format.h"
#include "graph/export/capture_json.h"
#include "graph/export/run_folder.h"
#include "graph/harness/accuracy_json.h"
#include "graph/harness/fused_stages.h"
#include "graph/harness/model_inputs.h"
#include "graph/harness/spill_store.h"
#include "graph/onnx/onnx_import.h"
#include "graph/passes/pass_manager.h"
#include "graph/run/output_checks.h"
#include "graph/runtime/executor.h"
#include "graph/runtime/inorder_eval.h"
#include "graph/runtime/scheduler.h"
#include "opscope/npy.h"
#include "opscope/plugin.h"

namespace opscope {
namespace {

using graph::Graph;
using graph::Node;
using TensorMap = std::map<std::string, Tensor>;

// Floats as float64, the golden's precision; other dtypes as they are.
StatusOr<Tensor> Widened(const Tensor& t) { return IsFloat(t.dtype()) ? t.CastTo(DType::kF64) : t; }

StatusOr<OpRun> RunReference(const OpSchema& schema, const std::vector<Tensor>& args, const Node& n) {
  return Dispatcher::Global().Run(schema, args, n.attrs,
                                  RunOptions{.num_outputs = static_cast<int>(n.outputs.size()), .fingerprint = false});
}

// The framework graph on the references, node by node, every value kept, the
// graph's inputs and constants widened to float64 so that no rounding but
// the references' own enters the chain. An op whose type constraints refuse
// float64 gets its inputs in the framework's dtypes (a note says which). A
// node that cannot run on them (no reference, an If the compiler resolved,
// an input never computed) is skipped and said in `notes`: its outputs then
// have no golden, and the compiled nodes reading them are not judged on them.
StatusOr<TensorMap> GoldenChain(const Graph& g, const TensorMap& inputs, SpillStore& store, std::vector<std::string>& notes) {
  TensorMap env;
  for (const auto& [name, t] : inputs) {
    if (StatusOr<Tensor> w = Widened(t); w.ok()) env[name] = *std::move(w);
  }
  for (const std::string& name : g.value_order()) {
    const graph::Value* v = g.FindValue(name);
    if (!v->constant) continue;
    if (StatusOr<Tensor> w = Widened(*v->constant); w.ok()) env[name] = *std::move(w);
  }
  // An If whose cond is a constant (the only kind the compiler runs) takes
  // one branch: its nodes are the golden's, the other branch's are skipped.
  const auto taken = [&](const Node& if_node) -> std::string {
    auto cond = if_node.inputs.empty() ? env.end() : env.find(if_node.inputs[0]);
    if (cond == env.end() || cond->second.numel() != 1) return "";
    return cond->second.FlatGetAsDouble(0) != 0 ? "then_branch" : "else_branch";
  };
  for (const Node& n : g.nodes()) {
    if (n.op_type == "Constant" && !n.outputs.empty() && env.count(n.outputs[0])) continue;
    if (n.branch_of >= 0) {
      const Node* owner = g.FindNode(n.branch_of);
      if (owner && !taken(*owner).empty() && taken(*owner) != n.branch) continue;
    }
    if (n.op_type == "If" && !n.branches.empty() && !taken(n).empty()) {
      const std::string branch = taken(n);
      for (const Node::Branch& b : n.branches) {
        if (b.name != branch) continue;
        for (size_t i = 0; i < b.outputs.size() && i < n.outputs.size(); ++i) {
          if (auto it = env.find(b.outputs[i]); it != env.end()) env[n.outputs[i]] = it->second;
        }
      }
      continue;
    }
    const OpSchema* schema = n.executable ? OpRegistry::Global().Find(n.op_type) : nullptr;
    std::string why = !n.executable ? n.not_executable_reason : !schema ? "no such op" : "";
    std::vector<Tensor> args;
    for (const std::string& in : n.inputs) {
      if (!why.empty()) break;
      if (in.empty()) {
        args.emplace_back();
      } else if (auto it = env.find(in); it != env.end()) {
        args.push_back(it->second);
      } else {
        why = "its input '" + in + "' has no golden";
      }
    }
    if (why.empty()) {
      StatusOr<OpRun> run = RunReference(*schema, args, n);
      if (!run.ok()) {
        // In the framework's dtypes: the op takes no float64 input.
        std::vector<Tensor> declared = args;
        bool cast = true;
        for (size_t i = 0; i < declared.size() && cast; ++i) {
          const graph::Value* v = n.inputs[i].empty() ? nullptr : g.FindValue(n.inputs[i]);
          if (!v || !v->dtype_known || declared[i].dtype() == v->dtype) continue;
          StatusOr<Tensor> c = declared[i].CastTo(v->dtype);
          cast = c.ok();
          if (cast) declared[i] = *std::move(c);
        }
        if (cast) {
          StatusOr<OpRun> again = RunReference(*schema, declared, n);
          if (again.ok()) {
            notes.push_back("framework node '" + n.name + "' (" + n.op_type +
                            ") takes no float64 input: its golden is its reference on inputs rounded to its dtypes");
            run = std::move(again);
          }
        }
      }
      if (run.ok()) {
        for (size_t i = 0; i < n.outputs.size() && i < run->outputs.size(); ++i) {
          if (n.outputs[i].empty()) continue;
          OPSCOPE_ASSIGN_OR_RETURN(env[n.outputs[i]], store.Keep("golden " + n.outputs[i], std::move(run->outputs[i])));
        }
        continue;
      }
      why = run.status().message();
    }
    notes.push_back("framework node '" + n.name + "' (" + n.op_type + ") has no golden: " + why);
  }
  return env;
}

// The values the layout pass made (a node's NHWC input and output) have no
// framework tensor: their golden is the framework tensor's on the other side
// of the transdata node between them, permuted as that node permutes it (on
// the Transpose reference, in float64).
void GoldenThroughTransdata(const Graph& compiled, TensorMap& golden) {
  const auto permuted = [](const Tensor& t, const std::vector<int64_t>& perm) -> StatusOr<Tensor> {
    Attrs attrs;
    attrs.Set("perm", perm);
    OPSCOPE_ASSIGN_OR_RETURN(OpRun run, Dispatch("Transpose", {t}, attrs, RunOptions{.fingerprint = false}));
    return run.outputs.at(0);
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node& n : compiled.nodes()) {
      if (n.kind != graph::NodeKind::kTransdata || n.inputs.size() != 1 || n.outputs.size() != 1) continue;
      const std::vector<int64_t> perm = n.attrs.ints("perm");
      std::vector<int64_t> inverse(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
      const bool have_in = golden.count(n.inputs[0]) > 0, have_out = golden.count(n.outputs[0]) > 0;
      if (have_in == have_out) continue;
      StatusOr<Tensor> t = have_in ? permuted(golden.at(n.inputs[0]), perm) : permuted(golden.at(n.outputs[0]), inverse);
      if (!t.ok()) continue;
      golden[have_in ? n.outputs[0] : n.inputs[0]] = *std::move(t);
      changed = true;
    }
  }
}

DType FrameworkDType(const Graph& framework, const std::string& name, DType otherwise) {
  const graph::Value* v = framework.FindValue(name);
  return v && v->dtype_known ? v->dtype : otherwise;
}

// The float dtype of least precision among `tensors` (none: `otherwise`).
DType Narrowest(const std::vector<Tensor>& tensors, DType otherwise) {
  const auto digits = [](DType d) { return d == DType::kF64 ? 53 : d == DType::kF32 ? 24 : d == DType::kF16 ? 11 : 8; };
  DType out = otherwise;
  bool any = false;
  for (const Tensor& t : tensors) {
    if (t.defined() && IsFloat(t.dtype()) && (!any || digits(t.dtype()) < digits(out))) out = t.dtype();
    any |= t.defined() && IsFloat(t.dtype());
  }
  return out;
}

// The worst element's error over the error the rule allows it, the pairs
// judged as the compare engine judges them (NaN matches NaN, an infinity the
// same infinity; any other non-finite pair is infinitely far): above 1
// exactly where CompareTensors counts a mismatch. -1 under bit-exact.
double ToleranceRatio(const Tensor& compiled, const Tensor& golden, const Tolerance& tol, const CompareResult& r) {
  if (tol.rule == CompareRule::kBitExact) return -1;
  if (tol.rule == CompareRule::kUlp) {
    const double inf = std::numeric_limits<double>::infinity();
    const double ulps = static_cast<double>(std::max<int64_t>(r.max_ulp, 0));
    const double ratio = tol.max_ulp > 0 ? ulps / static_cast<double>(tol.max_ulp) : (ulps > 0 ? inf : 0);
    return r.mismatched && ratio <= 1 ? inf : ratio;  // out of tolerance by a non-finite pair
  }
  StatusOr<Tensor> a = compiled.CastTo(DType::kF64), e = golden.CastTo(DType::kF64);
  if (!a.ok() || !e.ok()) return -1;
  const double* av = a->data<double>();
  const double* ev = e->data<double>();
  double worst = 0;
  for (int64_t i = 0; i < a->numel(); ++i) {
    const double x = av[i], y = ev[i];
    if (!std::isfinite(x) || !std::isfinite(y)) {
      const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
      if (!same) return std::numeric_limits<double>::infinity();
      continue;
    }
    const double err = std::fabs(x - y), abs_e = std::fabs(y);
    const double allowed = tol.rule == CompareRule::kMixed      ? tol.atol + tol.rtol * abs_e
                           : tol.rule == CompareRule::kAbsolute ? tol.atol
                                                                : std::max(tol.atol, tol.rtol * abs_e);
    if (allowed > 0) worst = std::max(worst, err / allowed);
    else if (err > 0) return std::numeric_limits<double>::infinity();
  }
  return worst;
}

// `judged_as`: the dtype whose default tolerance applies (kBool: the tensor's own).
TensorError Measure(const std::string& name, const Tensor& compiled, const TensorMap& golden, const Graph& framework,
                    const ToleranceSpec& spec, DType judged_as = DType::kBool) {
  TensorError e{.tensor = name, .compiled_dtype = compiled.dtype(),
                .framework_dtype = FrameworkDType(framework, name, compiled.dtype())};
  auto it = golden.find(name);
  if (it == golden.end() || it->second.shape() != compiled.shape()) return e;
  StatusOr<Tolerance> tol = ResolveTolerance(spec, judged_as == DType::kBool ? compiled.dtype() : judged_as);
  if (!tol.ok()) return e;
  StatusOr<CompareResult> r = CompareTensors(compiled, it->second, *tol, CompareOptions{.worst_k = 1, .findings = false});
  if (!r.ok()) return e;
  e.compared = true;
  e.mismatched = r->mismatched;
  e.total = r->total;
  e.max_abs_err = r->max_abs_err;
  e.max_rel_err = r->max_rel_err;
  e.cosine = r->cosine;
  e.mean_abs_err = r->mean_abs_err;
  e.histogram = r->histogram;
  if (IsFloat(compiled.dtype()) && compiled.on_host()) e.tolerance_ratio = ToleranceRatio(compiled, it->second, *tol, *r);
  return e;
}

// The worse of two: more elements out of tolerance, then the larger error.
bool Worse(const TensorError& a, const TensorError& b) {
  if (a.compared != b.compared) return a.compared;
  if (a.share() != b.share()) return a.share() > b.share();
  return a.max_abs_err > b.max_abs_err;
}

void KeepWorst(TensorError& worst, const TensorError& e, bool& any) {
  if (!any || Worse(e, worst)) worst = e;
  any = true;
}

// The compiler decisions a node carries, in words.
std::vector<std::string> Decisions(const Node& n, const Graph& compiled, const Graph& framework,
                                   const std::vector<std::string>& fused) {
  std::vector<std::string> out;
  if (fused.size() > 1) {
    std::string names;
    for (const std::string& f : fused) names += (names.empty() ? "" : ", ") + f;
    out.push_back("fusion: one " + n.op_type + " kernel for " + std::to_string(fused.size()) + " framework nodes (" +
                  names + ")");
  }
  for (const std::string& name : n.outputs) {
    const graph::Value* c = name.empty() ? nullptr : compiled.FindValue(name);
    const graph::Value* f = name.empty() ? nullptr : framework.FindValue(name);
    if (c && f && c->dtype_known && f->dtype_known && c->dtype != f->dtype) {
      out.push_back("dtype: " + name + " is framework " + DTypeName(f->dtype) + ", compiled " + DTypeName(c->dtype));
    }
  }
  for (const std::string& name : n.inputs) {
    const graph::Value* c = name.empty() ? nullptr : compiled.FindValue(name);
    const graph::Value* f = name.empty() ? nullptr : framework.FindValue(name);
    if (c && f && c->constant && !f->constant) out.push_back("constant folding: input " + name + " computed at compile time");
    if (c && f && c->dtype_known && f->dtype_known && c->dtype != f->dtype) {
      out.push_back("dtype: input " + name + " is framework " + DTypeName(f->dtype) + ", compiled " + DTypeName(c->dtype));
    }
  }
  if (!n.layout_from.empty()) out.push_back("layout: converts " + n.layout_from + " to " + n.layout_to);
  if (const AttrValue* layout = n.attrs.Find("layout")) {
    if (const std::string* s = std::get_if<std::string>(layout); s && *s != "NCHW") {
      out.push_back("layout: runs on " + *s + " data, given it by the layout pass (--disable-pass layout compiles without it)");
    }
  }
  return out;
}

// The node alone on the golden inputs, cast to the dtypes it takes in the
// compiled run (an input without a golden keeps the compiled run's value),
// held to the tolerance of the least precise float among its inputs and
// outputs: a float16 input carries float16's rounding into any output, and
// that rounding is the dtype's (a decision listed apart), not the kernel's.
TensorError Local(const Node& n, const TensorMap& values, const TensorMap& golden, const Graph& framework,
                  const ToleranceSpec& spec, Device* cpu, std::string& why_not, DType& judged_as) {
  TensorError worst;
  const OpSchema* schema = OpRegistry::Global().Find(n.op_type);
  if (!schema) {
    why_not = "no such op";
    return worst;
  }
  std::vector<Tensor> args;
  for (const std::string& in : n.inputs) {
    if (in.empty()) {
      args.emplace_back();
      continue;
    }
    auto found = values.find(in);
    if (found == values.end()) {
      why_not = "its input '" + in + "' was not computed";
      return worst;
    }
    const Tensor& real = found->second;
    auto g = golden.find(in);
    if (g == golden.end() || g->second.shape() != real.shape()) {
      args.push_back(real);
      continue;
    }
    StatusOr<Tensor> cast = g->second.CastTo(real.dtype());
    if (!cast.ok()) {
      why_not = cast.status().message();
      return worst;
    }
    args.push_back(*std::move(cast));
  }
  StatusOr<OpRun> run = Dispatcher::Global().Run(
      *schema, args, n.attrs, RunOptions{.device = cpu, .num_outputs = static_cast<int>(n.outputs.size()), .fingerprint = false});
  if (!run.ok()) {
    why_not = run.status().message();
    return worst;
  }
  std::vector<Tensor> all = args;
  all.insert(all.end(), run->outputs.begin(), run->outputs.end());
  judged_as = Narrowest(all, run->outputs.empty() ? DType::kF32 : run->outputs[0].dtype());
  bool any = false;
  for (size_t i = 0; i < n.outputs.size() && i < run->outputs.size(); ++i) {
    if (n.outputs[i].empty()) continue;
    StatusOr<Tensor> host = ToHost(run->outputs[i]);
    if (!host.ok()) continue;
    KeepWorst(worst, Measure(n.outputs[i], *host, golden, framework, spec, IsFloat(host->dtype()) ? judged_as : DType::kBool), any);
  }
  return worst;
}

std::string SafeName(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  while (!out.empty() && (out[0] == '_' || out[0] == '.')) out.erase(0, 1);
  return out.empty() ? "node" : out;
}

// Writes the node's real inputs under DIR/replay/NN_<name>/ and the ops-debug line that runs it on them.
Status WriteReplay(NodeAccuracy& a, int rank, const Node& n, const TensorMap& values, const AccuracyRequest& r) {
  const std::filesystem::path dir =
      std::filesystem::path(r.output_dir) / "replay" / ((rank < 9 ? "0" : "") + std::to_string(rank + 1) + "_" + SafeName(n.name));
  OPSCOPE_RETURN_IF_ERROR(MakeOutputDir(dir.string(), "output_dir"));
  std::vector<std::string> files;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i].empty() || !values.count(n.inputs[i])) continue;  // an omitted optional input: the op runs without it
    const std::string file = std::filesystem::absolute(dir / (std::to_string(i) + "_" + SafeName(n.inputs[i]) + ".npy")).string();
    OPSCOPE_RETURN_IF_ERROR(WriteNpy(file, values.at(n.inputs[i])).WithContext("output_dir"));
    files.push_back(file);
  }
  CommandLine c("ops-debug run");
  std::vector<std::string> plugins;
  for (const std::string& p : r.plugins) plugins.push_back(std::filesystem::absolute(p).string());
  c.Repeated("--plugin", plugins).Flag("--op", n.op_type);
  if (!files.empty()) c.Flag("--inputs", files, ",");
  if (!n.attrs.empty()) c.Flag("--attrs", n.attrs.ToString());
  c.Flag("--outputs", static_cast<int64_t>(n.outputs.size()));
  a.replay_files = files;
  a.replay = c.str();
  return Status::Ok();
}

std::string AccuracyCommand(const AccuracyRequest& r) {
  CommandLine c("inspector-cli accuracy");
  c.Arg(r.model);
  if (!r.output_dir.empty()) c.Flag("--output-dir", r.output_dir);
  if (r.keep_bytes >= 0) c.Flag("--keep-bytes", std::to_string(r.keep_bytes));
  if (!r.input_files.empty()) c.Flag("--inputs", r.input_files, ",");
  c.Flag("--seed", std::to_string(r.seed)).Repeated("--plugin", r.plugins);
  if (!r.disable_passes.empty()) c.Flag("--disable-pass", r.disable_passes, ",");
  if (!r.expected_files.empty()) c.Flag("--expected", r.expected_files, ",");
  c.Append(ToleranceSpecFlags(r.tolerance));
  return c.str();
}

}  // namespace

bool AccuracyReport::clean() const {
  if (first_divergent >= 0 || nodes.empty()) return false;  // nothing compared is no verdict
  return std::all_of(output_checks.begin(), output_checks.end(), [](const OutputCheck& c) { return c.passed; });
}

StatusOr<AccuracyReport> RunAccuracy(const AccuracyRequest& r) {
  if (r.replay < 0) return InvalidArgumentError("replay " + std::to_string(r.replay) + ": expected >= 0");
  for (const std::string& path : r.plugins) {
    auto p = LoadPlugin(path);
    if (!p.ok()) return std::move(p).status().WithContext("plugins");
  }
  OPSCOPE_ASSIGN_OR_RETURN(graph::Model model, graph::ImportOnnx(r.model));
  graph::PassManager passes = graph::PassManager::Default();
  OPSCOPE_RETURN_IF_ERROR(passes.Disable(r.disable_passes).WithContext("disable_passes"));
  OPSCOPE_RETURN_IF_ERROR(passes.Run(model).status());
  OPSCOPE_RETURN_IF_ERROR(graph::CheckExecutable(model));
  OPSCOPE_ASSIGN_OR_RETURN(TensorMap given, graph::ReadInputs(r.input_files, {}, model.compiled));
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<graph::ExpectedOutput> expected,
                           graph::ReadExpectedOutputs(r.expected_files, model.compiled));
  for (const graph::ExpectedOutput& e : expected) {
    OPSCOPE_RETURN_IF_ERROR(ResolveTolerance(r.tolerance, e.tensor.dtype()).status());
  }
  OPSCOPE_RETURN_IF_ERROR(ResolveTolerance(r.tolerance, DType::kF32).status());  // a bad rule before any work
  // A file where the folder goes is refused before any work.
  if (r.keep_bytes < -1) return InvalidArgumentError("keep_bytes " + std::to_string(r.keep_bytes) + ": expected >= 0");
  if (r.keep_bytes >= 0 && r.output_dir.empty()) return InvalidArgumentError("keep_bytes: spills to files under `output_dir`, give one");
  if (!r.output_dir.empty()) OPSCOPE_RETURN_IF_ERROR(MakeOutputDir(r.output_dir, "output_dir"));
  OPSCOPE_ASSIGN_OR_RETURN(Device * cpu, GetDevice("cpu"));

  // The compiled graph as the runtime executes it, for its inputs (given or
  // filled as `run` fills them) and outputs; then in order for every value.
  const auto ms_since = [](int64_t start) { return static_cast<double>(SteadyNowNs() - start) / 1e6; };
  int64_t start = SteadyNowNs();
  OPSCOPE_ASSIGN_OR_RETURN(graph::Schedule schedule, graph::ScheduleGraph(model.compiled, {.compute_streams = 1}));
  StatusOr<graph::ExecutionResult> executed =
      graph::Execute(model.compiled, schedule, {.device = cpu, .inputs = std::move(given), .seed = r.seed});
  if (!executed.ok()) return std::move(executed).status().WithContext(r.model);
  TensorMap values;
  // Both runs' intermediates through one store: in memory up to --keep-bytes, spilled past it.
  SpillStore store(r.output_dir + "/spill", r.keep_bytes);
  const graph::KeepValue keep = [&](const std::string& name, Tensor t) { return store.Keep("compiled " + name, std::move(t)); };
  OPSCOPE_RETURN_IF_ERROR(
      graph::EvaluateInOrder(model.compiled, executed->inputs, cpu, &values, keep).status().WithContext(r.model));

  const double compiled_ms = ms_since(start);
  AccuracyReport report{.model = r.model,
                        .framework_nodes = static_cast<int64_t>(model.framework.nodes().size()),
                        .compiled_nodes = static_cast<int64_t>(model.compiled.nodes().size()),
                        .disabled_passes = r.disable_passes,
                        .repro = AccuracyCommand(r)};
  report.compiled_ms = compiled_ms;
  start = SteadyNowNs();
  OPSCOPE_ASSIGN_OR_RETURN(TensorMap golden, GoldenChain(model.framework, executed->inputs, store, report.notes));
  GoldenThroughTransdata(model.compiled, golden);
  report.golden_ms = ms_since(start);
  start = SteadyNowNs();
  OPSCOPE_ASSIGN_OR_RETURN(report.output_checks, graph::CheckOutputs(expected, executed->outputs, r.tolerance));

  std::map<int64_t, std::string> framework_name;
  for (const Node& f : model.framework.nodes()) framework_name[f.id] = f.name.empty() ? f.op_type : f.name;
  std::map<int64_t, int> compiled_per_framework;  // a framework node the compiler split: one-to-many
  for (const Node& n : model.compiled.nodes()) {
    for (int64_t id : n.fused_from) ++compiled_per_framework[id];
  }
  std::vector<int64_t> order;  // data-flow position of each kept node
  int64_t position = 0;
  for (const Node& n : model.compiled.nodes()) {
    ++position;
    if (n.op_type == "Constant") continue;
    NodeAccuracy a{.node_id = n.id, .name = n.name.empty() ? n.op_type : n.name, .op_type = n.op_type};
    for (int64_t id : n.fused_from) a.framework_nodes.push_back(framework_name[id]);
    a.mapping = n.fused_from.empty()       ? "inserted by the compiler"
                : n.fused_from.size() == 1 ? "one-to-one"
                                           : "fuses " + std::to_string(n.fused_from.size()) + " framework nodes";
    if (n.fused_from.size() == 1 && compiled_per_framework[n.fused_from[0]] > 1) {
      a.mapping = "one of " + std::to_string(compiled_per_framework[n.fused_from[0]]) + " compiled nodes for framework node " +
                  framework_name[n.fused_from[0]];
    }
    bool any = false;
    for (const std::string& in : n.inputs) {
      if (!in.empty() && values.count(in)) KeepWorst(a.inherited, Measure(in, values.at(in), golden, model.framework, r.tolerance), any);
    }
    any = false;
    for (const std::string& out : n.outputs) {
      if (!out.empty() && values.count(out)) KeepWorst(a.output, Measure(out, values.at(out), golden, model.framework, r.tolerance), any);
    }
    std::string why_not;
    DType judged_as = DType::kF32;
    a.local = Local(n, values, golden, model.framework, r.tolerance, cpu, why_not, judged_as);
    if (!why_not.empty()) report.notes.push_back("compiled node '" + a.name + "' not run alone: " + why_not);
    if (!a.output.compared && !a.local.compared) continue;  // nothing of it has a golden: said by the notes above
    a.diverges = a.local.compared && a.local.mismatched > 0;
    // Inside a fused kernel: each stage it exposes, cut there and run alone.
    for (const graph::FusedStage& s : graph::FusedStages(n, model.framework)) {
      std::string why;
      DType stage_judged_as = DType::kF32;
      TensorError e = Local(s.node, values, golden, model.framework, r.tolerance, cpu, why, stage_judged_as);
      if (!e.compared) continue;
      const bool out = e.mismatched > 0;
      a.stages.push_back({.framework_node = s.framework_node, .local = std::move(e), .diverges = out});
    }
    const DType rule_dtype = a.local.compared ? (IsFloat(a.local.compiled_dtype) ? judged_as : a.local.compiled_dtype)
                                              : a.output.compiled_dtype;
    if (StatusOr<Tolerance> t = ResolveTolerance(r.tolerance, rule_dtype); t.ok()) {
      a.tolerance = std::string(CompareRuleName(t->rule)) + " " + DescribeTolerance(*t) + " (" + DTypeName(rule_dtype) +
                    (IsFloat(rule_dtype) ? "'s, its least precise float)" : ")");
    }
    a.decisions = Decisions(n, model.compiled, model.framework, a.framework_nodes);
    std::vector<Tensor> real;
    for (const std::string& in : n.inputs) {
      auto found = in.empty() ? values.end() : values.find(in);
      real.push_back(found == values.end() ? Tensor() : found->second);
    }
    a.instance_key = Hex16(OpInstanceKey(n.op_type, n.attrs, real));
    report.nodes.push_back(std::move(a));
    order.push_back(position);
  }
  // The first along the data flow whose own error crosses the tolerance, then
  // every node by its local error.
  std::vector<size_t> rank(report.nodes.size());
  for (size_t i = 0; i < rank.size(); ++i) rank[i] = i;
  std::stable_sort(rank.begin(), rank.end(), [&](size_t x, size_t y) {
    const NodeAccuracy &a = report.nodes[x], &b = report.nodes[y];
    if (a.diverges != b.diverges) return a.diverges;
    return Worse(a.local, b.local);
  });
  size_t first = rank.size();
  for (size_t i = 0; i < report.nodes.size(); ++i) {
    if (report.nodes[i].diverges && (first == rank.size() || order[i] < order[first])) first = i;
  }
  std::vector<NodeAccuracy> ranked;
  for (size_t i : rank) {
    if (i == first) report.first_divergent = static_cast<int>(ranked.size());
    ranked.push_back(std::move(report.nodes[i]));
  }
  report.nodes = std::move(ranked);
  report.judge_ms = ms_since(start);
  report.kept_bytes = store.kept_bytes();
  report.spilled_bytes = store.spilled_bytes();
  report.spilled_tensors = store.spilled_tensors();

  if (!r.output_dir.empty()) {
    for (int i = 0; i < static_cast<int>(report.nodes.size()) && i < r.replay; ++i) {
      NodeAccuracy& a = report.nodes[i];
      if (!a.diverges) break;
      OPSCOPE_RETURN_IF_ERROR(WriteReplay(a, i, *model.compiled.FindNode(a.node_id), values, r));
    }
    // Beside a run of this model: its identity, for `summary DIR`.
    if (StatusOr<graph::RunIdentity> run = graph::CheckRunFolder(r.output_dir); run.ok()) {
      StatusOr<std::string> fingerprint = graph::ModelFingerprint(r.model);
      if (fingerprint.ok() && *fingerprint == run->model_fingerprint) {
        report.run_id = run->id;
        report.model_fingerprint = run->model_fingerprint;
      }
    }
    const std::string file = r.output_dir + "/" + kAccuracyFile;
    OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(file, AccuracyJsonText(report)).WithContext(kAccuracyFile));
    report.files.push_back(file);
  }
  return report;
}

}  // namespace opscope
