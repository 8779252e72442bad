// ProfileChain (opscope/profile.h): the stages of a --baseline-syntax chain
// profiled one by one, then held together as a graph for the suspects.
#include <algorithm>
#include <cstdio>
#include <map>

#include "analysis/harness/golden.h"
#include "capture/dispatcher.h"
#include "core/text_format.h"
#include "opscope/npy.h"
#include "opscope/plugin.h"
#include "opscope/profile.h"

namespace opscope {

namespace {

// Stage 1's inputs as stand-ins for the chain's shape checks: the --inputs
// files, else empty tensors of --input-shapes and --dtype.
StatusOr<std::vector<Tensor>> StandIns(const OpRunRequest& run) {
  std::vector<Tensor> out;
  if (!run.input_files.empty()) {
    for (const std::string& f : run.input_files) {
      auto t = ReadNpy(f);
      if (!t.ok()) return std::move(t).status().WithContext("input_files");
      out.push_back(*std::move(t));
    }
    return out;
  }
  if (run.input_shapes.empty()) return InvalidArgumentError("chain: expected `input_shapes` or `input_files` for stage 1");
  for (size_t i = 0; i < run.input_shapes.size(); ++i) {
    if (std::find(run.omitted_inputs.begin(), run.omitted_inputs.end(), static_cast<int>(i)) !=
        run.omitted_inputs.end()) {
      out.emplace_back();  // "[4,8];;[4,8]": an optional input left out
      continue;
    }
    const DType dtype = run.dtypes.empty() ? DType::kF32 : run.dtypes[std::min(i, run.dtypes.size() - 1)];
    OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtype, run.input_shapes[i]));
    out.push_back(std::move(t));
  }
  return out;
}

// What a stage's kernel wrote, as the next stage's inputs: every output read
// back in full with the shape and dtype inference gave. False when any was
// not (a failed call, --readback stats or sample); `out` is then left empty.
bool RealOutputs(const OpRunReport& report, const std::vector<TensorDesc>& expected, std::vector<Tensor>& out) {
  if (report.readback != "full" || report.outputs.size() != expected.size()) return false;
  for (size_t i = 0; i < expected.size(); ++i) {
    const Tensor& t = report.outputs[i].actual;
    if (!t.defined() || t.dtype() != expected[i].dtype || t.shape() != expected[i].shape) {
      out.clear();
      return false;
    }
    out.push_back(t);
  }
  return true;
}

std::string Mib(double bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f MiB", bytes / (1 << 20));
  return s;
}

}  // namespace

StatusOr<ChainProfile> ProfileChain(const ProfileRequest& base, const std::string& chain) {
  if (chain.empty()) return InvalidArgumentError("chain: expected ops in the `baseline` syntax, \"OpA{attrs}>OpB\"");
  for (const std::string& p : base.run.plugins) {
    auto loaded = LoadPlugin(p);
    if (!loaded.ok()) return std::move(loaded).status().WithContext("plugins");
  }
  OPSCOPE_ASSIGN_OR_RETURN(Device* device, GetDevice(base.run.device));
  OPSCOPE_ASSIGN_OR_RETURN(std::vector<Tensor> current, StandIns(base.run));
  static const OpSchema kNoOpUnderTest;  // no stage reuses `attrs`
  auto parsed = ParseBaseline(chain, kNoOpUnderTest, Attrs(), device, current);
  if (!parsed.ok()) {
    // The parser speaks of `baseline`, whose syntax this is.
    std::string msg = parsed.status().message();
    if (msg.starts_with("baseline")) msg.replace(0, 8, "chain");
    return InvalidArgumentError(msg);
  }
  ChainProfile out{.chain = chain};
  std::map<std::string, int> seen;
  bool intermediates = true;  // `current` holds what the stage before wrote (not stand-ins)
  for (size_t k = 0; k < parsed->stages.size(); ++k) {
    const BaselineStage& s = parsed->stages[k];
    ProfileRequest r = base;
    r.run.op = s.op->name;
    r.run.attrs.clear();
    r.run.attr_values = s.attrs;
    r.run.tunables.clear();
    r.run.baseline.clear();
    r.run.report.clear();
    r.run.device = parsed->device->name();
    r.timeline.clear();
    if (k > 0) {
      // The chain's own intermediates: what stage k-1's kernel wrote, so a
      // stage whose time or result depends on its data (a Relu after a Sub
      // sees the signs the Sub made) is measured on what it would see.
      r.run.input_files.clear();
      r.run.input_tensors.clear();
      r.run.input_shapes.clear();
      r.run.dtypes.clear();
      if (intermediates) {
        r.run.input_tensors = current;
      } else {
        for (const Tensor& t : current) {
          r.run.input_shapes.push_back(t.shape());
          r.run.dtypes.push_back(t.dtype());
        }
      }
    }
    auto report = ProfileOpInstance(r);
    if (!report.ok()) return std::move(report).status().WithContext("chain: stage " + std::to_string(k + 1) + " " + s.op->name);
    const int n = ++seen[s.op->name];
    ChainStageProfile stage{.name = n == 1 ? s.op->name : s.op->name + "#" + std::to_string(n), .report = *std::move(report)};

    SuspectNode node{.name = stage.name, .op = s.op, .on_critical_path = true};
    for (const OpRunInput& i : stage.report.inputs) node.inputs.push_back(TensorDesc{i.tensor.dtype(), i.tensor.shape()});
    Attrs attrs = s.attrs;
    (void)s.op->ValidateAttrs(attrs);  // the run validated them; this fills the defaults in
    node.attrs = attrs;
    Attrs infer_attrs = s.attrs;
    auto outs = Dispatcher::Global().InferOutputs(*s.op, current, infer_attrs, -1);
    if (!outs.ok()) return std::move(outs).status().WithContext("chain: stage " + s.op->name);
    node.outputs = *outs;
    if (stage.report.profile) {
      node.launches = stage.report.profile->launches;
      node.roofline = stage.report.profile->roofline;
      out.facts.bandwidth_gbs = stage.report.profile->peaks.bandwidth_gbs;
    }
    current.clear();
    intermediates = RealOutputs(stage.report, node.outputs, current);
    if (!intermediates) {
      if (k + 1 < parsed->stages.size()) {
        stage.note = "the next stage runs on generated inputs: this stage's outputs were not read back";
      }
      for (const TensorDesc& d : node.outputs) {
        OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(d.dtype, d.shape));
        current.push_back(std::move(t));
      }
    }
    out.facts.nodes.push_back(std::move(node));
    out.stages.push_back(std::move(stage));
  }
  // Stage k's outputs are stage k+1's inputs, in order; the last stage's are the chain's outputs.
  for (size_t k = 0; k + 1 < out.facts.nodes.size(); ++k) {
    const std::vector<TensorDesc>& outs = out.facts.nodes[k].outputs;
    for (size_t i = 0; i < outs.size(); ++i) {
      out.facts.edges.push_back({.producer = static_cast<int>(k), .consumer = static_cast<int>(k + 1),
                                 .tensor = out.stages[k].name + ".out" + std::to_string(i), .bytes = outs[i].bytes()});
    }
  }
  out.facts.compute_units = parsed->device->info().compute_units;
  out.suspects = FindSuspects(out.facts);
  return out;
}

