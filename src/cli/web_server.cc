#include "cli/web_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "cli/http_request.h"

namespace opscope::cli {

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

}  // namespace opscope::cli
