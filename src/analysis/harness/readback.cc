#include "analysis/harness/readback.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "capture/dispatcher.h"
#include "core/text_format.h"

namespace opscope {

namespace {

constexpr char kStatsOp[] = "opscope_tensor_stats";
constexpr char kSampleOp[] = "opscope_tensor_sample";

TensorStats StatsFrom(const Tensor& t) {
  const double* s = t.data<double>();
  return {static_cast<int64_t>(s[0]), static_cast<int64_t>(s[1]), static_cast<int64_t>(s[2]), s[3], s[4], s[5], s[6]};
}

// Runs a readback op on `device` (nullptr: its reference on the host) and
// brings its small output home.
StatusOr<Tensor> Summarize(const char* op, const Tensor& t, Device* device) {
  Attrs attrs;
  if (std::string(op) == kSampleOp) attrs.Set("count", kReadbackSampleCount);
  auto run = Dispatcher::Global().Run(op, {t}, attrs, RunOptions{.device = device, .fingerprint = false});
  if (!run.ok()) return std::move(run).status().WithContext("readback");
  return ToHost(run->outputs[0]);
}

std::vector<std::string> StatsFindings(const TensorStats& a, const TensorStats& e, const Tolerance& tol) {
  std::vector<std::string> out;
  if (a.nan != e.nan) out.push_back("NaN count " + std::to_string(a.nan) + " vs " + std::to_string(e.nan));
  if (a.inf != e.inf) out.push_back("Inf count " + std::to_string(a.inf) + " vs " + std::to_string(e.inf));
  const double atol = tol.rule == CompareRule::kBitExact ? 0 : tol.atol;
  const double rtol = tol.rule == CompareRule::kBitExact ? 0 : tol.rtol;
  auto check = [&](const char* what, double av, double ev) {
    if (std::fabs(av - ev) <= atol + rtol * std::fabs(ev)) return;
    out.push_back(std::string(what) + " " + ShortNum(av) + " vs " + ShortNum(ev));
  };
  check("min", a.min, e.min);
  check("max", a.max, e.max);
  check("mean", a.mean, e.mean);
  check("rms", a.rms, e.rms);
  return out;
}

// Sample position k is element k*stride of the original: put the original's
// coordinates back on every element the result names.
void MapSampleIndices(CompareResult& c, const Shape& shape, int64_t stride) {
  auto map = [&](int64_t& index, std::vector<int64_t>& coords) {
    if (index < 0) return;
    index *= stride;
    coords = UnravelIndex(index, shape);
  };
  map(c.max_abs_index, c.max_abs_coords);
  map(c.max_rel_index, c.max_rel_coords);
  if (c.first_mismatch_index >= 0) c.first_mismatch_index *= stride;
  for (CompareElement& w : c.worst) map(w.index, w.coords);
  c.mismatches_by_dim.clear();
  c.abs_err_by_dim.clear();
  if (!c.passed()) c.pattern = "sampled readback: " + std::to_string(c.total) + " evenly spaced elements, no pattern";
}

// Elements still holding the dispatcher's poison (every byte 0xFF: a NaN no
// arithmetic produces, or -1 / the largest value for integers where expected differs): the
// kernel never wrote them. Said as the slice they fill when they fill one.
std::optional<CompareFinding> NeverWritten(const std::string& name, const Tensor& actual, const Tensor& expected,
                                           int64_t mismatched) {
  if (!actual.is_contiguous() || !actual.on_host() || actual.numel() == 0) return std::nullopt;
  const Shape& shape = actual.shape();
  const size_t width = actual.element_size();
  const auto* bytes = static_cast<const unsigned char*>(actual.raw_data());
  const bool integer = !IsFloat(actual.dtype());
  std::vector<int64_t> lo(shape.rank(), INT64_MAX), hi(shape.rank(), -1);
  int64_t count = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const unsigned char* p = bytes + static_cast<size_t>(i) * width;
    bool poisoned = true;
    for (size_t b = 0; b < width && poisoned; ++b) poisoned = p[b] == 0xFF;
    if (!poisoned) continue;
    const double want = expected.FlatGetAsDouble(i);
    if (integer ? actual.FlatGetAsDouble(i) == want : std::isnan(want)) continue;  // the poison is the right answer
    ++count;
    int64_t rest = i;  // the coordinates, last dim first, with no allocation per element
    for (int d = shape.rank() - 1; d >= 0; --d) {
      const int64_t c = shape[d] > 0 ? rest % shape[d] : 0;
      rest = shape[d] > 0 ? rest / shape[d] : rest;
      lo[d] = std::min(lo[d], c), hi[d] = std::max(hi[d], c);
    }
  }
  if (count == 0) return std::nullopt;
  std::string box = name + "[";
  int64_t volume = 1;
  for (int d = 0; d < shape.rank(); ++d) {
    volume *= hi[d] - lo[d] + 1;
    box += d ? ", " : "";
    if (lo[d] == 0 && hi[d] == shape[d] - 1) box += ":";
    else if (lo[d] == hi[d]) box += std::to_string(lo[d]);
    else box += std::to_string(lo[d]) + ":" + std::to_string(hi[d] + 1);
  }
  box += "]";
  const std::string n = WithThousands(count) + (count == 1 ? " element" : " elements");
  const std::string text = volume == count ? box + " never written by the kernel (" + n + ")"
                                           : n + " of " + name + " never written by the kernel, all within " + box;
  return CompareFinding{"never_written", name, text, mismatched ? static_cast<double>(count) / mismatched : 0,
                        static_cast<double>(count) / static_cast<double>(actual.numel()),
                        {{"elements", static_cast<double>(count)}}};
}

}  // namespace

