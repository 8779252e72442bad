#include "cli/inspector_web.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <regex>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/diagnose/diagnosis_timeline.h"
#include "cli/page_data.h"
#include "core/file_util.h"
#include "core/json_text.h"
#include "core/sha256.h"
#include "graph/runtime/run_identity.h"
#include "graph/runtime/session_export.h"
#include "opscope/diagnose.h"
#include "opscope/model.h"
#include "opscope/npy.h"

namespace opscope::cli {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The Content-Security-Policy source that lets exactly this inline element's
// text run (or apply): nothing injected into a page matches it.
std::string HashSource(std::string_view text) { return "'sha256-" + Base64(Sha256(text)) + "'"; }

// The text of an asset as it sits between its inlined element's tags.
std::string InlinedText(const WebAsset& asset) { return "\n" + std::string(asset.data); }

struct InlinedAsset {
  std::string element;  // <script>...</script> or <style>...</style>
  std::string hash_source;
};

// Inlines one linked asset. The asset must not be able to end the element it
// is put in (a literal "</script" in app code would cut the page short).
StatusOr<InlinedAsset> InlineAsset(std::string_view name, std::string_view element) {
  const WebAsset* asset = FindWebAsset(name);
  if (!asset) return InternalError("web/index.html links '" + std::string(name) + "', which is not compiled in");
  if (Lower(asset->data).find("</" + std::string(element)) != std::string::npos) {
    return InternalError("web/" + std::string(name) + " contains '</" + std::string(element) +
                         "', which would end the inlined element");
  }
  const std::string text = InlinedText(*asset);
  return InlinedAsset{.element = "<" + std::string(element) + ">" + text + "</" + std::string(element) + ">",
                      .hash_source = HashSource(text)};
}

// What every page may load. Scripts and styles: the UI's own, inline ones by
// their hashes, so neither an injected handler (no 'unsafe-inline') nor an
// injected <script> or <style> (a stylesheet could @import from anywhere or
// hide the page) applies. Images: data: URLs only (the favicon). Nothing from
// another host. `served` adds the server the page was fetched from: its
// scripts, stylesheet and the run files the page fetches.
std::string PagePolicy(const std::vector<std::string>& scripts, const std::vector<std::string>& styles, bool served) {
  const auto join = [](std::string head, const std::vector<std::string>& sources) {
    for (const std::string& s : sources) head += " " + s;
    return head;
  };
  const std::string self = served ? " 'self'" : "";
  std::string policy = "default-src 'none'; " + join("script-src" + self, scripts) + "; " +
                       join("style-src" + self, styles) + "; img-src data:; base-uri 'none'; form-action 'none'";
  // frame-ancestors is ignored in a <meta> policy: only the server can say it.
  if (served) policy += "; connect-src 'self'; frame-ancestors 'none'";
  return policy;
}

// The policy every answer of `serve` carries. It names the hashes of every
// asset as BuildReportHtml inlines it, since a diagnosis folder's page comes
// built, its scripts inline.
const std::string& ServedPolicy() {
  static const std::string policy = [] {
    std::vector<std::string> scripts, styles;
    for (const WebAsset& a : EmbeddedWebAssets()) {
      if (a.name.ends_with(".js")) scripts.push_back(HashSource(InlinedText(a)));
      if (a.name.ends_with(".css")) styles.push_back(HashSource(InlinedText(a)));
    }
    return PagePolicy(scripts, styles, /*served=*/true);
  }();
  return policy;
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 414: return "URI Too Long";
    case 422: return "Unprocessable Content";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

HttpResponse Plain(int status, std::string body) {
  return HttpResponse{.status = status, .content_type = "text/plain; charset=utf-8", .body = std::move(body) + "\n"};
}

std::string SerializeResponse(const HttpResponse& r) {
  std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + ReasonPhrase(r.status) + "\r\n";
  head += "Content-Type: " + r.content_type + "\r\n";
  head += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  head += "Content-Security-Policy: " + ServedPolicy() + "\r\n";
  // The run files change when `run` writes DIR again: always ask anew.
  head += "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n";
  return head + r.body;
}

// RFC 9110's token characters, of which a method is made.
bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

struct RequestLine {
  std::string_view method, target;
};

// "METHOD SP TARGET SP HTTP/1.x", or nullopt.
std::optional<RequestLine> SplitRequestLine(std::string_view line) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0) return std::nullopt;
  const RequestLine split{.method = line.substr(0, sp1), .target = line.substr(sp1 + 1, sp2 - sp1 - 1)};
  if (split.method.empty() || split.target.empty() ||
      !std::all_of(split.method.begin(), split.method.end(), IsTokenChar)) {
    return std::nullopt;
  }
  return split;
}

