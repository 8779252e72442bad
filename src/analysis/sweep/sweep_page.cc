// What a sweep shows: the heatmap (inline SVG, no script, no ids, so a page
// may hold several), the self-contained sweep.html around it, and the text
// ops-debug sweep prints. Every time is the candidate's median device time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include "core/sha256.h"
#include "core/text_format.h"
#include "opscope/npy.h"
#include "opscope/sweep.h"

namespace opscope {
namespace {

std::string Fmt(const char* format, double v) {
  char s[64];
  std::snprintf(s, sizeof(s), format, v);
  return s;
}

std::string Time(double us) {
  if (us >= 1e6) return Fmt("%.3f s", us / 1e6);
  if (us >= 1e3) return Fmt("%.3f ms", us / 1e3);
  return Fmt("%.1f us", us);
}

std::string Percent(double fraction) { return fraction < 0 ? "-" : Fmt("%.1f%%", fraction * 100); }

// The values of one tunable the heatmap has a column (or row) for: those
// planned and those run, ascending.
std::vector<int64_t> AxisValues(const SweepReport& r, const std::string& name) {
  std::set<int64_t> v;
  for (const SweepAxis& a : r.axes) {
    if (a.name == name) v.insert(a.values.begin(), a.values.end());
  }
  for (const SweepCandidate& c : r.candidates) {
    auto it = c.tunables.find(name);
    if (it != c.tunables.end()) v.insert(it->second);
  }
  return {v.begin(), v.end()};
}

struct Cell {
  const SweepCandidate* shown = nullptr;  // the fastest passed of the cell, else its failure
  int runs = 0;
};

bool Matches(const SweepCandidate& c, const std::string& name, int64_t v) {
  auto it = c.tunables.find(name);
  return it != c.tunables.end() && it->second == v;
}

// Several candidates share a cell when more than two tunables vary: the cell
// shows the fastest passed one (a wrong one only when none passed).
Cell CellOf(const SweepReport& r, const std::string& x, int64_t xv, const std::string& y, int64_t yv) {
  Cell cell;
  for (const SweepCandidate& c : r.candidates) {
    if (!Matches(c, x, xv) || (!y.empty() && !Matches(c, y, yv))) continue;
    ++cell.runs;
    const SweepCandidate* s = cell.shown;
    const bool better = s == nullptr || (c.passed() && (!s->passed() || c.device_us.median < s->device_us.median)) ||
                        (!s->passed() && c.status == CandidateStatus::kFailed && s->status == CandidateStatus::kError);
    if (better) cell.shown = &c;
  }
  return cell;
}

// Green at the best's time, through yellow, to red at 8x it and beyond.
std::string Colour(double ratio) {
  const double t = std::clamp(std::log2(std::max(ratio, 1.0)) / 3.0, 0.0, 1.0);
  return "hsl(" + Fmt("%.0f", 120 * (1 - t)) + ",65%,55%)";
}

// The candidates that beat their bound, grouped by which roof and why
// (AboveRoofGroups), under a line that counts them; "" when none did.
std::string AboveRoofText(const SweepReport& r, const std::string& indent) {
  std::vector<std::pair<std::string, std::string>> notes;
  for (const SweepCandidate& c : r.candidates) {
    if (c.device_us.count > 0) notes.emplace_back(CandidateText(c.tunables), AboveRoofNote(c.roofline));
  }
  const std::string groups = AboveRoofGroups(notes, indent + "  ");
  if (groups.empty()) return "";
  const auto above = std::count_if(notes.begin(), notes.end(), [](const auto& n) { return !n.second.empty(); });
  return indent + std::to_string(above) + " candidate(s) above their roof (efficiency over 100%):\n" + groups;
}

}  // namespace

std::string SweepHeatmapSvg(const SweepReport& r) {
  std::vector<std::string> varying;
  for (const SweepAxis& a : r.axes) {
    if (AxisValues(r, a.name).size() > 1) varying.push_back(a.name);
  }
  if (varying.empty() && !r.axes.empty()) varying.push_back(r.axes.front().name);
  const std::string x = varying.empty() ? "" : varying[0];
  const std::string y = varying.size() > 1 ? varying[1] : "";
  const std::vector<int64_t> xs = AxisValues(r, x);
  const std::vector<int64_t> ys = y.empty() ? std::vector<int64_t>{0} : AxisValues(r, y);
  // Thick border: the best; colours against the fastest passed one (the
  // best, unless it lies within the noise of the current).
  const SweepCandidate* best = r.faster || r.best == r.fastest ? r.best_candidate() : nullptr;
  const SweepCandidate* fastest = r.At(r.fastest);
  const SweepCandidate* current = r.current_candidate();
  const double best_us = fastest != nullptr ? fastest->device_us.median : 0;

  constexpr double kCellW = 104, kCellH = 54, kLeft = 96, kTop = 56;
  const std::string legend = "colour: median / the fastest's " +
                             (fastest != nullptr ? "(" + Time(best_us) + ")" : std::string("(none passed)")) +
                             ", green 1x to red 8x or more; thick border: best, dashed: current";
  // Wide enough for the cells and for the legend's line (11px sans-serif:
  // at most about 6.5px a character), so neither is cut off.
  const double width = std::max(kLeft + 6.5 * static_cast<double>(legend.size()) + 16,
                                kLeft + kCellW * static_cast<double>(xs.size()) + 24);
  const double height = kTop + kCellH * static_cast<double>(ys.size()) + 56;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"sweep-heatmap\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<title>" << EscapeXml(r.op + ": device median per candidate, over the best's") << "</title>\n";
  s << "<text x=\"" << kLeft << "\" y=\"18\" font-weight=\"bold\">" << EscapeXml(r.op) << "  "
    << EscapeXml(y.empty() ? x : x + " \u00d7 " + y) << "</text>\n";
  s << "<text class=\"axis-label\" x=\"" << kLeft + kCellW * static_cast<double>(xs.size()) / 2 << "\" y=\"36\" text-anchor=\"middle\">"
    << EscapeXml(x) << "</text>\n";
  if (!y.empty()) {
    s << "<text class=\"axis-label\" x=\"14\" y=\"" << kTop + kCellH * static_cast<double>(ys.size()) / 2
      << "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " << kTop + kCellH * static_cast<double>(ys.size()) / 2
      << ")\">" << EscapeXml(y) << "</text>\n";
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    s << "<text x=\"" << kLeft + kCellW * (static_cast<double>(i) + 0.5) << "\" y=\"" << kTop - 6
      << "\" text-anchor=\"middle\">" << xs[i] << "</text>\n";
  }
  for (size_t j = 0; j < ys.size(); ++j) {
    const double cy = kTop + kCellH * static_cast<double>(j);
    if (!y.empty()) {
      s << "<text x=\"" << kLeft - 8 << "\" y=\"" << cy + kCellH / 2 + 4 << "\" text-anchor=\"end\">" << ys[j] << "</text>\n";
    }
    for (size_t i = 0; i < xs.size(); ++i) {
      const double cx = kLeft + kCellW * static_cast<double>(i);
      const Cell cell = CellOf(r, x, xs[i], y, ys[j]);
      const SweepCandidate* c = cell.shown;
      std::string cls = "cell", fill = "#f4f4f4", label = "not run", sub, tip;
      if (c != nullptr) {
        tip = CandidateText(c->tunables) + ": " + CandidateStatusName(c->status);
        if (c->device_us.count > 0) tip += ", median " + Time(c->device_us.median);
        if (!c->why.empty()) tip += " (" + c->why + ")";
        if (c->passed()) {
          const double ratio = best_us > 0 ? c->device_us.median / best_us : 1;
          cls += " passed";
          fill = Colour(ratio);
          label = Fmt("%.2fx", ratio);
          sub = Time(c->device_us.median);
        } else {
          cls += c->status == CandidateStatus::kFailed ? " failed" : " error";
          fill = "#d9d9d9";
          label = CandidateStatusName(c->status);
          sub = c->device_us.count > 0 ? Time(c->device_us.median) : "";
        }
        if (c == best) cls += " best";
        if (c == current) cls += " current";
      } else {
        cls += " missing";
        tip = x + "=" + std::to_string(xs[i]) + (y.empty() ? "" : " " + y + "=" + std::to_string(ys[j])) + ": not run";
      }
      s << "<g class=\"" << cls << "\" data-x=\"" << xs[i] << "\"";
      if (!y.empty()) s << " data-y=\"" << ys[j] << "\"";
      s << "><title>" << EscapeXml(tip) << "</title>";
      s << "<rect x=\"" << cx + 1 << "\" y=\"" << cy + 1 << "\" width=\"" << kCellW - 2 << "\" height=\"" << kCellH - 2
        << "\" fill=\"" << fill << "\" stroke=\"" << (c == best && c != nullptr ? "#000" : "#fff") << "\" stroke-width=\""
        << (c == best && c != nullptr ? 3 : 1) << "\"" << (c == current && c != nullptr && c != best ? " stroke-dasharray=\"4 3\"" : "")
        << "/>";
      if (c != nullptr && !c->passed()) {
        s << "<line class=\"cross\" x1=\"" << cx + 4 << "\" y1=\"" << cy + 4 << "\" x2=\"" << cx + kCellW - 4 << "\" y2=\""
          << cy + kCellH - 4 << "\" stroke=\"#b00\" stroke-width=\"2\"/>";
        s << "<line class=\"cross\" x1=\"" << cx + kCellW - 4 << "\" y1=\"" << cy + 4 << "\" x2=\"" << cx + 4 << "\" y2=\""
          << cy + kCellH - 4 << "\" stroke=\"#b00\" stroke-width=\"2\"/>";
      }
      s << "<text x=\"" << cx + kCellW / 2 << "\" y=\"" << cy + 24 << "\" text-anchor=\"middle\" font-weight=\"bold\">"
        << EscapeXml(label) << "</text>";
      if (!sub.empty()) {
        s << "<text x=\"" << cx + kCellW / 2 << "\" y=\"" << cy + 41 << "\" text-anchor=\"middle\" font-size=\"11\">"
          << EscapeXml(sub) << "</text>";
      }
      s << "</g>\n";
    }
  }
  s << "<text class=\"legend\" x=\"" << kLeft << "\" y=\"" << height - 30 << "\" font-size=\"11\">" << EscapeXml(legend)
    << "</text>\n";
  s << "<text x=\"" << kLeft << "\" y=\"" << height - 14 << "\" font-size=\"11\">crossed: FAILED (wrong outputs, never best) "
       "or error</text>\n";
  s << "</svg>\n";
  return s.str();
}

std::string SweepHtml(const SweepReport& r) {
  const SweepCandidate* cur = r.current_candidate();
  const bool within_noise = !r.faster && r.fastest >= 0 && r.fastest != r.best;
  const SweepCandidate* best = within_noise ? r.At(r.fastest) : r.best_candidate();
  auto col = [](const SweepCandidate* c, auto f) { return c == nullptr ? std::string("-") : EscapeXml(f(*c)); };
  // The page's one stylesheet, and a policy that lets only it apply: no
  // script, no other style, nothing fetched (names in the page come from the
  // user's files; see inspector-cli's report page for the same rule).
  static constexpr std::string_view kStyle =
      "body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:12px 0}"
      "td,th{border:1px solid #ccc;padding:4px 10px;text-align:left}th{background:#f2f2f2}"
      "tr.failed td,tr.error td{color:#a00}code{background:#f4f4f4;padding:2px 4px}.partial{color:#a60;font-weight:bold}";
  std::ostringstream s;
  s << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'sha256-"
    << Base64(Sha256(kStyle)) << "'; base-uri 'none'; form-action 'none'\">\n<title>ops-debug sweep \u00b7 "
    << EscapeXml(r.op) << "</title>\n<style>" << kStyle << "</style>\n</head><body>\n";
  s << "<h1>ops-debug sweep \u00b7 " << EscapeXml(r.op) << "</h1>\n";
  s << "<p id=\"instance\">" << EscapeXml(r.instance) << " on " << EscapeXml(r.device) << "; " << r.candidates.size() << " of "
    << r.total << " candidates (" << r.measured << " measured, " << r.cached << " cached), " << r.iterations
    << " timed calls each after " << r.warmup << " warm-up; every candidate checked against the golden.";
  if (!r.complete) s << " <span class=\"partial\">Partial: the sweep was stopped.</span>";
  s << "</p>\n<table id=\"compare\"><tr><th></th><th>current</th><th>" << (within_noise ? "fastest (within the noise)" : "best")
    << "</th></tr>\n";
  s << "<tr><th>tunables</th><td>" << col(cur, [](auto& c) { return CandidateText(c.tunables); }) << "</td><td>"
    << col(best, [](auto& c) { return CandidateText(c.tunables); }) << "</td></tr>\n";
  s << "<tr><th>status</th><td>" << col(cur, [](auto& c) { return std::string(CandidateStatusName(c.status)); })
    << "</td><td>" << col(best, [](auto& c) { return std::string(CandidateStatusName(c.status)); }) << "</td></tr>\n";
  s << "<tr><th>device median</th><td>" << col(cur, [](auto& c) { return Time(c.device_us.median); }) << "</td><td>"
    << col(best, [](auto& c) { return Time(c.device_us.median); }) << "</td></tr>\n";
  s << "<tr><th>IQR</th><td>" << col(cur, [](auto& c) { return Time(c.device_us.iqr()); }) << "</td><td>"
    << col(best, [](auto& c) { return Time(c.device_us.iqr()); }) << "</td></tr>\n";
  s << "<tr><th>efficiency</th><td>" << col(cur, [](auto& c) { return Percent(c.roofline.efficiency()); }) << "</td><td>"
    << col(best, [](auto& c) { return Percent(c.roofline.efficiency()); }) << "</td></tr>\n</table>\n";
  s << "<p id=\"verdict\">";
  if (best == nullptr) {
    s << "No candidate passed: there is no best.";
  } else if (r.faster) {
    s << "Possible gain: " << EscapeXml(Fmt("%.0f%%", r.gain_pct)) << " (beyond the noise of " << EscapeXml(Time(r.noise_us)) << ").";
    if (!r.direction.empty()) s << " Direction: " << EscapeXml(r.direction) << ".";
  } else {
    s << "No candidate is faster than the current one beyond the noise"
      << (within_noise ? ": the fastest, " + EscapeXml(CandidateText(best->tunables)) + ", lies within the noise of " +
                             EscapeXml(Time(r.noise_us)) + "."
                       : std::string("."));
  }
  s << "</p>\n<div id=\"heatmap\">\n" << SweepHeatmapSvg(r) << "</div>\n";
  s << "<table id=\"candidates\"><tr><th>tunables</th><th>status</th><th>median</th><th>IQR</th><th>efficiency</th>"
       "<th>note</th></tr>\n";
  for (const SweepCandidate& c : r.candidates) {
    std::string note = c.why;
    if (c.cached) note = "cached" + std::string(note.empty() ? "" : "; ") + note;
    s << "<tr class=\"" << (c.passed() ? "passed" : c.status == CandidateStatus::kFailed ? "failed" : "error") << "\"><td>"
      << EscapeXml(CandidateText(c.tunables)) << "</td><td>" << CandidateStatusName(c.status) << "</td><td>"
      << (c.device_us.count ? EscapeXml(Time(c.device_us.median)) : "-") << "</td><td>"
      << (c.device_us.count ? EscapeXml(Time(c.device_us.iqr())) : "-") << "</td><td>" << EscapeXml(Percent(c.roofline.efficiency()))
      << "</td><td>" << EscapeXml(note) << "</td></tr>\n";
  }
  s << "</table>\n";
  if (const std::string above = AboveRoofText(r, ""); !above.empty()) {
    s << "<pre id=\"above-roof\">" << EscapeXml(above) << "</pre>\n";
  }
  if (!r.repro.empty()) s << "<p>Run again: <code>" << EscapeXml(r.repro) << "</code></p>\n";
  s << "</body></html>\n";
  return s.str();
}

void PrintSweep(const SweepReport& r, std::ostream& out, bool color) {
  const char* red = color ? "\033[31m" : "";
  const char* green = color ? "\033[32m" : "";
  const char* bold = color ? "\033[1m" : "";
  const char* reset = color ? "\033[0m" : "";
  out << "sweep     " << r.op << "  " << r.device << "  " << r.instance << "  " << r.candidates.size() << "/" << r.total
      << " candidates (" << r.measured << " measured, " << r.cached << " cached), " << r.iterations << " calls each after "
      << r.warmup << " warm-up\n";
  out << "peaks     memory " << Fmt("%.1f", r.peaks.bandwidth_gbs) << " GB/s, compute " << Fmt("%.1f", r.peaks.gflops_f32)
      << " GFLOP/s  (" << r.peaks.source << ")\n";
  size_t width = 0;
  for (const SweepCandidate& c : r.candidates) width = std::max(width, CandidateText(c.tunables).size());
  for (int i = 0; i < static_cast<int>(r.candidates.size()); ++i) {
    const SweepCandidate& c = r.candidates[i];
    std::string t = CandidateText(c.tunables);
    t.resize(width, ' ');
    out << "  " << t << "  " << (c.passed() ? "" : red) << CandidateStatusName(c.status) << (c.passed() ? "" : reset);
    out << std::string(8 - std::string(CandidateStatusName(c.status)).size(), ' ');
    if (c.device_us.count > 0) {
      out << "median " << Time(c.device_us.median) << "  IQR " << Time(c.device_us.iqr());
      if (c.roofline.efficiency() > 0) out << "  efficiency " << Percent(c.roofline.efficiency());
    }
    if (c.cached) out << "  (cached)";
    if (i == r.current) out << "  [current]";
    // [best] only on a candidate nothing passed beats: the current kept
    // within the noise is no "best" when another ran faster.
    if (i == r.best && (r.faster || r.best == r.fastest)) out << "  " << green << "[best]" << reset;
    if (i == r.fastest && !r.faster && r.fastest != r.best) out << "  [fastest, within the noise]";
    if (!c.why.empty()) out << "  " << c.why << (c.status == CandidateStatus::kFailed ? "; never best" : "");
    out << "\n";
  }
  // An efficiency over 100% is a bound beaten: said once, with why (roofline.h).
  out << AboveRoofText(r, "  ");
  const SweepCandidate* cur = r.current_candidate();
  // The right column: the best, or the fastest when it is not called best.
  const bool within_noise = !r.faster && r.fastest >= 0 && r.fastest != r.best;
  const SweepCandidate* best = within_noise ? r.At(r.fastest) : r.best_candidate();
  auto cell = [](const SweepCandidate* c, const std::string& text) {
    std::string s = c == nullptr ? "-" : text;
    s.resize(std::max<size_t>(s.size() + 2, 24), ' ');
    return s;
  };
  out << "\n" << std::string(16, ' ') << cell(cur, "current") << (within_noise ? "fastest (within the noise)" : "best") << "\n";
  out << "tunables        " << cell(cur, cur ? CandidateText(cur->tunables) : "") << bold
      << (best ? CandidateText(best->tunables) : "-") << reset << "\n";
  out << "status          " << cell(cur, cur ? CandidateStatusName(cur->status) : "")
      << (best ? CandidateStatusName(best->status) : "-") << "\n";
  out << "device median   " << cell(cur, cur ? Time(cur->device_us.median) : "") << (best ? Time(best->device_us.median) : "-")
      << "\n";
  out << "IQR             " << cell(cur, cur ? Time(cur->device_us.iqr()) : "") << (best ? Time(best->device_us.iqr()) : "-")
      << "\n";
  out << "efficiency      " << cell(cur, cur ? Percent(cur->roofline.efficiency()) : "")
      << (best ? Percent(best->roofline.efficiency()) : "-") << "\n";
  if (best == nullptr) {
    out << "verdict   no candidate passed: there is no best\n";
  } else if (r.faster) {
    out << "verdict   " << green << "verified best " << CandidateText(best->tunables) << reset << ": possible gain "
        << Fmt("%.0f%%", r.gain_pct) << " (median " << Time(cur ? cur->device_us.median : 0) << " -> "
        << Time(best->device_us.median) << ", beyond the noise of " << Time(r.noise_us) << ")\n";
    if (!r.direction.empty()) out << "direction " << r.direction << "\n";
  } else {
    out << "verdict   no candidate is faster than the current one beyond the noise";
    if (within_noise) {
      out << ": the fastest, " << CandidateText(best->tunables) << " (median " << Time(best->device_us.median) << " against "
          << Time(cur->device_us.median) << "), lies within the noise of " << Time(r.noise_us) << "; keep "
          << CandidateText(cur->tunables) << " or measure with more --iters\n";
    } else {
      if (r.noise_us > 0) out << " (" << Time(r.noise_us) << ")";
      out << ": keep " << CandidateText(r.best_candidate()->tunables) << "\n";
    }
  }
  if (!r.complete) out << "partial   stopped after " << r.candidates.size() << " of " << r.total << " candidates\n";
  if (!r.cache_note.empty()) out << "cache     " << r.cache_note << "\n";
}

StatusOr<std::string> WriteSweepFiles(const SweepReport& report, const std::string& cache_file) {
  const std::string page = (std::filesystem::path(cache_file).parent_path() / "sweep.html").string();
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(cache_file, SweepJson(report)).WithContext("output_dir"));
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(page, SweepHtml(report)).WithContext("output_dir"));
  return page;
}

}  // namespace opscope
