// FindSuspects and ReadPatternOf (opscope/suspects.h).
#include "opscope/suspects.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/text_format.h"

namespace opscope {

namespace {

std::string Mib(int64_t bytes) {
  char s[64];
  std::snprintf(s, sizeof s, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  return s;
}

std::string Num(double v, int digits) {
  char s[32];
  std::snprintf(s, sizeof s, "%.*f", digits, v);
  return s;
}

std::vector<int64_t> Unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> c(shape.rank());
  for (int d = shape.rank() - 1; d >= 0; --d) {
    c[d] = flat % shape.dim(d);
    flat /= shape.dim(d);
  }
  return c;
}

// The box clamped to the tensor; empty when its rank is not the tensor's.
std::optional<IndexBox> Clamp(const IndexBox& b, const Shape& s) {
  if (static_cast<int>(b.lo.size()) != s.rank() || b.hi.size() != b.lo.size()) return std::nullopt;
  IndexBox c = b;
  for (int d = 0; d < s.rank(); ++d) {
    c.lo[d] = std::clamp<int64_t>(c.lo[d], 0, s.dim(d));
    c.hi[d] = std::clamp<int64_t>(c.hi[d], c.lo[d], s.dim(d));
  }
  return c;
}

// splitmix64's finaliser: a fixed, well-spread hash.
uint64_t Scatter(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int64_t FlatOffset(const std::vector<int64_t>& coords, const Shape& s) {
  int64_t off = 0;
  for (int d = 0; d < s.rank(); ++d) off = off * s.dim(d) + coords[d];
  return off;
}

// The time a node loses against its lower bound; 0 when untimed or unbounded.
double LostUs(const RooflinePoint& r) {
  if (!r.has_cost || r.bound == Bound::kNone || !(r.measured_us >= 0)) return 0;
  return std::max(0.0, r.measured_us - r.lower_bound_us);
}

std::string BoundNote(const RooflinePoint& r) {
  if (!(r.measured_us >= 0)) return "untimed";
  if (!r.has_cost || r.bound == Bound::kNone) return "no bound (no cost model)";
  return Num(r.slowdown(), 1) + "x its lower bound, about " + FormatMicros(LostUs(r)) + " to gain";
}

std::optional<Suspect> ReadsSuspect(const SuspectNode& n, int input, const SuspectOptions& o) {
  if (!n.op) return std::nullopt;
  // A small input read many times over is served from cache: naming it would
  // hide the tensor that is walked with a stride.
  if (input < static_cast<int>(n.inputs.size()) && n.inputs[input].present &&
      n.inputs[input].bytes() < o.min_read_bytes) {
    return std::nullopt;
  }
  ReadPattern p = ReadPatternOf(*n.op, n.inputs, n.outputs, n.attrs, input, o.sampled_outputs);
  const std::string pattern = p.Name(o.over_read_ratio);
  if (!p.known || pattern.empty()) return std::nullopt;
  Suspect s{.kind = SuspectKind::kReads, .nodes = {0}, .names = {n.name}, .direction = "tile the reads / prefetch"};
  s.input = input;
  s.input_name = input < static_cast<int>(n.op->inputs.size()) ? n.op->inputs[input].name
                                                                 : "input " + std::to_string(input);
  s.reads = p;
  s.saving_us = LostUs(n.roofline);
  std::string why = s.input_name + " is read with " + pattern + " (box " + p.typical_box.ToString() + " per output";
  if (p.strided()) {
    why += ": " + std::to_string(p.box_runs) + " runs of " + std::to_string(p.box_elements / p.box_runs) + ", " +
           std::to_string(p.run_stride) + " elements apart";
  } else if (p.neighbour_step > 1) {
    why += "; the next output's box starts " + std::to_string(p.neighbour_step) + " elements further";
  }
  why += "), " + Num(p.ratio, 1) + "x its size read in all";
  s.text = n.name + ": " + s.direction + ": " + why + "; " + BoundNote(n.roofline);
  return s;
}

std::optional<Suspect> SmallGridSuspect(const SuspectNode& n, int compute_units, const SuspectOptions& o) {
  const double eff = n.roofline.efficiency();
  if (!(eff >= 0) || eff >= o.far_below_efficiency || compute_units < 1) return std::nullopt;
  const KernelLaunchInfo* smallest = nullptr;
  int64_t fewest = 0;
  for (const KernelLaunchInfo& l : n.launches) {
    const int64_t blocks = l.config.grid.x * l.config.grid.y * l.config.grid.z;
    if (!smallest || blocks < fewest) smallest = &l, fewest = blocks;
  }
  if (!smallest || fewest >= static_cast<int64_t>(compute_units) * o.blocks_per_unit) return std::nullopt;
  Suspect s{.kind = SuspectKind::kSmallGrid, .nodes = {0}, .names = {n.name},
            .direction = "too few blocks to fill the device"};
  s.kernel = smallest->name;
  s.grid_blocks = fewest;
  s.compute_units = compute_units;
  s.efficiency = eff;
  // A grid of b blocks on u units runs in ceil(b/u) waves and leaves at most
  // 1 - b / (waves * u) of the units' time idle: what filling the device
  // could save, however far the kernel is from its bound.
  const int64_t waves = (fewest + compute_units - 1) / compute_units;
  const double idle = waves > 0 ? 1 - static_cast<double>(fewest) / static_cast<double>(waves * compute_units) : 0;
  if (idle <= 0) return std::nullopt;  // every unit busy to the end: the grid is not why
  s.saving_us = std::min(LostUs(n.roofline), n.roofline.measured_us * idle);
  s.text = n.name + ": " + s.direction + ": kernel " + s.kernel + " has " + std::to_string(fewest) + " block(s) for " +
           std::to_string(compute_units) + " compute units, at " + Num(100 * eff, 1) + "% of its bound; filling them saves at most " +
           FormatMicros(s.saving_us) + " of its " + BoundNote(n.roofline);
  return s;
}

// Both nodes stream the tensor (their cost models move at least its bytes)
// and nobody else needs it written: fused, it is never written nor read again.
std::optional<Suspect> FusionSuspect(const SuspectFacts& f, const SuspectEdge& e, const SuspectOptions& o) {
  const int count = static_cast<int>(f.nodes.size());
  if (e.producer < 0 || e.consumer < 0 || e.producer >= count || e.consumer >= count) return std::nullopt;
  if (e.bytes < o.min_fusion_bytes || e.consumers != 1 || e.graph_output) return std::nullopt;
  const SuspectNode& a = f.nodes[e.producer];
  const SuspectNode& b = f.nodes[e.consumer];
  if (!a.roofline.has_cost || !b.roofline.has_cost || a.roofline.bytes < e.bytes || b.roofline.bytes < e.bytes) {
    return std::nullopt;
  }
  Suspect s{.kind = SuspectKind::kFusion, .nodes = {e.producer, e.consumer}, .names = {a.name, b.name},
            .direction = "fuse " + a.name + " into " + b.name};
  s.tensor = e.tensor;
  s.traffic_bytes = 2 * e.bytes;
  // The traffic saved is worth what moving it costs at the machine's measured
  // bandwidth: what the pair reached overall would charge a compute-bound
  // consumer's arithmetic to the traffic (Sigmoid's expf made Relu>Sigmoid's
  // saving look 5x larger). The pair's own rate only without a calibration.
  const double pair_us = a.roofline.measured_us + b.roofline.measured_us;
  if (f.bandwidth_gbs > 0) {
    s.bandwidth_gbs = f.bandwidth_gbs;
    s.bandwidth_source = "calibrated";
  } else if (a.roofline.measured_us >= 0 && b.roofline.measured_us >= 0 && pair_us > 0) {
    // bytes per microsecond / 1e3 = GB/s
    s.bandwidth_gbs = static_cast<double>(a.roofline.bytes + b.roofline.bytes) / pair_us / 1e3;
    s.bandwidth_source = "measured over the pair, no calibrated roof";
  }
  if (s.bandwidth_gbs > 0) s.saving_us = static_cast<double>(s.traffic_bytes) / (s.bandwidth_gbs * 1e3);
  s.text = s.direction + ": saves " + Mib(s.traffic_bytes) + " (" + std::to_string(s.traffic_bytes) +
           " bytes) of traffic";
  if (s.bandwidth_gbs > 0) {
    s.text += ", about " + FormatMicros(s.saving_us) + " at the measured bandwidth (" + Num(s.bandwidth_gbs, 1) +
              " GB/s, " + s.bandwidth_source + ")";
  }
  s.text += "; " + (e.tensor.empty() ? std::string("the intermediate") : "'" + e.tensor + "'") + " (" + Mib(e.bytes) +
            ") is written by " + a.name + " and read again by " + b.name;
  return s;
}

}  // namespace

const char* SuspectKindName(SuspectKind k) {
  switch (k) {
    case SuspectKind::kFusion: return "fusion";
    case SuspectKind::kReads: return "reads";
    case SuspectKind::kSmallGrid: return "small_grid";
    case SuspectKind::kSlowKernel: return "slow_kernel";
  }
  return "?";
}

std::string ReadPattern::Name(double over_read_ratio) const {
  if (!known) return "";
  if (box_runs > 1) return box_elements / box_runs > 1 ? "strided window reads" : "strided column reads";
  if (neighbour_step > std::max<int64_t>(1, box_elements)) return "strided reads";
  if (ratio >= over_read_ratio) return "over-reads";
  return "";
}

ReadPattern ReadPatternOf(const OpSchema& op, const std::vector<TensorDesc>& inputs,
                          const std::vector<TensorDesc>& outputs, const Attrs& attrs, int input,
                          int64_t sampled_outputs) {
  ReadPattern p;
  if (!op.input_region || input < 0 || input >= static_cast<int>(inputs.size()) || !inputs[input].present ||
      outputs.empty() || outputs[0].numel() == 0 || inputs[input].numel() == 0) {
    return p;
  }
  const Shape& in_shape = inputs[input].shape;
  const Shape& out_shape = outputs[0].shape;
  const OpCall call(inputs, outputs, attrs);
  auto box_of = [&](const std::vector<int64_t>& coords) -> std::optional<IndexBox> {
    std::vector<IndexBox> boxes = op.input_region(call, 0, coords);
    if (input >= static_cast<int>(boxes.size())) return std::nullopt;
    return Clamp(boxes[input], in_shape);
  };
  // Sum of the boxes over every output, or over a sample scaled up. The
  // sample is scattered (a fixed hash of k), not evenly spaced: a spacing
  // that is a multiple of a row would see only one column (a border).
  const int64_t n = out_shape.numel();
  const int64_t samples = std::min(n, std::max<int64_t>(1, sampled_outputs));
  double volume = 0;
  for (int64_t k = 0; k < samples; ++k) {
    const int64_t flat = samples == n ? k : static_cast<int64_t>(Scatter(static_cast<uint64_t>(k)) % static_cast<uint64_t>(n));
    auto b = box_of(Unravel(flat, out_shape));
    if (!b) return p;
    volume += static_cast<double>(b->numel());
  }
  p.ratio = volume / samples * static_cast<double>(n) / static_cast<double>(in_shape.numel());

  // An interior output: its box, its runs in memory, its neighbour's offset.
  std::vector<int64_t> mid(out_shape.rank());
  for (int d = 0; d < out_shape.rank(); ++d) mid[d] = out_shape.dim(d) / 2;
  auto b = box_of(mid);
  if (!b) return p;
  p.known = true;
  p.typical_box = *b;
  p.box_elements = b->numel();
  if (p.box_elements == 0) return p;
  const int rank = in_shape.rank();
  int64_t run = 1;
  int outer = rank - 1;  // the innermost dim outside the contiguous run
  for (; outer >= 0; --outer) {
    const int64_t extent = b->hi[outer] - b->lo[outer];
    run *= extent;
    if (extent != in_shape.dim(outer)) {
      --outer;
      break;
    }
  }
  p.box_runs = p.box_elements / run;
  if (p.box_runs > 1) {
    int64_t stride = 1;
    for (int d = rank - 1; d > outer; --d) stride *= in_shape.dim(d);
    for (int d = outer; d >= 0 && b->hi[d] - b->lo[d] == 1; --d) stride *= in_shape.dim(d);
    p.run_stride = stride;
  }
  if (out_shape.rank() > 0 && out_shape.dim(out_shape.rank() - 1) > 1) {
    std::vector<int64_t> next = mid;
    int64_t& last = next.back();
    last = last + 1 < out_shape.dim(out_shape.rank() - 1) ? last + 1 : last - 1;
    auto nb = box_of(next);
    if (nb && !nb->empty()) p.neighbour_step = std::llabs(FlatOffset(nb->lo, in_shape) - FlatOffset(b->lo, in_shape));
  }
  return p;
}

std::vector<Suspect> NodeSuspects(const SuspectNode& node, int compute_units, const SuspectOptions& options) {
  std::vector<Suspect> out;
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    if (auto s = ReadsSuspect(node, i, options)) out.push_back(std::move(*s));
  }
  if (auto s = SmallGridSuspect(node, compute_units, options)) out.push_back(std::move(*s));
  // Far over its bound even once what the suspects above explain is taken
  // off (a read pattern: all of it; a small grid: its idle share at most,
  // so 1 block on 2 units explains 2x, not 290x): the kernel itself.
  const RooflinePoint& r = node.roofline;
  double explained = 0;
  for (const Suspect& s : out) explained = std::max(explained, s.kind == SuspectKind::kReads ? LostUs(r) : s.saving_us);
  const double remaining_us = r.measured_us - explained;
  if (LostUs(r) > 0 && r.lower_bound_us > 0 && remaining_us >= options.slow_kernel_ratio * r.lower_bound_us) {
    Suspect s{.kind = SuspectKind::kSlowKernel, .nodes = {0}, .names = {node.name}, .direction = "the kernel itself"};
    s.saving_us = remaining_us - r.lower_bound_us;
    s.efficiency = r.efficiency();
    s.text = node.name + ": " + s.direction + ": " + Num(r.slowdown(), 1) + "x its lower bound (" + FormatMicros(r.measured_us) +
             " measured, " + FormatMicros(r.lower_bound_us) + " at the roof), about " + FormatMicros(s.saving_us) +
             " to gain; " + (out.empty() ? std::string("no read pattern or launch shape explains it")
                                         : "its launch shape explains at most " + FormatMicros(explained));
    out.push_back(std::move(s));
  }
  for (Suspect& s : out) s.critical = node.on_critical_path;
  return out;
}

std::vector<Suspect> FindSuspects(const SuspectFacts& facts, const SuspectOptions& options) {
  const int count = static_cast<int>(facts.nodes.size());
  // A node feeds the critical path when a consumer of its output is on it.
  std::vector<bool> feeds(count, false);
  for (const SuspectEdge& e : facts.edges) {
    if (e.producer >= 0 && e.producer < count && e.consumer >= 0 && e.consumer < count &&
        facts.nodes[e.consumer].on_critical_path) {
      feeds[e.producer] = true;
    }
  }
  auto critical = [&](int i) { return facts.nodes[i].on_critical_path || feeds[i]; };
  double node_time = 0;
  for (const SuspectNode& n : facts.nodes) node_time += n.roofline.measured_us > 0 ? n.roofline.measured_us : 0;
  std::vector<Suspect> out;
  for (int i = 0; i < count; ++i) {
    for (Suspect& s : NodeSuspects(facts.nodes[i], facts.compute_units, options)) {
      // In a run, a slow kernel is worth naming when its loss is a share of the time.
      if (s.kind == SuspectKind::kSlowKernel) {
        const double share = node_time > 0 ? facts.nodes[i].roofline.measured_us / node_time : 1;
        if (node_time > 0 && s.saving_us < options.slow_kernel_share * node_time) continue;
        s.text += "; " + Num(100 * share, 1) + "% of the node time";
      }
      s.nodes = {i};
      s.critical = critical(i);
      out.push_back(std::move(s));
    }
  }
  for (const SuspectEdge& e : facts.edges) {
    if (auto s = FusionSuspect(facts, e, options)) {
      s->critical = critical(e.producer) || critical(e.consumer);
      out.push_back(std::move(*s));
    }
  }
  // Run time first (a faster node off the critical path shortens nothing), then node time.
  std::stable_sort(out.begin(), out.end(), [](const Suspect& a, const Suspect& b) {
    const double ra = a.critical ? a.saving_us : 0, rb = b.critical ? b.saving_us : 0;
    if (ra != rb) return ra > rb;
    return a.saving_us > b.saving_us;
  });
  if (!out.empty() && out[0].kind == SuspectKind::kSlowKernel && out.size() > 1) {
    out[0].text += ": the largest loss in the run, the kernel and not its neighbours";
  }
  return out;
}

}  // namespace opscope