// The Host header's name, without the port ("" when there is none).
std::string HostName(std::string_view head) {
  size_t at = 0;
  while ((at = head.find("\r\n", at)) != std::string_view::npos) {
    at += 2;
    const size_t eol = head.find("\r\n", at);
    const std::string line = Lower(head.substr(at, eol == std::string_view::npos ? eol : eol - at));
    if (line.rfind("host:", 0) != 0) continue;
    std::string host = line.substr(5);
    host.erase(0, host.find_first_not_of(" \t"));
    host.erase(host.find_last_not_of(" \t") + 1);
    if (host.rfind('[', 0) == 0) return host.substr(0, host.find(']') + 1);  // [::1]:8765
    return host.substr(0, host.find(':'));
  }
  return "";
}

// An IPv4 literal in 127.0.0.0/8 (a name that merely starts with "127." is not).
bool IsLoopback(std::string_view address) {
  in_addr a{};
  return ::inet_pton(AF_INET, std::string(address).c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

// Whether the folder has something by that name that is not a folder: a
// file, or a link or device named like one, which ReadFolderFile then refuses
// by name (a link is never read: whatever it points at is outside the folder).
bool IsFile(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::symlink_status(path, ec);
  return std::filesystem::exists(st) && !std::filesystem::is_directory(st);
}
bool Present(const std::string& dir, const std::string& name) { return IsFile(dir + "/" + name); }

// Every file of DIR the server hands out, by name.
const std::vector<std::string>& ServedFiles() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> f(std::begin(kRunFiles), std::end(kRunFiles));
    for (const char* t : kTraceOnlyFiles) {
      if (std::find(f.begin(), f.end(), t) == f.end()) f.push_back(t);  // trace.json is in both lists
    }
    f.push_back(kRooflineFile);
    return f;
  }();
  return files;
}

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void OnStopSignal(int) { g_stop_signal = 1; }

}  // namespace

