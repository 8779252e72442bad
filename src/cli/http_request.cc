#include "cli/http_request.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/file_util.h"
#include "core/json_text.h"
#include "core/text_format.h"
#include "graph/export/capture_json.h"
#include "graph/export/run_folder.h"
#include "graph/export/session_export.h"
#include "graph/harness/accuracy_json.h"
#include "graph/run/captured_run.h"
#include "graph/run/run_identity.h"
#include "report/inline_svg.h"
#include "report/page_data.h"
#include "report/page_policy.h"
#include "report/report_page.h"
#include "report/web_assets.h"

namespace opscope::cli {

namespace {

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
    const std::string line = AsciiLower(head.substr(at, eol == std::string_view::npos ? eol : eol - at));
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
// Every file of DIR the server hands out, by name.
const std::vector<std::string>& ServedFiles() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> f(std::begin(kRunFiles), std::end(kRunFiles));
    for (const char* t : kTraceOnlyFiles) {
      if (std::find(f.begin(), f.end(), t) == f.end()) f.push_back(t);  // trace.json is in both lists
    }
    f.push_back(graph::kRooflineFile);
    f.push_back(kAccuracyFile);
    return f;
  }();
  return files;
}

}  // namespace

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
    if (IsRunFolder(dir) && !graph::IsSessionDir(dir)) {
      const StatusOr<graph::RunIdentity> id = graph::CheckRunFolder(dir);
      if (!id.ok()) return Plain(422, id.status().message());
    }
    nlohmann::json present = nlohmann::json::array();
    for (const std::string& f : ServedFiles()) {
      if (FolderHolds(dir, f)) present.push_back(f);
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
    if (served == kAccuracyFile) {
      // Shown only beside the run it was measured on, as report.html shows it.
      const StatusOr<graph::RunIdentity> id = graph::CheckRunFolder(dir);
      if (!id.ok()) return Plain(422, id.status().message());
      return HttpResponse{.status = 200, .content_type = "application/json",
                          .body = AccuracyForPage(*text, id->id, dir + "/" + served)};
    }
    if (served != graph::kRooflineFile) {
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

}  // namespace opscope::cli
