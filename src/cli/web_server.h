// File: cli/web_server.h
// The socket side of `inspector-cli serve`: one thread polls every client
// without blocking on any, each request answered by cli/http_request.h.
#pragma once

#include <chrono>
#include <csignal>
#include <cstddef>
#include <string>

#include "opscope/status.h"

namespace opscope::cli {

// How long and how many clients WebServer holds.
struct ServeLimits {
  // The whole request head must arrive within it (408 otherwise), and a
  // response that makes no progress for as long is dropped.
  std::chrono::milliseconds request_timeout{10000};
  // Clients held at once. At the cap a new one takes the place of one
  // already answered but not yet closed, else of the oldest still sending its
  // request, which gets 503; when every one is being answered, the new one
  // gets 503.
  int max_connections = 64;
  // The answers held for clients that have not read them yet, in bytes. A
  // request whose answer would take the total past it gets 503 instead (one
  // answer is always given while none waits: a trace may be larger), so
  // clients that ask and never read cannot make the server hold every run
  // file 64 times over.
  size_t max_pending_bytes = size_t{256} << 20;
};

// A small HTTP/1.1 server (one request per connection, Connection: close):
// one thread polls every client without blocking on any, so silent or slow
// ones (a browser's speculative connections, a hostile client) cannot keep
// the others waiting.
class WebServer {
 public:
  WebServer() = default;
  ~WebServer();
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // Binds and listens; port 0 lets the kernel pick a free one (see port()).
  Status Listen(const std::string& bind_address, int port);
  int port() const { return port_; }
  // Serves `dir` until *stop becomes nonzero (checked at least every 200 ms);
  // responses under way then get two more seconds to finish.
  Status Serve(const std::string& dir, const volatile std::sig_atomic_t* stop, const ServeLimits& limits = {});

 private:
  std::string bind_address_;
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace opscope::cli