const WebAsset* FindWebAsset(std::string_view name) {
  for (const WebAsset& a : EmbeddedWebAssets()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string EscapeJsonForScript(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

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
      const std::string attr = Lower(svg.substr(attr_at, at - attr_at));
      if (attr.empty()) return refuse("a malformed attribute in <" + std::string(name) + ">");
      skip_space();
      if (at >= svg.size() || svg[at] != '=') return refuse("attribute " + attr + " without a value");
      ++at;
      skip_space();
      const char quote = at < svg.size() ? svg[at] : '\0';
      if (quote != '"' && quote != '\'') return refuse("attribute " + attr + " without quotes");
      const size_t value_end = svg.find(quote, at + 1);
      if (value_end == std::string_view::npos) return refuse("an unterminated attribute " + attr);
      const std::string value = Lower(svg.substr(at + 1, value_end - at - 1));
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

StatusOr<std::string> BuildReportHtml(const ReportData& data) {
  if (data.trace.empty()) return InvalidArgumentError("BuildReportHtml: no trace to show");
  if (data.graph.empty() != data.summary.empty()) {
    return InvalidArgumentError(
        "BuildReportHtml: a run needs both graph.json and summary.json (or neither, for a trace alone)");
  }
  std::string svg;
  if (!data.roofline_svg.empty()) {
    OPSCOPE_ASSIGN_OR_RETURN(svg, CheckInlineSvg(data.roofline_svg));
  }
  const WebAsset* index = FindWebAsset("index.html");
  if (!index) return InternalError("web/index.html is not compiled in");
  const std::string page(index->data);
  std::string json_data;
  const auto embed = [&](const std::string& id, const std::string& json) {
    json_data += "<script type=\"application/json\" id=\"opscope-data-" + id + "\">" + EscapeJsonForScript(json) +
                 "</script>\n";
  };
  if (!data.graph.empty()) embed("graph.json", GraphForPage(data.graph));
  embed("trace.json", data.trace);
  if (!data.summary.empty()) embed("summary.json", SummaryForPage(data.summary));
  if (!data.diagnosis.empty()) embed("diagnosis", data.diagnosis);
  if (!data.diff.empty()) embed("diff.json", DiffForPage(data.diff));
  if (!data.title.empty()) embed("page", JsonText(nlohmann::json({{"title", data.title}})));
  // One pass over index.html alone: the links as it writes them and its three
  // markers; what goes in is never scanned again. Anything else is left as it is.
  static const std::regex link(R"re(<link rel="stylesheet" href="([A-Za-z0-9_.-]+)">)re"
                               R"re(|<script src="([A-Za-z0-9_.-]+)"></script>)re"
                               R"re(|<!-- opscope:(data|roofline|policy) -->)re");
  std::string out;
  out.reserve(page.size() + 64 * 1024 + json_data.size() + svg.size());
  size_t last = 0;
  bool data_placed = false, svg_placed = false;
  std::optional<size_t> policy_at;  // the policy needs every inlined hash: it goes in last
  std::vector<std::string> scripts, styles;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), link); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out.append(page, last, static_cast<size_t>(m.position(0)) - last);
    last = static_cast<size_t>(m.position(0) + m.length(0));
    if (m.str(3) == "policy") {
      // A <meta> policy covers only what comes after it.
      if (!scripts.empty() || !styles.empty()) {
        return InternalError("web/index.html inlines an asset before its <!-- opscope:policy --> marker");
      }
      policy_at = out.size();
      continue;
    }
    if (m[3].matched) {
      const bool is_data = m.str(3) == "data";
      out += is_data ? json_data : svg;
      (is_data ? data_placed : svg_placed) = true;
      continue;
    }
    const bool css = m[1].matched;
    OPSCOPE_ASSIGN_OR_RETURN(InlinedAsset inlined, InlineAsset(css ? m.str(1) : m.str(2), css ? "style" : "script"));
    out += inlined.element;
    (css ? styles : scripts).push_back(std::move(inlined.hash_source));
  }
  out.append(page, last);
  if (!data_placed || !svg_placed || !policy_at) {
    return InternalError(
        "web/index.html lacks the <!-- opscope:data -->, <!-- opscope:roofline --> or <!-- opscope:policy --> marker");
  }
  out.insert(*policy_at, "<meta http-equiv=\"Content-Security-Policy\" content=\"" +
                             PagePolicy(scripts, styles, /*served=*/false) + "\">");
  return out;
}

StatusOr<std::string> BuildTimelineHtml(const std::string& timeline_json, const std::string& roofline_svg,
                                        const std::string& title) {
  return BuildReportHtml(ReportData{.trace = timeline_json, .roofline_svg = roofline_svg, .title = title});
}

namespace {

ReportData DiagnosisReport(DiagnosisTimeline t) {
  return ReportData{.trace = std::move(t.trace), .diagnosis = std::move(t.panel), .title = std::move(t.title)};
}

// The trace-only file a folder is shown by, or nullptr: a run's folder
// (graph.json or summary.json) is never one.
const char* TraceOnlyFileIn(const std::string& dir) {
  if (IsFile(dir + "/graph.json") || IsFile(dir + "/summary.json")) return nullptr;
  for (const char* name : kTraceOnlyFiles) {
    if (IsFile(dir + "/" + name)) return name;
  }
  return nullptr;
}

}  // namespace

StatusOr<std::string> BuildDiagnosisHtml(std::string_view diagnosis_json, const std::string& source) {
  OPSCOPE_ASSIGN_OR_RETURN(DiagnosisTimeline t, DiagnosisTimelineFromJson(diagnosis_json, source));
  return BuildReportHtml(DiagnosisReport(std::move(t)));
}

