// File: cli/http_request.h
// One request of `inspector-cli serve`, from its first bytes to its answer:
// the framing the server reads by (ScanRequestHead) and the answer to a whole
// head (AnswerHttpRequest). No socket here: cli/web_server.h holds those.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace opscope::cli {

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
};

// Answers one request from its head (request line and headers). Only GET of
// the UI's own files, of DIR's run files, trace-only files and roofline.svg
// (refused with 422 when it fails CheckInlineSvg), and of /files.json, the
// list of those DIR holds now (so the page asks for nothing that is not
// there); anything else is 404 (or 405 for other methods): the path is
// matched against the list, never joined to DIR. For a folder shown by its
// diagnosis.json, / is the page BuildDiagnosisHtml makes of it now (422 when
// the file is refused): the conversion is the library's, not the page's.
// A server bound to loopback also refuses (403) a Host header that names
// anything but loopback, so a web page whose name was re-pointed at 127.0.0.1
// (DNS rebinding) cannot read the run.
HttpResponse AnswerHttpRequest(std::string_view head, const std::string& dir,
                               std::string_view bind_address = "127.0.0.1");

// What `serve` takes from one client before it answers. A request line
// longer than kMaxRequestLineBytes is refused with 414, header lines longer
// than kMaxHeaderBytes together (the blank line's CRLF counted) with 431:
// no more than kMaxRequestHeadBytes of a request is ever held.
inline constexpr size_t kMaxRequestLineBytes = 8 * 1024;
inline constexpr size_t kMaxHeaderBytes = 32 * 1024;
inline constexpr size_t kMaxRequestHeadBytes = kMaxRequestLineBytes + 2 + kMaxHeaderBytes + 1;

// Where a request head stands after the bytes received so far (the framing
// WebServer reads by; AnswerHttpRequest is given the head once complete).
struct RequestHeadScan {
  size_t head_size = 0;  // > 0: complete, this many bytes with its blank line
  int refuse = 0;        // 400, 414 or 431: answer it now, whatever follows
  std::string reason;    // why, for the refusal's body
};
// Neither head_size nor refuse: more is needed. A request line is refused
// with 400 as soon as it cannot become valid: at its first byte that is not
// part of a method (a token), or once whole when it is not
// "METHOD TARGET HTTP/1.x" (the rule AnswerHttpRequest holds it to).
RequestHeadScan ScanRequestHead(std::string_view received);

// The status line, the headers every answer carries (the page policy of
// report/page_policy.h, no-store, nosniff, Connection: close) and the body.
std::string SerializeResponse(const HttpResponse& r);
// A text/plain answer: `body` and a newline.
HttpResponse Plain(int status, std::string body);

}  // namespace opscope::cli
