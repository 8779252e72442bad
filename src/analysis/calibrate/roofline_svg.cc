// RooflineSvg (opscope/roofline.h): one self-contained <svg> element, no
// script, no ids (so a page may embed several), log-log axes in whole
// decades. A point sits at (FLOPs/byte, achieved GFLOP/s); a point needs both
// above zero to have a place on log axes, so ops that move data without
// arithmetic are counted in the note instead of drawn.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "core/text_format.h"
#include "opscope/roofline.h"

namespace opscope {
namespace {

constexpr double kWidth = 720, kHeight = 440;
constexpr double kLeft = 72, kRight = 700, kTop = 40, kBottom = 380;  // the plot area
constexpr size_t kMaxTextLabels = 30;  // more points: tooltips only, text would pile up

std::string Num(double v, const char* format) {
  char s[64];
  std::snprintf(s, sizeof(s), format, v);
  return s;
}

// Three significant digits, without an exponent below ten million: "0.0417", "192", "1000".
std::string Num(double v) { return Num(v, v >= 1000 && v < 1e7 ? "%.0f" : "%.3g"); }

std::string DecadeLabel(int k) {
  if (k >= -3 && k <= 4) return Num(std::pow(10.0, k), "%g");
  return "1e" + std::to_string(k);
}

// Whole decades [lo, hi] around every value, at least two of them.
struct Axis {
  int lo = -2, hi = 2;
  double min() const { return std::pow(10.0, lo); }
  double max() const { return std::pow(10.0, hi); }
  static Axis Around(const std::vector<double>& values, int default_lo, int default_hi) {
    Axis a{default_lo, default_hi};
    bool any = false;
    for (double v : values) {
      if (!(v > 0) || !std::isfinite(v)) continue;
      const int lo = static_cast<int>(std::floor(std::log10(v))), hi = static_cast<int>(std::ceil(std::log10(v)));
      a.lo = any ? std::min(a.lo, lo) : lo;
      a.hi = any ? std::max(a.hi, hi) : hi;
      any = true;
    }
    while (a.hi - a.lo < 2) {
      --a.lo;
      ++a.hi;
    }
    return a;
  }
};

struct Plot {
  Axis x, y;
  double X(double v) const { return kLeft + (std::log10(v) - x.lo) / (x.hi - x.lo) * (kRight - kLeft); }
  double Y(double v) const { return kBottom - (std::log10(v) - y.lo) / (y.hi - y.lo) * (kBottom - kTop); }
};

bool Drawable(const RooflinePoint& p) { return p.has_cost && p.measured_us > 0 && p.flops > 0 && p.bytes > 0; }

const char* Color(Bound b) {
  switch (b) {
    case Bound::kMemory: return "#1f6fb4";
    case Bound::kCompute: return "#c2410c";
    case Bound::kNone: break;
  }
  return "#777";
}

std::string Line(double x1, double y1, double x2, double y2, const char* style) {
  return "<line x1=\"" + Num(x1, "%.1f") + "\" y1=\"" + Num(y1, "%.1f") + "\" x2=\"" + Num(x2, "%.1f") + "\" y2=\"" +
         Num(y2, "%.1f") + "\" " + style + "/>\n";
}

std::string Text(double x, double y, const std::string& text, const char* attrs = "") {
  return "<text x=\"" + Num(x, "%.1f") + "\" y=\"" + Num(y, "%.1f") + "\"" + (*attrs ? " " : "") + attrs + ">" +
         EscapeXml(text) + "</text>\n";
}

std::string Axes(const Plot& plot) {
  std::string s = "<rect x=\"" + Num(kLeft) + "\" y=\"" + Num(kTop) + "\" width=\"" + Num(kRight - kLeft) +
                  "\" height=\"" + Num(kBottom - kTop) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (int k = plot.x.lo; k <= plot.x.hi; ++k) {
    const double x = plot.X(std::pow(10.0, k));
    s += Line(x, kTop, x, kBottom, "stroke=\"#eee\"");
    s += Text(x, kBottom + 16, DecadeLabel(k), "text-anchor=\"middle\"");
  }
  for (int k = plot.y.lo; k <= plot.y.hi; ++k) {
    const double y = plot.Y(std::pow(10.0, k));
    s += Line(kLeft, y, kRight, y, "stroke=\"#eee\"");
    s += Text(kLeft - 6, y + 4, DecadeLabel(k), "text-anchor=\"end\"");
  }
  s += Text((kLeft + kRight) / 2, kBottom + 34, "arithmetic intensity (FLOPs / byte)", "text-anchor=\"middle\"");
  s += Text(16, (kTop + kBottom) / 2, "GFLOP/s",
            ("text-anchor=\"middle\" transform=\"rotate(-90 16 " + Num((kTop + kBottom) / 2, "%.1f") + ")\"").c_str());
  return s;
}

// The memory roof's slope up to the highest compute roof, and a flat
// compute roof from its ridge point on, for each roof the points use.
std::string Roofs(const Plot& plot, const RoofPeaks& peaks, const std::set<bool>& f64_roofs) {
  std::string s;
  const double bw = peaks.bandwidth_gbs;
  double top = 0;
  for (bool f64 : f64_roofs) {
    const double peak = f64 ? peaks.gflops_f64 : peaks.gflops_f32;
    if (!(peak > 0)) continue;
    top = std::max(top, peak);
    const double from = bw > 0 ? std::max(plot.x.min(), peak / bw) : plot.x.min();
    if (from >= plot.x.max()) continue;
    s += Line(plot.X(from), plot.Y(peak), kRight, plot.Y(peak), "stroke=\"#333\" stroke-width=\"2\"");
    // The FMA loop's peak, dashed above the practical roof: a point between
    // the two beat the calibrated GEMM; one above both says the roofs were measured under load.
    const double fma = f64 ? peaks.fma_gflops_f64 : peaks.fma_gflops_f32;
    const bool fma_drawn = fma > peak * 1.01;
    // The roof's label goes under its line when the FMA peak's sits close above it.
    const bool under = fma_drawn && plot.Y(peak) - plot.Y(fma) < 14;
    const std::string label = std::string(f64 ? "float64" : "float32") + " roof " + Num(peak) + " GFLOP/s";
    s += Text(kRight - 4, plot.Y(peak) + (under ? 13 : -5), label, "text-anchor=\"end\"");
    if (fma_drawn) {
      top = std::max(top, fma);
      const double fma_from = bw > 0 ? std::max(plot.x.min(), fma / bw) : plot.x.min();
      if (fma_from < plot.x.max()) {
        s += Line(plot.X(fma_from), plot.Y(fma), kRight, plot.Y(fma),
                  "class=\"fma-peak\" stroke=\"#888\" stroke-width=\"1\" stroke-dasharray=\"5 4\"");
        s += Text(kRight - 4, plot.Y(fma) - 5,
                  std::string(f64 ? "float64" : "float32") + " FMA peak " + Num(fma) + " GFLOP/s",
                  "text-anchor=\"end\" fill=\"#666\"");
      }
    }
  }
  if (top == 0) top = plot.y.max();
  if (bw > 0) {
    const double from = std::max(plot.x.min(), plot.y.min() / bw), to = std::min(plot.x.max(), top / bw);
    if (from < to) {
      const double x1 = plot.X(from), y1 = plot.Y(bw * from), x2 = plot.X(to), y2 = plot.Y(bw * to);
      s += Line(x1, y1, x2, y2, "stroke=\"#333\" stroke-width=\"2\"");
      // Along the slope, a little above it.
      const double angle = std::atan2(y2 - y1, x2 - x1) * 180 / M_PI, lx = x1 + 0.1 * (x2 - x1) + 4,
                   ly = y1 + 0.1 * (y2 - y1) - 6;
      s += Text(lx, ly, "memory roof " + Num(bw) + " GB/s",
                ("transform=\"rotate(" + Num(angle, "%.1f") + " " + Num(lx, "%.1f") + " " + Num(ly, "%.1f") + ")\"")
                    .c_str());
    }
  }
  return s;
}

std::string Tooltip(const RooflineChartPoint& c) {
  const RooflinePoint& p = c.point;
  const double e = p.efficiency();
  return c.label + ": " + Num(p.achieved_gbs) + " GB/s, " + Num(p.achieved_gflops) + " GFLOP/s, efficiency " +
         (e < 0 ? std::string("unknown") : Num(100 * e, "%.1f") + "%") + " (" + BoundName(p.bound) + " bound, " +
         DTypeName(c.dtype) + ")" + (AboveRoofNote(p).empty() ? "" : "; " + AboveRoofNote(p));
}

}  // namespace

std::string RooflineSvg(const RoofPeaks& peaks, const std::vector<RooflineChartPoint>& points) {
  std::vector<const RooflineChartPoint*> drawn;
  int64_t no_cost = 0, untimed = 0, no_flops = 0;
  std::vector<double> xs, ys;
  std::set<bool> f64_roofs;
  for (const RooflineChartPoint& c : points) {
    const RooflinePoint& p = c.point;
    if (!p.has_cost) ++no_cost;
    else if (!(p.measured_us > 0)) ++untimed;
    else if (!Drawable(p)) ++no_flops;
    if (!Drawable(p)) continue;
    drawn.push_back(&c);
    xs.push_back(p.intensity);
    ys.push_back(p.achieved_gflops);
    f64_roofs.insert(c.dtype == DType::kF64);
  }
  if (f64_roofs.empty()) f64_roofs.insert(false);
  for (bool f64 : f64_roofs) {
    const double peak = f64 ? std::max(peaks.gflops_f64, peaks.fma_gflops_f64)
                            : std::max(peaks.gflops_f32, peaks.fma_gflops_f32);
    ys.push_back(peak * 1.5);  // the roofs below the top edge, not on it
    if (peaks.bandwidth_gbs > 0 && peak > 0) xs.push_back(peak / peaks.bandwidth_gbs);
  }
  const Plot plot{Axis::Around(xs, -2, 2), Axis::Around(ys, 0, 3)};

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"opscope-roofline\" width=\"" + Num(kWidth) +
                  "\" height=\"" + Num(kHeight) + "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(kHeight) +
                  "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  std::string title = "roofline: ";
  title += peaks.bandwidth_gbs > 0 ? Num(peaks.bandwidth_gbs) + " GB/s" : "bandwidth unknown";
  title += peaks.gflops_f32 > 0 ? ", " + Num(peaks.gflops_f32) + " GFLOP/s float32" : ", float32 roof unknown";
  if (peaks.gflops_f64 > 0) title += ", " + Num(peaks.gflops_f64) + " float64";
  if (!peaks.source.empty()) title += " (" + peaks.source + ")";
  s += Text(kLeft, 20, title, "font-size=\"12\"");
  s += Axes(plot);
  s += Roofs(plot, peaks, f64_roofs);
  for (const RooflineChartPoint* c : drawn) {
    const double x = plot.X(c->point.intensity), y = plot.Y(c->point.achieved_gflops);
    s += "<circle cx=\"" + Num(x, "%.1f") + "\" cy=\"" + Num(y, "%.1f") + "\" r=\"4\" fill=\"" +
         Color(c->point.bound) + "\" fill-opacity=\"0.8\"><title>" + EscapeXml(Tooltip(*c)) + "</title></circle>\n";
    // Near the right edge the label goes to the point's left.
    const bool left = x > kRight - 160;
    if (drawn.size() <= kMaxTextLabels) {
      s += Text(left ? x - 6 : x + 6, y - 4, c->label, left ? "fill=\"#444\" text-anchor=\"end\"" : "fill=\"#444\"");
    }
  }
  if (no_cost + untimed + no_flops > 0) {
    std::string note = "not drawn:";
    if (no_cost) note += " " + std::to_string(no_cost) + " without a cost model;";
    if (untimed) note += " " + std::to_string(untimed) + " not timed;";
    if (no_flops) note += " " + std::to_string(no_flops) + " without FLOPs or bytes (no place on log axes);";
    note.pop_back();
    s += Text(kLeft, kHeight - 8, note, "fill=\"#666\"");
  }
  s += "</svg>\n";
  return s;
}

}  // namespace opscope