StatusOr<ReportData> ReadReportDir(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) {
    return NotFoundError(dir + ": no such folder (an inspector-cli run output folder)");
  }
  const auto missing = [&](const std::string& name, const std::string& more) {
    return NotFoundError(dir + "/" + name + ": missing (write it with `inspector-cli run MODEL.onnx --output-dir " +
                         dir + "` or `inspector-cli export --input-dir " + dir + " --format json`)" + more);
  };
  ReportData data;
  const bool run = IsFile(dir + "/graph.json") || IsFile(dir + "/summary.json");
  // A session's exports are written by one `export` and carry no run identity.
  const bool session = graph::IsSessionDir(dir);
  if (run) {
    std::string* into[] = {&data.graph, &data.trace, &data.summary};
    std::map<std::string, const std::string*> texts;
    for (size_t i = 0; i < std::size(kRunFiles); ++i) {
      if (!Present(dir, kRunFiles[i])) return missing(kRunFiles[i], "");
      OPSCOPE_ASSIGN_OR_RETURN(*into[i], ReadFolderFile(dir, kRunFiles[i]));
      texts[kRunFiles[i]] = into[i];
    }
    // All three checked whole as JSON, and they, capture.json and
    // roofline.svg all of one run: a page never mixes two runs.
    if (!session) OPSCOPE_RETURN_IF_ERROR(graph::CheckRunFolder(dir, texts).status());
  } else if (const char* name = TraceOnlyFileIn(dir)) {
    const std::string path = dir + "/" + name;
    OPSCOPE_ASSIGN_OR_RETURN(std::string text, ReadFolderFile(dir, name));
    if (std::string_view(name) == kDiagnosisFile) {
      OPSCOPE_ASSIGN_OR_RETURN(DiagnosisTimeline t, DiagnosisTimelineFromJson(text, path));
      data = DiagnosisReport(std::move(t));
    } else {
      // A trace a run wrote is shown alone only beside files of that run.
      OPSCOPE_ASSIGN_OR_RETURN(std::optional<graph::RunIdentity> id, graph::FindRunFileIdentity(path, &text));
      if (id && !session) OPSCOPE_RETURN_IF_ERROR(graph::CheckRunFolder(dir, {{name, &text}}).status());
      data.trace = std::move(text);
    }
  }
  if (data.trace.empty()) {
    return missing("graph.json", ", and there is no trace.json, timeline.json (ops-debug profile) or diagnosis.json "
                                 "(ops-debug diagnose) to show alone");
  }
  if (Present(dir, kRooflineFile)) {
    OPSCOPE_ASSIGN_OR_RETURN(std::string svg, ReadFolderFile(dir, kRooflineFile));
    StatusOr<std::string> checked = CheckInlineSvg(svg);
    if (!checked.ok()) return InvalidArgumentError(dir + "/" + kRooflineFile + ": " + checked.status().message());
    data.roofline_svg = std::move(*checked);
  }
  return data;
}

StatusOr<std::string> WriteReportHtml(const std::string& dir, const ReportBaseline& baseline) {
  OPSCOPE_ASSIGN_OR_RETURN(ReportData data, ReadReportDir(dir));
  if (!baseline.dir.empty()) {
    StatusOr<RunDiffReport> d = DiffRunFolders({.base_dir = baseline.dir,
                                                .new_dir = dir,
                                                .threshold_time_pct = baseline.threshold_time_pct,
                                                .allow_different_models = baseline.allow_different_models});
    if (!d.ok()) return Status(d.status()).WithContext("--baseline " + baseline.dir);
    data.diff = std::move(d->json);
  }
  OPSCOPE_ASSIGN_OR_RETURN(std::string html, BuildReportHtml(data));
  const std::string path = dir + "/report.html";
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(path, html));
  return path;
}

RequestHeadScan ScanRequestHead(std::string_view received) {
  const auto refuse = [](int status, std::string reason) {
    return RequestHeadScan{.refuse = status, .reason = std::move(reason)};
  };
  const size_t eol = received.find("\r\n");
  const std::string_view line = received.substr(0, eol);
  // Whatever has come of the method must be a token: a TLS handshake or
  // binary noise is refused at its first bytes, not after the timeout.
  const size_t sp = line.find(' ');
  const std::string_view method = line.substr(0, sp);
  if (sp == 0 || !std::all_of(method.begin(), method.end(), IsTokenChar)) return refuse(400, "malformed request line");
  // Without its CRLF yet, a trailing CR may be the first half of it.
  const size_t line_size = eol != std::string_view::npos ? eol : received.size() - (received.ends_with('\r') ? 1 : 0);
  if (line_size > kMaxRequestLineBytes) {
    if (sp == std::string_view::npos) return refuse(400, "malformed request line");
    return refuse(414, "the request line is longer than " + std::to_string(kMaxRequestLineBytes) + " bytes");
  }
  if (eol == std::string_view::npos) return {};
  if (!SplitRequestLine(line)) return refuse(400, "malformed request line");
  const size_t headers_at = eol + 2;
  const size_t blank = received.find("\r\n\r\n", eol);
  const size_t header_bytes = (blank == std::string_view::npos ? received.size() : blank + 4) - headers_at;
  if (header_bytes > kMaxHeaderBytes) {
    return refuse(431, "the header lines are longer than " + std::to_string(kMaxHeaderBytes) + " bytes together");
  }
  if (blank == std::string_view::npos) return {};
  return RequestHeadScan{.head_size = blank + 4};
}