void PrintSuspects(const std::vector<Suspect>& suspects, std::ostream& out) {
  if (suspects.empty()) {
    out << "suspects  none (no fusable pair, no read pattern the index maps show, no small grid far below its bound)\n";
    return;
  }
  out << "suspects  ranked by the run time they could save (off the critical path: after, by node time)\n";
  int rank = 0;
  for (const Suspect& s : suspects) {
    out << "  " << ++rank << ". [" << SuspectKindName(s.kind) << "] " << s.text << (s.critical ? "" : "  (off the critical path)")
        << "\n";
  }
}

void PrintChainProfile(const ChainProfile& c, std::ostream& out, bool color) {
  out << "chain     " << c.chain << "  " << c.stages.size()
      << " stage(s), each on the outputs of the one before, judged and timed alone\n";
  for (size_t k = 0; k < c.stages.size(); ++k) {
    const OpRunReport& r = c.stages[k].report;
    char head[64];
    std::snprintf(head, sizeof head, "  %zu. %-18s", k + 1, c.stages[k].name.c_str());
    out << head << " " << RunStatusName(r.status());
    if (!r.kernel_error.empty()) out << "  " << r.kernel_error;
    if (r.profile) {
      const RooflinePoint& p = r.profile->roofline;
      out << "  median " << FormatMicros(r.profile->device_us.median);
      if (p.has_cost) {
        char eff[32];
        std::snprintf(eff, sizeof eff, "%.1f%%", 100 * p.efficiency());
        out << "  " << Mib(static_cast<double>(p.bytes)) << "  " << BoundName(p.bound) << "-bound  lower bound "
            << FormatMicros(p.lower_bound_us) << "  efficiency " << (p.efficiency() >= 0 ? eff : "n/a");
        if (const std::string note = AboveRoofNote(p); !note.empty()) out << "  (" << note << ")";
        if (p.slowdown() > 2) {
          char warn[48];
          std::snprintf(warn, sizeof warn, "%.1fx its lower bound", p.slowdown());
          out << "  " << (color ? std::string("\033[33m") + warn + "\033[0m" : std::string(warn));
        }
      } else {
        out << "  no cost model: timed only";
      }
    }
    out << "\n";
    if (!c.stages[k].note.empty()) out << "     " << c.stages[k].note << "\n";
  }
  if (!c.stages.empty() && c.stages[0].report.profile) {
    const OpProfile& p = *c.stages[0].report.profile;
    // The note has no bound on its length (a cache path, the roofs' age): streamed, never cut.
    char figures[96];
    std::snprintf(figures, sizeof figures, "peaks     memory %.1f GB/s, compute %.1f GFLOP/s float32  (", p.peaks.bandwidth_gbs,
                  p.peaks.gflops_f32);
    out << figures << p.peaks_note << ")\n";
  }
  PrintSuspects(c.suspects, out);
}

}  // namespace opscope