StatusOr<Readback> ParseReadbackName(std::string_view text) {
  if (text == "full") return Readback::kFull;
  if (text == "stats") return Readback::kStats;
  if (text == "sample") return Readback::kSample;
  return InvalidArgumentError("readback '" + std::string(text) + "': expected full, stats or sample");
}

Status CheckReadback(Readback r, const std::string& backend) {
  if (r == Readback::kFull) return Status::Ok();
  const OpSchema* op = OpRegistry::Global().Find(r == Readback::kStats ? kStatsOp : kSampleOp);
  if (op == nullptr || !op->kernels.count(backend)) {
    return InvalidArgumentError(std::string("readback ") + ReadbackName(r) + ": the " + backend +
                                " backend has no kernel to summarise outputs on the device; use `readback` full");
  }
  return Status::Ok();
}

const char* ReadbackName(Readback r) {
  switch (r) {
    case Readback::kFull: return "full";
    case Readback::kStats: return "stats";
    case Readback::kSample: return "sample";
  }
  return "?";
}

StatusOr<OpRunOutput> ReadBackAndCompare(Readback r, const std::string& name, const Tensor& actual, const Tensor& golden,
                                       const Tolerance& tol, int worst_k, Device* device,
                                       const std::vector<OpRunInput>& inputs) {
  OpRunOutput out;
  out.name = name;
  if (r == Readback::kFull) {
    OPSCOPE_ASSIGN_OR_RETURN(out.actual, ToHost(actual));
    out.expected = golden;
    CompareOptions options{.worst_k = worst_k};
    bool on_device = false;
    for (const OpRunInput& in : inputs) {
      if (in.tensor.defined() && in.tensor.on_host()) options.inputs.push_back({in.name, in.tensor});
      on_device = on_device || (in.tensor.defined() && !in.tensor.on_host());
    }
    OPSCOPE_ASSIGN_OR_RETURN(out.compare, CompareTensors(out.actual, out.expected, tol, options));
    if (!out.compare.passed() && on_device) {
      // The inputs are read back only for a failure, where their values can say why.
      options.inputs.clear();
      for (const OpRunInput& in : inputs) {
        if (!in.tensor.defined()) continue;
        OPSCOPE_ASSIGN_OR_RETURN(Tensor host, ToHost(in.tensor));
        options.inputs.push_back({in.name, host});
      }
      OPSCOPE_ASSIGN_OR_RETURN(out.compare, CompareTensors(out.actual, out.expected, tol, options));
    }
    if (!out.compare.passed()) {
      if (auto unwritten = NeverWritten(name, out.actual, out.expected, out.compare.mismatched)) {
        out.compare.findings.insert(out.compare.findings.begin(), *unwritten);
      }
    }
    return out;
  }
  if (r == Readback::kStats) {
    OPSCOPE_ASSIGN_OR_RETURN(out.actual, Summarize(kStatsOp, actual, device));
    OPSCOPE_ASSIGN_OR_RETURN(out.expected, Summarize(kStatsOp, golden, nullptr));
    out.actual_stats = StatsFrom(out.actual);
    out.expected_stats = StatsFrom(out.expected);
    out.stats_findings = StatsFindings(*out.actual_stats, *out.expected_stats, tol);
    out.compare.tolerance = tol;
    out.compare.total = actual.numel();
    return out;
  }
  OPSCOPE_ASSIGN_OR_RETURN(out.actual, Summarize(kSampleOp, actual, device));
  OPSCOPE_ASSIGN_OR_RETURN(out.expected, Summarize(kSampleOp, golden, nullptr));
  OPSCOPE_ASSIGN_OR_RETURN(out.compare, CompareTensors(out.actual, out.expected, tol, CompareOptions{.worst_k = worst_k}));
  const int64_t n = actual.numel();
  MapSampleIndices(out.compare, actual.shape(), std::max<int64_t>(1, (n + kReadbackSampleCount - 1) / kReadbackSampleCount));
  return out;
}

}  // namespace opscope