HttpResponse AnswerHttpRequest(std::string_view head, const std::string& dir, std::string_view bind_address) {
  const std::optional<RequestLine> line = SplitRequestLine(head.substr(0, head.find("\r\n")));
  if (!line) return Plain(400, "malformed request line");
  std::string_view target = line->target;
  if (line->method != "GET") return Plain(405, "only GET is served");
  if (IsLoopback(bind_address)) {
    const std::string host = HostName(head);
    if (!host.empty() && host != "localhost" && host != "[::1]" && !IsLoopback(host)) {
      return Plain(403, "Host '" + host + "' refused: this server answers to loopback names only");
    }
  }
  target = target.substr(0, target.find_first_of("?#"));
  if (target == "/") target = "/index.html";
  if (target.size() < 2 || target[0] != '/') return Plain(404, "not found");
  const std::string_view name = target.substr(1);
  // A diagnosis is drawn from what the library makes of it, so its page comes built.
  if (name == "index.html") {
    const char* alone = TraceOnlyFileIn(dir);
    if (alone && std::string_view(alone) == kDiagnosisFile) {
      StatusOr<ReportData> data = ReadReportDir(dir);
      StatusOr<std::string> html = data.ok() ? BuildReportHtml(*data) : StatusOr<std::string>(data.status());
      if (!html.ok()) return Plain(422, html.status().message());
      return HttpResponse{.status = 200, .content_type = "text/html; charset=utf-8", .body = std::move(*html)};
    }
  }
  // Exact names only: nothing from the request is ever joined to a path.
  if (name == "files.json") {
    // The page asks for this first: a folder holding two runs' files (or
    // one that no longer reads as a run) is refused before any is drawn.
    const bool run = IsFile(dir + "/graph.json") || IsFile(dir + "/summary.json");
    if (run && !graph::IsSessionDir(dir)) {
      const StatusOr<graph::RunIdentity> id = graph::CheckRunFolder(dir);
      if (!id.ok()) return Plain(422, id.status().message());
    }
    nlohmann::json present = nlohmann::json::array();
    for (const std::string& f : ServedFiles()) {
      if (IsFile(dir + "/" + f)) present.push_back(f);
    }
    return HttpResponse{.status = 200, .content_type = "application/json",
                        .body = JsonText(nlohmann::json({{"files", present}}))};
  }
  for (const std::string& served : ServedFiles()) {
    if (name != served) continue;
    // Opened anew at each request, never through a link: a file swapped for
    // one after the server started is refused, not served from elsewhere.
    StatusOr<std::string> text = ReadFolderFile(dir, served);
    if (!text.ok()) {
      if (text.status().code() == StatusCode::kNotFound) return Plain(404, served + " is missing in the served folder");
      return Plain(403, served + ": " + text.status().message());
    }
    if (served != kRooflineFile) {
      return HttpResponse{.status = 200, .content_type = "application/json", .body = std::move(*text)};
    }
    StatusOr<std::string> svg = CheckInlineSvg(*text);
    if (!svg.ok()) return Plain(422, served + ": " + svg.status().message());
    return HttpResponse{.status = 200, .content_type = "image/svg+xml", .body = std::move(*svg)};
  }
  if (const WebAsset* asset = FindWebAsset(name)) {
    return HttpResponse{
        .status = 200, .content_type = std::string(asset->content_type), .body = std::string(asset->data)};
  }
  return Plain(404, "not found");
}

WebServer::~WebServer() {
  if (fd_ >= 0) ::close(fd_);
}

Status WebServer::Listen(const std::string& bind_address, int port) {
  if (port < 0 || port > 65535) {
    return InvalidArgumentError("--port " + std::to_string(port) + ": expected 0..65535 (0 picks a free port)");
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, bind_address.c_str(), &addr.sin_addr) != 1) {
    return InvalidArgumentError("--bind '" + bind_address + "': expected an IPv4 address such as 127.0.0.1");
  }
  bind_address_ = bind_address;
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return InternalError(std::string("socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return InvalidArgumentError("--bind " + bind_address + " --port " + std::to_string(port) +
                                ": cannot listen there (" + std::strerror(errno) + ")");
  }
  if (::listen(fd_, 128) != 0) return InternalError(std::string("listen: ") + std::strerror(errno));
  socklen_t len = sizeof(addr);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  return Status::Ok();
}

