#include "analysis/harness/repro.h"

#include <cmath>
#include <optional>

#include <filesystem>

#include "capture/dispatcher.h"
#include "analysis/harness/readback.h"
#include "analysis/harness/minimal_repro.h"
#include "core/command_line.h"
#include "core/file_util.h"
#include "core/text_format.h"
#include "analysis/harness/inputs.h"
#include "opscope/npy.h"

namespace opscope {

namespace {

// Perturbation runs the op ~2·log2(n) times per dim and input: past this
// many input elements, ask for an index map instead.
constexpr int64_t kMaxPerturbElements = int64_t{1} << 24;

}  // namespace

std::string TunablesText(const std::map<std::string, int64_t>& tunables) {
  std::string s;
  for (const auto& [name, value] : tunables) s += (s.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return s;
}

std::string ReproCommand(const OpRunRequest& f, const OpSchema& op, const Attrs& attrs,
                         const std::vector<OpRunInput>& inputs, const std::vector<std::string>& input_files) {
  CommandLine c("ops-debug run");
  c.Repeated("--plugin", f.plugins).Flag("--op", op.name);
  const std::vector<std::string>& files = input_files.empty() ? f.input_files : input_files;
  if (!files.empty()) {
    c.Flag("--inputs", files, ",");
  } else if (!inputs.empty()) {
    // An input left out is an empty shape ("[4,8];;[4,8]"); its dtype entry,
    // which --dtype needs all the same, is unused: the first present input's.
    std::vector<std::string> shapes, dtypes;
    DType stand_in = DType::kF32;
    for (const OpRunInput& in : inputs) {
      if (in.tensor.defined()) {
        stand_in = in.tensor.dtype();
        break;
      }
    }
    for (const OpRunInput& in : inputs) {
      const bool present = in.tensor.defined();
      shapes.push_back(present ? in.tensor.shape().ToString() : "");
      dtypes.push_back(DTypeName(present ? in.tensor.dtype() : stand_in));
    }
    c.Flag("--input-shapes", shapes, ";").Flag("--dtype", dtypes, ",");
    if (f.input_tensors.empty()) c.Flag("--fill", FillKindName(f.fill)).Flag("--seed", std::to_string(f.seed));
  }
  if (!attrs.empty()) c.Flag("--attrs", attrs.ToString());
  c.Flag("--device", f.device);
  if (!f.tunables.empty()) c.Flag("--tunables", TunablesText(f.tunables));
  c.FlagIf(!f.baseline.empty(), "--baseline", f.baseline);
  if (!f.expected_files.empty() && input_files.empty()) c.Flag("--expected", f.expected_files, ",");
  if (f.num_outputs >= 0 && f.expected_files.empty()) c.Flag("--outputs", f.num_outputs);
  c.Append(ToleranceSpecFlags(f.tolerance));
  if (f.repeat > 1) c.Flag("--repeat", f.repeat);
  if (f.readback != Readback::kFull) c.Flag("--readback", ReadbackName(f.readback));
  if (f.trace) c.Switch("--trace");
  if (f.checked) c.Switch("--checked");
  if (!f.input_tensors.empty() && input_files.empty()) c.Append("   # the inputs were given as tensors: other data");
  return c.str();
}

std::string ReproScript(const std::string& comment, const OpRunRequest& flags, const OpSchema& op, const Attrs& attrs,
                        const std::vector<OpRunInput>& inputs, const std::vector<std::string>& input_files) {
  namespace fs = std::filesystem;
  auto absolute = [](std::vector<std::string> paths) {
    for (std::string& p : paths) {
      std::error_code ec;
      const fs::path a = fs::absolute(p, ec);
      if (!ec) p = a.lexically_normal().string();
    }
    return paths;
  };
  OpRunRequest f = flags;
  f.plugins = absolute(f.plugins);
  f.input_files = absolute(f.input_files);
  f.expected_files = absolute(f.expected_files);
  std::string command = ReproCommand(f, op, attrs, inputs, absolute(input_files));
  // The tool: this very ops-debug where it is one, else whichever is on PATH.
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  std::string prelude;
  const std::string tool = "ops-debug";
  if (!ec && self.filename() == tool) {
    command = ShellQuote(self.string()) + command.substr(tool.size());
  } else {
    prelude = "command -v ops-debug >/dev/null || { echo \"repro.sh: ops-debug is not on PATH: add opscope's build/bin "
              "(or the bin of its install prefix) to PATH\" >&2; exit 2; }\n";
  }
  return "#!/bin/sh\n# " + comment + "\n" + prelude + command + "\n";
}

namespace {

// The kind of failure a compare shows: a crop counts only when it fails the
// same way (NaN where the original had NaN, never-written where it was never
// written, finite errors of the same order), not merely somehow.
struct FailureSignature {
  std::string kind;  // "NaN", "Inf", "error"
  int order = 0;     // floor(log10(max abs error)) for "error"
  double max_abs_err = 0;
};

FailureSignature SignatureOf(const CompareResult& c) {
  if (c.nan_only_actual > 0) return {"NaN", 0, c.max_abs_err};
  if (c.inf_only_actual > 0) return {"Inf", 0, c.max_abs_err};
  const double e = c.max_abs_err > 0 ? c.max_abs_err : 1e-300;
  return {"error", static_cast<int>(std::floor(std::log10(e))), c.max_abs_err};
}

bool SameFailure(const FailureSignature& a, const FailureSignature& b) {
  return a.kind == b.kind && (a.kind != "error" || std::abs(a.order - b.order) <= 1);
}

std::string StillShows(const FailureSignature& crop, const FailureSignature& original) {
  if (crop.kind != "error") return crop.kind + " in actual only, as the original";
  return "max error " + ShortNum(crop.max_abs_err) + " (was " + ShortNum(original.max_abs_err) + ")";
}

}  // namespace

ReproOutcome BuildReproducer(const ReproContext& ctx, const OpRunReport& report) {
  ReproOutcome out;
  const OpRunOutput* bad = nullptr;
  size_t bad_index = 0;
  for (size_t i = 0; i < report.outputs.size(); ++i) {
    if (!report.outputs[i].passed()) { bad = &report.outputs[i]; bad_index = i; break; }
  }
  if (bad == nullptr) return out;
  out.output = bad->name;
  if (bad->compare.worst.empty() || report.readback != "full") {
    out.note = "no reproducer: it needs the full readback of the failing output (--readback full)";
    return out;
  }
  if (!ctx.flags.expected_files.empty() || !ctx.flags.expected_tensors.empty()) {
    out.note = "no reproducer: --expected files hold the golden of the original inputs only; "
               "use the reference or --baseline to judge cropped inputs";
    return out;
  }
  out.coords = bad->compare.worst[0].coords;
  std::vector<Tensor> tensors;
  std::vector<std::string> names;
  std::vector<bool> skip;
  int64_t elements = 0;
  for (const OpRunInput& in : ctx.inputs) {
    tensors.push_back(in.tensor);
    names.push_back(in.name);
    elements += in.tensor.numel();
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    skip.push_back(!tensors[i].defined() ||
                   (i < ctx.op.inputs.size() ? ctx.op.inputs[i].value_input : ctx.op.inputs.back().value_input));
  }

  // The kernel on some inputs, that output only.
  auto kernel = [&](const std::vector<Tensor>& in) -> StatusOr<std::vector<Tensor>> {
    auto run = Dispatcher::Global().Run(ctx.op, in, ctx.attrs,
                                        RunOptions{.device = ctx.device, .tunables = ctx.tunables, .num_outputs = ctx.num_outputs,
                                                   .fingerprint = false, .poison_outputs = true});
    if (!run.ok()) return std::move(run).status();
    std::vector<Tensor> host;
    for (const Tensor& t : run->outputs) {
      if (!t.defined()) { host.push_back(t); continue; }
      OPSCOPE_ASSIGN_OR_RETURN(Tensor h, ToHost(t));
      host.push_back(std::move(h));
    }
    return host;
  };

  if (ctx.op.input_region) {
    std::vector<Tensor> outputs;
    for (const OpRunOutput& o : report.outputs) outputs.push_back(o.actual);
    out.region = RegionFromIndexMap(ctx.op, tensors, outputs, ctx.attrs, static_cast<int>(bad_index), out.coords);
  } else if (elements > kMaxPerturbElements) {
    out.note = "no reproducer: inputs of " + std::to_string(elements) +
               " elements are too large to search by perturbation; declare the op's index map (OpDef::InputRegion)";
    return out;
  } else {
    auto region = FindRegionByPerturbation(tensors, out.coords, [&](const std::vector<Tensor>& in) -> StatusOr<Tensor> {
      OPSCOPE_ASSIGN_OR_RETURN(std::vector<Tensor> outs, kernel(in));
      return outs.at(bad_index);
    }, skip);
    if (!region.ok()) {
      out.note = "no reproducer: the perturbation search failed: " + region.status().ToString();
      return out;
    }
    out.region = *std::move(region);
  }
  out.region_text = DescribeRegion(names, out.region);

  // Still fails the same way: the studied output out of tolerance with the
  // original's signature. The kernel erring on a crop (a smaller buffer it
  // runs outside of) is a different failure, so not a reproducer.
  const FailureSignature original = SignatureOf(bad->compare);
  auto crop_signature = [&](const std::vector<Tensor>& in) -> StatusOr<std::optional<FailureSignature>> {
    OPSCOPE_ASSIGN_OR_RETURN(std::vector<Tensor> actual, kernel(in));
    OPSCOPE_ASSIGN_OR_RETURN(std::vector<Tensor> gold, ctx.golden(in));
    if (bad_index >= actual.size() || bad_index >= gold.size() || !actual[bad_index].defined() ||
        !gold[bad_index].defined() || actual[bad_index].shape() != gold[bad_index].shape()) {
      return std::optional<FailureSignature>();
    }
    OPSCOPE_ASSIGN_OR_RETURN(CompareResult c, CompareTensors(actual[bad_index], gold[bad_index],
                                                             ctx.tolerances[bad_index], CompareOptions{.worst_k = 1}));
    if (c.passed()) return std::optional<FailureSignature>();
    return std::optional<FailureSignature>(SignatureOf(c));
  };
  auto fails = [&](const std::vector<Tensor>& in) -> StatusOr<bool> {
    auto sig = crop_signature(in);
    if (!sig.ok()) return false;  // the kernel or the reference refused the crop: not the same failure
    return sig->has_value() && SameFailure(**sig, original);
  };
  out.repro = MinimizeInputs(tensors, out.region, fails);
  if (!out.repro.found) {
    out.note = out.repro.note;
    return out;
  }
  if (auto sig = crop_signature(out.repro.inputs); sig.ok() && sig->has_value()) {
    out.still_shows = StillShows(**sig, original);
  }

  const std::filesystem::path dir(ctx.flags.repro_dir);
  for (size_t i = 0; i < out.repro.inputs.size(); ++i) {
    const std::string path = (dir / (names[i] + ".npy")).string();
    Status st = WriteNpy(path, out.repro.inputs[i]);
    if (!st.ok()) {
      out.note = "no reproducer: " + st.ToString();
      out.files.clear();
      return out;
    }
    out.files.push_back(path);
  }
  out.command = ReproCommand(ctx.flags, ctx.op, ctx.attrs, ctx.inputs, out.files);
  Status st = WriteFileAtomic((dir / "repro.sh").string(),
                              ReproScript(report.op + ": cropped around " + out.region_text, ctx.flags, ctx.op, ctx.attrs,
                                          ctx.inputs, out.files));
  if (st.ok()) std::filesystem::permissions(dir / "repro.sh", std::filesystem::perms::owner_exec,
                                            std::filesystem::perm_options::add);
  return out;
}

}  // namespace opscope
