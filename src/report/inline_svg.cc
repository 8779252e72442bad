#include "report/inline_svg.h"

#include <algorithm>
#include <cctype>
#include <span>
#include <string>
#include <vector>

#include "core/text_format.h"

namespace opscope {

namespace {

// What a chart is drawn with, and nothing else. web/svg_check.js keeps the
// same lists for a chart the page reads itself; tests/web/html_sink_lint_test.py
// holds them equal.
// Elements: no <script>, no <foreignObject> or HTML element (which would end
// the SVG inside an HTML body or run code there), no <style> (its CSS could
// @import from anywhere or hide the page), no <image> or <a>.
constexpr std::string_view kSvgElements[] = {
    "svg", "g", "defs", "title", "desc", "text", "tspan", "line", "polyline", "polygon", "path", "rect",
    "circle", "ellipse", "marker", "clipPath", "linearGradient", "radialGradient", "stop", "pattern",
    "symbol", "use", "mask"};
// Attributes, lower-cased (the HTML parser the chart goes through ignores
// case): drawing ones only. No on* handler, no style attribute (CSS again), no name.
constexpr std::string_view kSvgAttributes[] = {
    "xmlns", "xmlns:xlink", "version", "id", "class", "width", "height", "x", "y", "x1", "y1", "x2", "y2", "cx",
    "cy", "r", "rx", "ry", "dx", "dy", "d", "points", "viewbox", "preserveaspectratio", "transform", "fill",
    "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-opacity", "stroke-dasharray", "stroke-dashoffset",
    "stroke-linecap", "stroke-linejoin", "stroke-miterlimit", "opacity", "visibility", "display", "color",
    "font-family", "font-size", "font-weight", "font-style", "text-anchor", "dominant-baseline",
    "alignment-baseline", "textlength", "lengthadjust", "xml:space", "shape-rendering", "vector-effect", "href",
    "xlink:href", "marker-start", "marker-mid", "marker-end", "markerwidth", "markerheight", "markerunits", "refx",
    "refy", "orient", "clip-path", "clippathunits", "clip-rule", "mask", "maskunits", "maskcontentunits", "offset",
    "stop-color", "stop-opacity", "gradientunits", "gradienttransform", "spreadmethod", "fx", "fy", "patternunits",
    "patterncontentunits", "patterntransform", "data-run-id", "data-model-fingerprint"};
// The functions a value may call: transforms, colours, and url() of an
// element in the page (#id) only; image-set() and the like would fetch.
constexpr std::string_view kSvgFunctions[] = {"url", "rotate", "translate", "scale", "matrix", "skewx", "skewy",
                                              "rgb", "rgba", "hsl", "hsla"};
// A chart's ids share the page's id space: the prefix keeps them off the
// page's own (#timeline, #opscope-data-trace.json), which a chart inlined
// before those would shadow.
constexpr std::string_view kSvgIdPrefix = "chart-";

bool Listed(std::span<const std::string_view> list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

bool IsSvgSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Why the value of `attr` is refused, or "". Both lower-cased.
std::string SvgValueProblem(const std::string& attr, const std::string& value) {
  // Entities and CSS escapes could spell anything the checks below look for.
  if (value.find_first_of("<&\\") != std::string::npos) return "a '<', '&' or '\\' in attribute " + attr;
  if (value.find("javascript:") != std::string::npos) return "a javascript URL in attribute " + attr;
  if (attr == "id" && !value.starts_with(kSvgIdPrefix)) {
    return "id '" + value + "' (a chart's ids start with " + std::string(kSvgIdPrefix) + ")";
  }
  if ((attr == "href" || attr == "xlink:href") && !value.starts_with('#')) {
    return "a link out of the chart (" + attr + ")";
  }
  for (size_t paren = value.find('('); paren != std::string::npos; paren = value.find('(', paren + 1)) {
    size_t name_end = paren;
    while (name_end > 0 && IsSvgSpace(value[name_end - 1])) --name_end;
    size_t name_at = name_end;
    while (name_at > 0 && (std::isalnum(static_cast<unsigned char>(value[name_at - 1])) || value[name_at - 1] == '-')) {
      --name_at;
    }
    const std::string name = value.substr(name_at, name_end - name_at);
    if (!Listed(kSvgFunctions, name)) return "the function '" + name + "()' in attribute " + attr;
    size_t arg = paren + 1;
    while (arg < value.size() && (IsSvgSpace(value[arg]) || value[arg] == '"' || value[arg] == '\'')) ++arg;
    if (name == "url" && (arg == value.size() || value[arg] != '#')) return "a url() out of the chart in attribute " + attr;
  }
  return "";
}

}  // namespace

StatusOr<std::string> CheckInlineSvg(std::string_view svg) {
  const auto refuse = [](const std::string& why) {
    return InvalidArgumentError("roofline chart refused: " + why + " (expected one <svg> element of drawing elements)");
  };
  size_t at = 0;
  const auto skip_space = [&] {
    while (at < svg.size() && IsSvgSpace(svg[at])) ++at;
  };
  skip_space();
  if (svg.substr(at, 5) == "<?xml") {
    const size_t end = svg.find("?>", at);
    if (end == std::string_view::npos) return refuse("an unterminated XML declaration");
    at = end + 2;
    skip_space();
  }
  const size_t begin = at;
  const auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
  };
  std::vector<std::string_view> open;
  bool closed_root = false;
  while (at < svg.size()) {
    const size_t lt = svg.find('<', at);
    const std::string_view text = svg.substr(at, lt == std::string_view::npos ? lt : lt - at);
    if (open.empty() && !std::all_of(text.begin(), text.end(), IsSvgSpace)) {
      return refuse(closed_root ? "something after </svg>" : "text before <svg>");
    }
    if (lt == std::string_view::npos) break;
    at = lt + 1;
    if (closed_root) return refuse("a second element after </svg>");
    if (at < svg.size() && (svg[at] == '!' || svg[at] == '?')) return refuse("a comment, CDATA or declaration inside");
    const bool closing = at < svg.size() && svg[at] == '/';
    if (closing) ++at;
    const size_t name_at = at;
    while (at < svg.size() && name_char(svg[at])) ++at;
    const std::string_view name = svg.substr(name_at, at - name_at);
    if (name.empty()) return refuse("a raw '<' in text");
    if (!Listed(kSvgElements, name)) return refuse("<" + std::string(name) + ">");
    if (open.empty() && name != "svg") return refuse("<" + std::string(name) + "> at the top, not <svg>");
    if (closing) {
      skip_space();
      if (at >= svg.size() || svg[at] != '>') return refuse("a malformed </" + std::string(name) + ">");
      ++at;
      if (open.empty() || open.back() != name) return refuse("</" + std::string(name) + "> closes nothing open");
      open.pop_back();
      closed_root = open.empty();
      continue;
    }
    // The attributes, up to '>' or '/>'.
    while (true) {
      skip_space();
      if (at >= svg.size()) return refuse("an unterminated <" + std::string(name) + ">");
      if (svg[at] == '>' || svg.substr(at, 2) == "/>") break;
      const size_t attr_at = at;
      while (at < svg.size() && name_char(svg[at])) ++at;
      const std::string attr = AsciiLower(svg.substr(attr_at, at - attr_at));
      if (attr.empty()) return refuse("a malformed attribute in <" + std::string(name) + ">");
      skip_space();
      if (at >= svg.size() || svg[at] != '=') return refuse("attribute " + attr + " without a value");
      ++at;
      skip_space();
      const char quote = at < svg.size() ? svg[at] : '\0';
      if (quote != '"' && quote != '\'') return refuse("attribute " + attr + " without quotes");
      const size_t value_end = svg.find(quote, at + 1);
      if (value_end == std::string_view::npos) return refuse("an unterminated attribute " + attr);
      const std::string value = AsciiLower(svg.substr(at + 1, value_end - at - 1));
      at = value_end + 1;
      if (attr.starts_with("on")) return refuse("the handler " + attr);
      if (!Listed(kSvgAttributes, attr)) return refuse("attribute " + attr + " in <" + std::string(name) + ">");
      if (const std::string why = SvgValueProblem(attr, value); !why.empty()) return refuse(why);
    }
    if (svg[at] == '>') {
      open.push_back(name);
      ++at;
    } else {
      at += 2;
      closed_root = open.empty();
    }
  }
  if (!closed_root) return refuse(begin == svg.size() ? "no <svg> element" : "an <svg> element left open");
  const size_t end = svg.find_last_not_of(" \t\r\n") + 1;
  return std::string(svg.substr(begin, end - begin));
}

}  // namespace opscope