namespace {

using Clock = std::chrono::steady_clock;

// A client with its answer sent may still be sending (a body, the rest of a
// refused head): closing with those bytes unread would reset the connection
// and could destroy the answer before it is read. They are read and dropped
// until it closes, for at most this long.
constexpr auto kLingerAtMost = std::chrono::seconds(2);
// How long answers under way get once the server is told to stop.
constexpr auto kStopGrace = std::chrono::seconds(2);
// Clients accepted in one turn of the loop, so those held are served between bursts.
constexpr int kAcceptsPerTurn = 64;

// One client, from accept to close.
struct Connection {
  enum class Phase { kReading, kWriting, kLingering };
  int fd = -1;
  Phase phase = Phase::kReading;
  Clock::time_point accepted;
  // Reading: the end of the whole head's time; writing: the next progress due; lingering: the close.
  Clock::time_point deadline;
  std::string head;  // what came so far, never more than kMaxRequestHeadBytes
  std::string response;
  size_t sent = 0;
};

void Close(Connection& c) {
  if (c.fd >= 0) ::close(c.fd);
  c.fd = -1;
}

bool WouldBlock() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

// For a client dropped at once: one try at telling it why, never waiting on it.
void RefuseAndClose(Connection& c, int status, const std::string& why) {
  const std::string bytes = SerializeResponse(Plain(status, why));
  (void)::send(c.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  Close(c);
}

std::string FormatTimeout(std::chrono::milliseconds t) {
  return t.count() % 1000 == 0 ? std::to_string(t.count() / 1000) + "s" : std::to_string(t.count()) + "ms";
}

class ClientLoop {
 public:
  ClientLoop(const std::string& dir, const std::string& bind_address, const ServeLimits& limits,
             const std::vector<Connection>& clients)
      : dir_(dir), bind_address_(bind_address), limits_(limits), clients_(clients) {}

  void Read(Connection& c, Clock::time_point now) {
    char buf[4096];
    const size_t room = kMaxRequestHeadBytes - c.head.size();  // ScanRequestHead decides before it is 0
    const ssize_t n = ::recv(c.fd, buf, std::min(sizeof(buf), room), MSG_DONTWAIT);
    if (n < 0) {
      if (!WouldBlock()) Close(c);
      return;
    }
    if (n == 0) {
      if (c.head.empty()) return Close(c);
      return Respond(c, Plain(400, "the request ended before the blank line that ends its head"), now);
    }
    c.head.append(buf, static_cast<size_t>(n));
    const RequestHeadScan scan = ScanRequestHead(c.head);
    if (scan.refuse) return Respond(c, Plain(scan.refuse, scan.reason), now);
    if (scan.head_size) {
      return Respond(c, AnswerHttpRequest(std::string_view(c.head).substr(0, scan.head_size), dir_, bind_address_),
                     now);
    }
  }

  void Write(Connection& c, Clock::time_point now) {
    while (c.sent < c.response.size()) {
      const ssize_t n =
          ::send(c.fd, c.response.data() + c.sent, c.response.size() - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && WouldBlock()) return;
      if (n <= 0) return Close(c);
      c.sent += static_cast<size_t>(n);
      c.deadline = now + limits_.request_timeout;
    }
    ::shutdown(c.fd, SHUT_WR);
    c.phase = Connection::Phase::kLingering;
    c.response = std::string();
    c.deadline = now + std::min<Clock::duration>(limits_.request_timeout, kLingerAtMost);
  }

  static void Drain(Connection& c) {
    char buf[4096];
    const ssize_t n = ::recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && !WouldBlock())) Close(c);
  }

  // A head not whole in time gets 408; an answer not read, or a client that
  // does not close after it, is dropped.
  void Expire(Connection& c, Clock::time_point now) {
    if (c.phase != Connection::Phase::kReading) return Close(c);
    Respond(c, Plain(408, "the request head did not arrive within " + FormatTimeout(limits_.request_timeout)), now);
  }

