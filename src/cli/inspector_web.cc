#include "cli/inspector_web.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "analysis/diagnose/diagnosis_timeline.h"
#include "graph/runtime/run_identity.h"
#include "graph/runtime/session_export.h"
#include "opscope/npy.h"

namespace opscope::cli {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Inlines one linked asset. The asset must not be able to end the element it
// is put in (a literal "</script" in app code would cut the page short).
StatusOr<std::string> InlineAsset(std::string_view name, std::string_view element) {
  const WebAsset* asset = FindWebAsset(name);
  if (!asset) return InternalError("web/index.html links '" + std::string(name) + "', which is not compiled in");
  if (Lower(asset->data).find("</" + std::string(element)) != std::string::npos) {
    return InternalError("web/" + std::string(name) + " contains '</" + std::string(element) +
                         "', which would end the inlined element");
  }
  return "<" + std::string(element) + ">\n" + std::string(asset->data) + "</" + std::string(element) + ">";
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 422: return "Unprocessable Content";
    case 500: return "Internal Server Error";
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
  // The run files change when `run` writes DIR again: always ask anew.
  head += "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n";
  return head + r.body;
}

bool SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads up to the end of the request head; a client that sends nothing for a
// few seconds (a browser's speculative connection) is dropped.
void HandleConnection(int fd, const std::string& dir, const std::string& bind_address) {
  timeval timeout{.tv_sec = 5, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  constexpr size_t kMaxHead = 16 * 1024;
  std::string head;
  char buf[4096];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < kMaxHead) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    head.append(buf, static_cast<size_t>(n));
  }
  if (!head.empty()) {
    const HttpResponse r = head.find("\r\n\r\n") == std::string::npos && head.size() >= kMaxHead
                               ? Plain(400, "request head too large")
                               : AnswerHttpRequest(head, dir, bind_address);
    SendAll(fd, SerializeResponse(r));
  }
  ::close(fd);
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

bool IsFile(const std::string& path) { return std::filesystem::is_regular_file(path); }

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

StatusOr<std::string> CheckInlineSvg(std::string_view svg) {
  const auto refuse = [](const std::string& why) {
    return InvalidArgumentError("roofline chart refused: " + why + " (expected one <svg> element of drawing elements)");
  };
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  size_t at = 0;
  const auto skip_space = [&] {
    while (at < svg.size() && is_space(svg[at])) ++at;
  };
  skip_space();
  if (svg.substr(at, 5) == "<?xml") {
    const size_t end = svg.find("?>", at);
    if (end == std::string_view::npos) return refuse("an unterminated XML declaration");
    at = end + 2;
    skip_space();
  }
  const size_t begin = at;
  // What a chart is drawn with. Anything else, HTML elements above all, could
  // end the SVG inside an HTML body or run code there.
  static const char* const kAllowed[] = {
      "svg", "g", "defs", "title", "desc", "text", "tspan", "line", "polyline", "polygon", "path", "rect",
      "circle", "ellipse", "marker", "clipPath", "linearGradient", "radialGradient", "stop", "pattern",
      "symbol", "use", "mask", "style"};
  const auto allowed = [&](std::string_view name) {
    return std::any_of(std::begin(kAllowed), std::end(kAllowed), [&](const char* a) { return name == a; });
  };
  const auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
  };
  std::vector<std::string_view> open;
  bool closed_root = false;
  while (at < svg.size()) {
    const size_t lt = svg.find('<', at);
    const std::string_view text = svg.substr(at, lt == std::string_view::npos ? lt : lt - at);
    if (open.empty() && !std::all_of(text.begin(), text.end(), is_space)) {
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
    if (!allowed(name)) return refuse("<" + std::string(name) + ">");
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
      if (attr.rfind("on", 0) == 0) return refuse("the handler " + attr);
      if (value.find('<') != std::string::npos) return refuse("a '<' in attribute " + attr);
      if (value.find("javascript:") != std::string::npos) return refuse("javascript: in attribute " + attr);
      if ((attr == "href" || attr == "xlink:href") && value.rfind('#', 0) != 0) {
        return refuse("a link out of the chart (" + attr + ")");
      }
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
  if (!data.graph.empty()) embed("graph.json", data.graph);
  embed("trace.json", data.trace);
  if (!data.summary.empty()) embed("summary.json", data.summary);
  if (!data.diagnosis.empty()) embed("diagnosis", data.diagnosis);
  if (!data.title.empty()) embed("page", nlohmann::json({{"title", data.title}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  // One pass over index.html alone: the links as it writes them and its two
  // markers; what goes in is never scanned again. Anything else is left as it is.
  static const std::regex link(R"re(<link rel="stylesheet" href="([A-Za-z0-9_.-]+)">)re"
                               R"re(|<script src="([A-Za-z0-9_.-]+)"></script>)re"
                               R"re(|<!-- opscope:(data|roofline) -->)re");
  std::string out;
  out.reserve(page.size() + 64 * 1024 + json_data.size() + svg.size());
  size_t last = 0;
  bool data_placed = false, svg_placed = false;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), link); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out.append(page, last, static_cast<size_t>(m.position(0)) - last);
    last = static_cast<size_t>(m.position(0) + m.length(0));
    if (m[3].matched) {
      const bool is_data = m.str(3) == "data";
      out += is_data ? json_data : svg;
      (is_data ? data_placed : svg_placed) = true;
      continue;
    }
    const bool css = m[1].matched;
    OPSCOPE_ASSIGN_OR_RETURN(std::string inlined, InlineAsset(css ? m.str(1) : m.str(2), css ? "style" : "script"));
    out += inlined;
  }
  out.append(page, last);
  if (!data_placed || !svg_placed) {
    return InternalError("web/index.html lacks the <!-- opscope:data --> or <!-- opscope:roofline --> marker");
  }
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
      const std::string path = dir + "/" + kRunFiles[i];
      if (!IsFile(path)) return missing(kRunFiles[i], "");
      OPSCOPE_ASSIGN_OR_RETURN(*into[i], ReadFile(path));
      texts[kRunFiles[i]] = into[i];
    }
    // All three checked whole as JSON, and they, capture.json and
    // roofline.svg all of one run: a page never mixes two runs.
    if (!session) OPSCOPE_RETURN_IF_ERROR(graph::CheckRunFolder(dir, texts).status());
  } else if (const char* name = TraceOnlyFileIn(dir)) {
    const std::string path = dir + "/" + name;
    OPSCOPE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
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
  if (IsFile(dir + "/" + kRooflineFile)) {
    OPSCOPE_ASSIGN_OR_RETURN(std::string svg, ReadFile(dir + "/" + kRooflineFile));
    StatusOr<std::string> checked = CheckInlineSvg(svg);
    if (!checked.ok()) return InvalidArgumentError(dir + "/" + kRooflineFile + ": " + checked.status().message());
    data.roofline_svg = std::move(*checked);
  }
  return data;
}

StatusOr<std::string> WriteReportHtml(const std::string& dir) {
  OPSCOPE_ASSIGN_OR_RETURN(ReportData data, ReadReportDir(dir));
  OPSCOPE_ASSIGN_OR_RETURN(std::string html, BuildReportHtml(data));
  const std::string path = dir + "/report.html";
  OPSCOPE_RETURN_IF_ERROR(WriteFileAtomic(path, html));
  return path;
}

HttpResponse AnswerHttpRequest(std::string_view head, const std::string& dir, std::string_view bind_address) {
  const size_t eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0) {
    return Plain(400, "malformed request line");
  }
  const std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (method != "GET") return Plain(405, "only GET is served");
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
                        .body = nlohmann::json({{"files", present}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
  }
  for (const std::string& served : ServedFiles()) {
    if (name != served) continue;
    StatusOr<std::string> text = ReadFile(dir + "/" + served);
    if (!text.ok()) return Plain(404, served + " is missing in the served folder");
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
  if (::listen(fd_, 64) != 0) return InternalError(std::string("listen: ") + std::strerror(errno));
  socklen_t len = sizeof(addr);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  return Status::Ok();
}

Status WebServer::Serve(const std::string& dir, const volatile std::sig_atomic_t* stop) {
  if (fd_ < 0) return FailedPreconditionError("WebServer::Serve before Listen");
  // Each connection on its own short-lived thread, so a browser's idle
  // speculative connection never holds up the page's other requests.
  auto active = std::make_shared<std::atomic<int>>(0);
  constexpr int kMaxConnections = 32;
  while (!*stop) {
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    const int ready = ::poll(&p, 1, 200);
    if (ready < 0 && errno != EINTR) return InternalError(std::string("poll: ") + std::strerror(errno));
    if (ready <= 0) continue;
    const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    if (active->load() >= kMaxConnections) {
      ::close(client);
      continue;
    }
    ++*active;
    std::thread([client, dir, bind = bind_address_, active] {
      HandleConnection(client, dir, bind);
      --*active;
    }).detach();
  }
  // Let connections in flight finish before the process exits.
  for (int i = 0; i < 50 && active->load() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return Status::Ok();
}

CLI::App* AddInspectorServe(CLI::App& app, InspectorServeFlags& flags) {
  CLI::App* cmd = app.add_subcommand("serve", "serve the web UI for a run folder on loopback (until Ctrl-C)");
  cmd->add_option("dir", flags.dir,
                  "a folder written by `inspector-cli run`, or one holding a trace alone (timeline.json of "
                  "`ops-debug profile`, diagnosis.json of `ops-debug diagnose`), with roofline.svg if it has one")
      ->required();
  cmd->add_option("--port", flags.port, "TCP port (default 8765; 0 picks a free one)");
  cmd->add_option("--bind", flags.bind, "IPv4 address to listen on (default 127.0.0.1)");
  return cmd;
}

Status RunInspectorServe(const InspectorServeFlags& flags, std::ostream& out) {
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
  return server.Serve(flags.dir, &g_stop_signal);
}

}  // namespace opscope::cli