  // At the cap, the oldest client that is not being answered goes (those
  // done first), so no burst of idle sockets keeps a new client out. False
  // when every one is being answered.
  static bool MakeRoom(std::vector<Connection>& clients) {
    Connection* oldest = nullptr;
    const auto rank = [](const Connection& c) {
      return std::make_pair(c.phase != Connection::Phase::kLingering, c.accepted);
    };
    for (Connection& c : clients) {
      if (c.phase == Connection::Phase::kWriting) continue;
      if (!oldest || rank(c) < rank(*oldest)) oldest = &c;
    }
    if (!oldest) return false;
    if (oldest->phase == Connection::Phase::kLingering) {
      Close(*oldest);
    } else {
      RefuseAndClose(*oldest, 503, "too many connections: this one waited longest for its request");
    }
    std::erase_if(clients, [](const Connection& c) { return c.fd < 0; });
    return true;
  }

 private:
  // What the clients being answered have yet to read.
  size_t PendingBytes() const {
    size_t pending = 0;
    for (const Connection& o : clients_) {
      if (o.fd >= 0 && o.phase == Connection::Phase::kWriting) pending += o.response.size() - o.sent;
    }
    return pending;
  }

  void Respond(Connection& c, const HttpResponse& r, Clock::time_point now) {
    c.response = SerializeResponse(r);
    // One answer of any size is given when none waits (a run's trace may be
    // larger than the budget); past that, the budget holds.
    if (const size_t pending = PendingBytes(); pending > 0 && pending + c.response.size() > limits_.max_pending_bytes) {
      c.response = SerializeResponse(Plain(503, "busy: " + std::to_string(pending >> 20) +
                                                    " MiB of answers wait for clients that have not read them: "
                                                    "try again"));
    }
    c.sent = 0;
    c.head = std::string();
    c.phase = Connection::Phase::kWriting;
    c.deadline = now + limits_.request_timeout;
    Write(c, now);  // most answers fit in the socket's buffer at once
  }

  const std::string& dir_;
  const std::string& bind_address_;
  const ServeLimits& limits_;
  const std::vector<Connection>& clients_;
};

// A file descriptor kept in reserve: when accept fails for want of one
// (EMFILE), it is given up for a moment so the waiting client can be told
// 503 and closed, instead of the listening socket staying readable and the
// loop spinning on it.
class SpareDescriptor {
 public:
  SpareDescriptor() { Take(); }
  ~SpareDescriptor() { Release(); }
  SpareDescriptor(const SpareDescriptor&) = delete;
  SpareDescriptor& operator=(const SpareDescriptor&) = delete;
  bool held() const { return fd_ >= 0; }
  void Take() {
    if (fd_ < 0) fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  void Release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

}  // namespace

Status WebServer::Serve(const std::string& dir, const volatile std::sig_atomic_t* stop, const ServeLimits& limits) {
  if (fd_ < 0) return FailedPreconditionError("WebServer::Serve before Listen");
  if (limits.request_timeout.count() <= 0 || limits.max_connections < 1) {
    return InvalidArgumentError("WebServer::Serve: the request timeout and the connection cap must be positive");
  }
  // Accepting never blocks either: a client gone between poll and accept leaves nothing to wait for.
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  std::vector<Connection> clients;
  ClientLoop loop(dir, bind_address_, limits, clients);
  SpareDescriptor spare;
  // Out of descriptors with none in reserve: the listening socket is left
  // out of the poll until then, so the loop sleeps instead of spinning.
  Clock::time_point accept_again = Clock::time_point::min();
  std::vector<pollfd> polled;
  std::optional<Clock::time_point> stop_by;
  const auto closed = [](const Connection& c) { return c.fd < 0; };
  Status status = Status::Ok();
  while (true) {
    Clock::time_point now = Clock::now();
    if (*stop && !stop_by) {
      stop_by = now + kStopGrace;
      for (Connection& c : clients) {
        if (c.phase != Connection::Phase::kWriting) Close(c);
      }
    }
    for (Connection& c : clients) {
      if (c.fd >= 0 && c.deadline <= now) loop.Expire(c, now);
    }
    std::erase_if(clients, closed);
    if (stop_by && (clients.empty() || now >= *stop_by)) break;

    polled.clear();
    const bool accepting = !stop_by && now >= accept_again;
    polled.push_back(pollfd{.fd = accepting ? fd_ : -1, .events = POLLIN, .revents = 0});  // poll skips fd -1
    Clock::time_point wake = now + std::chrono::milliseconds(200);
    if (!accepting && !stop_by) wake = std::min(wake, accept_again);
    if (stop_by) wake = std::min(wake, *stop_by);
    for (const Connection& c : clients) {
      const short events = c.phase == Connection::Phase::kWriting ? POLLOUT : POLLIN;
      polled.push_back(pollfd{.fd = c.fd, .events = events, .revents = 0});
      wake = std::min(wake, c.deadline);
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
    const int ready = ::poll(polled.data(), polled.size(), static_cast<int>(std::max<int64_t>(0, wait)));
    if (ready < 0 && errno != EINTR) {
      status = InternalError(std::string("poll: ") + std::strerror(errno));
      break;
    }
    if (ready <= 0) continue;

    now = Clock::now();
    for (size_t i = 0; i < clients.size(); ++i) {
      if (polled[i + 1].revents == 0) continue;
      Connection& c = clients[i];
      switch (c.phase) {
        case Connection::Phase::kReading: loop.Read(c, now); break;
        case Connection::Phase::kWriting: loop.Write(c, now); break;
        case Connection::Phase::kLingering: ClientLoop::Drain(c); break;
      }
    }
    std::erase_if(clients, closed);
    if (!(polled[0].revents & POLLIN)) continue;
    for (int i = 0; i < kAcceptsPerTurn; ++i) {
      Connection c{.fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK), .accepted = now,
                   .deadline = now + limits.request_timeout};
      if (c.fd < 0 && (errno == EMFILE || errno == ENFILE)) {
        if (spare.held()) {
          spare.Release();
          c.fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
          if (c.fd >= 0) RefuseAndClose(c, 503, "the server is out of file descriptors: try again");
          spare.Take();
        }
        if (!spare.held()) accept_again = now + std::chrono::milliseconds(100);
        break;
      }
      if (c.fd < 0) break;
      if (static_cast<int>(clients.size()) >= limits.max_connections && !ClientLoop::MakeRoom(clients)) {
        RefuseAndClose(c, 503, "too many connections, every one being answered: try again");
        continue;
      }
      clients.push_back(std::move(c));
    }
  }
  for (Connection& c : clients) Close(c);
  return status;
}

CLI::App* AddInspectorServe(CLI::App& app, InspectorServeFlags& flags) {
  CLI::App* cmd = app.add_subcommand("serve", "serve the web UI for a run folder on loopback (until Ctrl-C)");
  cmd->add_option("dir", flags.dir,
                  "a folder written by `inspector-cli run`, or one holding a trace alone (timeline.json of "
                  "`ops-debug profile`, diagnosis.json of `ops-debug diagnose`), with roofline.svg if it has one")
      ->required();
  cmd->add_option("--port", flags.port, "TCP port (default 8765; 0 picks a free one)");
  cmd->add_option("--bind", flags.bind, "IPv4 address to listen on (default 127.0.0.1)");
  cmd->add_option("--request-timeout", flags.request_timeout,
                  "a client's request head must arrive within it, or it gets 408 (default 10s; 500ms, 1m ...)");
  return cmd;
}

namespace {

// A browser sends its whole head at once; up to 10 minutes leaves room for
// someone typing a request by hand.
StatusOr<std::chrono::milliseconds> ParseRequestTimeout(const std::string& text) {
  const StatusOr<double> seconds = ParseDuration(text);
  if (!seconds.ok() || *seconds < 0.01 || *seconds > 600) {
    return InvalidArgumentError("--request-timeout '" + text +
                                "': expected a duration from 10ms to 10m, such as 10s or 500ms");
  }
  return std::chrono::milliseconds(std::llround(*seconds * 1000));
}

}  // namespace

Status RunInspectorServe(const InspectorServeFlags& flags, std::ostream& out) {
  ServeLimits limits;
  OPSCOPE_ASSIGN_OR_RETURN(limits.request_timeout, ParseRequestTimeout(flags.request_timeout));
  // Checked up front, so a wrong folder is one line now, not a 404 later.
  OPSCOPE_RETURN_IF_ERROR(ReadReportDir(flags.dir).status());
  WebServer server;
  OPSCOPE_RETURN_IF_ERROR(server.Listen(flags.bind, flags.port));
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  g_stop_signal = 0;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  out << "serving " << flags.dir << " at http://" << flags.bind << ":" << server.port() << "/" << std::endl;
  return server.Serve(flags.dir, &g_stop_signal, limits);
}

}  // namespace opscope::cli
