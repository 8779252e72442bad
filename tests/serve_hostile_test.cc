// The real `inspector-cli serve` against hostile clients (issue 11): idle
// sockets held open, a head that never ends or trickles in, a 1 MiB URL or
// header, noise for a request line. Each must cost the server a bounded time
// and memory and be answered with its own status; none may keep a real client
// from its 200. Times are asserted only as generous bounds (a loaded machine
// makes the server slower, never faster) or as lower bounds (the timeout is
// not cut short).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/http_request.h"
#include "cli/web_server.h"
#include "tool_test_util.h"

extern char** environ;

namespace opscope {
namespace {

using namespace ::opscope::testing;  // tool_test_util.h
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kInspector = std::string(OPSCOPE_BINARY_DIR) + "/bin/inspector-cli";
// The identity every file of one run carries (graph/run/run_identity.h).
const std::string kRun =
    "\"run\": {\"id\": \"20250101T000000Z-1-0123456789abcdef\", \"model_fingerprint\": \"3:0011223344556677\"}";
const std::string kSummary = "{\"schema\": \"opscope.summary/1\", " + kRun + ", \"op_types\": []}";

// A run folder serve accepts, with a file beside it that it must not hand out.
void WriteRunFolder(const fs::path& dir) {
  std::ofstream(dir / "graph.json") << "{\"schema\": \"opscope.graph/1\", " + kRun + "}";
  std::ofstream(dir / "trace.json") << "{\"schema\": \"opscope.trace/1\", \"otherData\": {" + kRun + "}, \"traceEvents\": []}";
  std::ofstream(dir / "summary.json") << kSummary;
  std::ofstream(dir / "capture.json") << "{\"schema\": \"opscope.capture/1\", " + kRun + ", \"secret\": 1}";
}

// `inspector-cli serve DIR --port 0 ARGS...`, its port read from the line it
// prints; stopped with SIGTERM, as Ctrl-C would.
class ServeProcess {
 public:
  // max_fds > 0: under `ulimit -n max_fds` (the shell execs the server: same pid).
  ServeProcess(const fs::path& dir, const std::vector<std::string>& args, int max_fds = 0) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return;  // the child keeps only its dup2'd stdout
    std::vector<std::string> argv = {kInspector, "serve", dir.string(), "--port", "0"};
    argv.insert(argv.end(), args.begin(), args.end());
    if (max_fds > 0) {
      argv.insert(argv.begin(), {"/bin/sh", "-c", "ulimit -n " + std::to_string(max_fds) + " && exec \"$0\" \"$@\""});
    }
    std::vector<char*> c_argv;
    for (std::string& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    if (posix_spawn(&pid_, c_argv[0], &actions, nullptr, c_argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    // The first line, "serving DIR at http://127.0.0.1:PORT/"; a slow start is waited for.
    std::string line;
    const Clock::time_point until = Clock::now() + seconds(30);
    while (pid_ > 0 && line.find('\n') == std::string::npos && Clock::now() < until) {
      pollfd p{.fd = out[0], .events = POLLIN, .revents = 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(out[0], buf, sizeof(buf));
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
    out_ = out[0];
    const size_t at = line.find("http://127.0.0.1:");
    if (at != std::string::npos) port_ = std::stoi(line.substr(at + 17));
    first_line_ = line;
  }
  ~ServeProcess() { Stop(); }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  int port() const { return port_; }
  const std::string& first_line() const { return first_line_; }

  // The CPU time the server has used so far, in seconds (/proc/PID/stat).
  double CpuSeconds() const {
    std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));  // after "pid (comm) "
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14 || i == 15) ticks += std::stod(field);  // utime, stime
    }
    return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }

  // The exit code after SIGTERM; -1 when it did not exit by itself.
  int Stop() {
    if (pid_ <= 0) return exit_code_;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    ::close(out_);
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
  int exit_code_ = -1;
  std::string first_line_;
};

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return;  // the server stopped reading and closed: what it answered is what counts
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// What the server answers, read until it closes, until the response is whole
// (by its Content-Length), or until `within` has passed.
std::string ReadAnswer(int fd, Clock::duration within) {
  const Clock::time_point until = Clock::now() + within;
  std::string answer;
  while (true) {
    const size_t head_end = answer.find("\r\n\r\n");
    const size_t length_at = answer.find("Content-Length: ");
    if (head_end != std::string::npos && length_at != std::string::npos && length_at < head_end &&
        answer.size() >= head_end + 4 + std::stoul(answer.substr(length_at + 16))) {
      return answer;
    }
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now()).count();
    if (left <= 0) return answer;
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[65536];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return answer;
    answer.append(buf, static_cast<size_t>(n));
  }
}

// The status of an answer: 0 when there is none.
int StatusOf(const std::string& answer) {
  return answer.rfind("HTTP/1.1 ", 0) == 0 && answer.size() >= 12 ? std::stoi(answer.substr(9, 3)) : 0;
}

// Sends `request` (from its own thread, so a server that stops reading a
// large one cannot block the test) and reads the answer.
std::string Exchange(int port, const std::string& request, Clock::duration within = seconds(10)) {
  const int fd = Connect(port);
  if (fd < 0) return "";
  std::thread sender([&] { SendAll(fd, request); });
  const std::string answer = ReadAnswer(fd, within);
  ::shutdown(fd, SHUT_RDWR);  // a sender still blocked returns
  sender.join();
  ::close(fd);
  return answer;
}

// True when the server has neither written to nor closed `fd`.
bool StillHeld(int fd) {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  return ::poll(&p, 1, 0) == 0;
}

const std::string kGetPage = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

class ServeHostile : public ::testing::Test {
 protected:
  void SetUp() override { WriteRunFolder(dir_.path()); }
  // A timeout far past the test's own bounds: what is asserted then is not the timeout.
  std::unique_ptr<ServeProcess> Start(const std::string& request_timeout = "60s") {
    auto serve =
        std::make_unique<ServeProcess>(dir_.path(), std::vector<std::string>{"--request-timeout", request_timeout});
    EXPECT_GT(serve->port(), 0) << "no port in its first line: " << serve->first_line();
    return serve;
  }
  TempDir dir_;
};

TEST_F(ServeHostile, FortyIdleConnectionsDoNotHoldUpARealClient) {
  auto serve = Start();
  ASSERT_GT(serve->port(), 0);
  std::vector<int> idle;
  for (int i = 0; i < 40; ++i) {
    const int fd = Connect(serve->port());
    ASSERT_GE(fd, 0) << "connection " << i;
    if (i % 2) SendAll(fd, "GET / HTTP/1.1\r\nHo");  // half of them start a request and stop
    idle.push_back(fd);
  }
  const Clock::time_point asked = Clock::now();
  const std::string page = Exchange(serve->port(), kGetPage, seconds(3));
  EXPECT_EQ(StatusOf(page), 200) << page.substr(0, 200);
  EXPECT_TRUE(Contains(page, "Content-Type: text/html; charset=utf-8\r\n"));
  EXPECT_LT(Clock::now() - asked, seconds(3));
  // Served beside them, not after they were dropped: every idle one is still held.
  int held = 0;
  for (int fd : idle) held += StillHeld(fd);
  EXPECT_EQ(held, 40);
  for (int fd : idle) ::close(fd);
  EXPECT_EQ(serve->Stop(), 0);
}

TEST_F(ServeHostile, IdleConnectionsPastTheCapMakeRoomForNewOnes) {
  auto serve = Start();
  ASSERT_GT(serve->port(), 0);
  const int cap = cli::ServeLimits{}.max_connections;
  const int opened = 2 * cap + 8;
  std::vector<int> idle;
  for (int i = 0; i < opened; ++i) {
    const int fd = Connect(serve->port());
    ASSERT_GE(fd, 0) << "connection " << i;
    idle.push_back(fd);
  }
  const std::string page = Exchange(serve->port(), kGetPage, seconds(3));
  EXPECT_EQ(StatusOf(page), 200) << page.substr(0, 200);
  // The oldest made room, each told why: the server held no more than its cap.
  int held = 0, told = 0;
  for (int fd : idle) {
    if (StillHeld(fd)) {
      ++held;
      continue;
    }
    told += StatusOf(ReadAnswer(fd, seconds(1))) == 503;
  }
  EXPECT_LE(held, cap);
  EXPECT_GE(told, opened - cap) << "evicted with 503";
  EXPECT_TRUE(StillHeld(idle.back())) << "the newest idle one is not the one to go";
  for (int fd : idle) ::close(fd);
  EXPECT_EQ(serve->Stop(), 0);
}

TEST_F(ServeHostile, AHeadWithoutItsBlankLineGets408AfterTheTimeoutNever200) {
  auto serve = Start("1s");
  ASSERT_GT(serve->port(), 0);
  const Clock::time_point sent = Clock::now();
  const std::string answer = Exchange(serve->port(), "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  const auto waited = Clock::now() - sent;
  EXPECT_EQ(StatusOf(answer), 408) << answer.substr(0, 200);
  EXPECT_TRUE(Contains(answer, "did not arrive within 1s")) << answer;
  EXPECT_GE(waited, milliseconds(900)) << "answered before its timeout";
  EXPECT_EQ(serve->Stop(), 0);
}

TEST_F(ServeHostile, ATricklingClientIsCutAtTheDeadlineNotHeldByEachByte) {
  auto serve = Start("1s");
  ASSERT_GT(serve->port(), 0);
  const int fd = Connect(serve->port());
  ASSERT_GE(fd, 0);
  // A byte every 100 ms: a timeout per read would never fire.
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    const std::string head = "GET / HTTP/1.1\r\nX-Slow: " + std::string(1000, 'a');
    for (size_t i = 0; i < head.size() && !done; ++i) {
      if (::send(fd, &head[i], 1, MSG_NOSIGNAL) != 1) return;
      std::this_thread::sleep_for(milliseconds(100));
    }
  });
  const std::string answer = ReadAnswer(fd, seconds(15));
  done = true;
  trickle.join();
  ::close(fd);
  EXPECT_EQ(StatusOf(answer), 408) << answer.substr(0, 200);
  EXPECT_EQ(serve->Stop(), 0);
}

TEST_F(ServeHostile, AHeadCutShortByTheClientGets400Not200) {
  auto serve = Start();
  ASSERT_GT(serve->port(), 0);
  const int fd = Connect(serve->port());
  ASSERT_GE(fd, 0);
  SendAll(fd, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  ::shutdown(fd, SHUT_WR);
  const std::string answer = ReadAnswer(fd, seconds(10));
  ::close(fd);
  EXPECT_EQ(StatusOf(answer), 400) << answer.substr(0, 200);
  EXPECT_EQ(serve->Stop(), 0);
}

TEST_F(ServeHostile, AMebibyteUrlGets414AndAMebibyteHeaderGets431) {
  auto serve = Start();
  ASSERT_GT(serve->port(), 0);
  const std::string mib(1 << 20, 'a');
  const std::string url = Exchange(serve->port(), "GET /" + mib + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(StatusOf(url), 414) << url.substr(0, 200);
  const std::string header = Exchange(serve->port(), "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + mib + "\r\n\r\n");
  EXPECT_EQ(StatusOf(header), 431) << header.substr(0, 200);
  std::string many = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  while (many.size() < (1u << 20)) many += "X-Many: " + std::string(100, 'b') + "\r\n";
  const std::string headers = Exchange(serve->port(), many + "\r\n");
  EXPECT_EQ(StatusOf(headers), 431) << headers.substr(0, 200);
  // At the limits exactly, it is still a request.
  const std::string longest = "GET /" + std::string(cli::kMaxRequestLineBytes - 14, 'a') + " HTTP/1.1";
  ASSERT_EQ(longest.size(), cli::kMaxRequestLineBytes);
  EXPECT_EQ(StatusOf(Exchange(serve->port(), longest + "\r\n\r\n")), 404);
  EXPECT_EQ(StatusOf(Exchange(serve->port(), "GET /a" + longest.substr(5) + "\r\n\r\n")), 414);
  EXPECT_EQ(StatusOf(Exchange(serve->port(), kGetPage)), 200) << "still serving";
  EXPECT_EQ(serve->Stop(), 0);
}

TEST_F(ServeHostile, AGarbageRequestLineGets400AtOnce) {
  auto serve = Start();  // 60 s: an answer within the bounds below is not the timeout's
  ASSERT_GT(serve->port(), 0);
  for (const std::string& garbage :
       {std::string("garbage\r\n\r\n"), std::string("GET /\r\n\r\n"), std::string("GET / HTTP/2.0\r\n\r\n"),
        std::string("G\x01T / HTTP/1.1\r\n\r\n", 19), std::string(" GET / HTTP/1.1\r\n\r\n"),
        std::string("GET  HTTP/1.1\r\n\r\n"),
        std::string("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03", 11),  // a TLS ClientHello's start
        std::string("garbage\r\n")}) {
    const std::string answer = Exchange(serve->port(), garbage, seconds(10));
    EXPECT_EQ(StatusOf(answer), 400) << ::testing::PrintToString(garbage) << ": " << answer.substr(0, 200);
  }
  EXPECT_EQ(serve->Stop(), 0);
}

TEST_F(ServeHostile, WhatItServedBeforeItStillServes) {
  auto serve = Start();
  ASSERT_GT(serve->port(), 0);
  const std::string summary = Exchange(serve->port(), "GET /summary.json HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(StatusOf(summary), 200);
  EXPECT_TRUE(Contains(summary, "Content-Type: application/json\r\n"));
  EXPECT_EQ(summary.substr(summary.find("\r\n\r\n") + 4), kSummary);
  const std::string traversal = Exchange(serve->port(), "GET /../capture.json HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusOf(traversal), 404);
  EXPECT_FALSE(Contains(traversal, "secret"));
  EXPECT_EQ(StatusOf(Exchange(serve->port(), "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")), 405);
  EXPECT_EQ(StatusOf(Exchange(serve->port(), "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n")), 403);
  EXPECT_EQ(StatusOf(Exchange(serve->port(), "GET /files.json HTTP/1.0\r\n\r\n")), 200);
  // A head in many small writes is put together.
  const int fd = Connect(serve->port());
  ASSERT_GE(fd, 0);
  for (char c : kGetPage) SendAll(fd, std::string_view(&c, 1));
  const std::string pieced = ReadAnswer(fd, seconds(10));
  ::close(fd);
  EXPECT_EQ(StatusOf(pieced), 200) << pieced.substr(0, 200);
  EXPECT_EQ(serve->Stop(), 0);
}

// Out of file descriptors, the server tells each waiting client 503 (a
// descriptor kept in reserve for it) and sleeps; it used to spin on the
// listening socket, which stayed readable while accept failed.
TEST_F(ServeHostile, OutOfDescriptorsClientsGet503AndTheServerDoesNotSpin) {
  ServeProcess serve(dir_.path(), {"--request-timeout", "60s"}, /*max_fds=*/24);
  ASSERT_GT(serve.port(), 0) << serve.first_line();
  std::vector<int> idle;
  int refused = 0;
  for (int i = 0; i < 40; ++i) {
    const int fd = Connect(serve.port());
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  // The server holds what its descriptors allow; the rest are answered 503
  // and closed, as soon as it gets to them (waited for, not timed).
  const Clock::time_point until = Clock::now() + seconds(20);
  while (refused == 0 && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(50));
    for (int& fd : idle) {
      if (fd < 0 || StillHeld(fd)) continue;
      refused += StatusOf(ReadAnswer(fd, seconds(10))) == 503;
      ::close(fd);
      fd = -1;
    }
  }
  EXPECT_GT(refused, 0) << "no client was told the server is out of descriptors";
  // While the idle ones are held and a new client waits, the server sleeps.
  const int waiting = Connect(serve.port());
  const double before = serve.CpuSeconds();
  std::this_thread::sleep_for(seconds(1));
  const double used = serve.CpuSeconds() - before;
  EXPECT_LT(used, 0.5) << "the server spun on the listening socket";
  if (waiting >= 0) ::close(waiting);
  for (int fd : idle) {
    if (fd >= 0) ::close(fd);
  }
  // With the idle clients gone, a real client is served again.
  int status = 0;
  for (int tries = 0; tries < 100 && status != 200; ++tries) {
    status = StatusOf(Exchange(serve.port(), kGetPage));
    if (status != 200) std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_EQ(status, 200);
  EXPECT_EQ(serve.Stop(), 0);
}

// Clients that ask for a large file and never read it: the answers the server
// holds for them stay within ServeLimits::max_pending_bytes; past it a request
// gets 503, and a small answer that fits is still given.
TEST(ServePending, AnswersNobodyReadsStayWithinTheBudget) {
  TempDir dir;
  WriteRunFolder(dir.path());
  const size_t big = size_t{16} << 20;
  {
    std::ofstream trace(dir.path() / "trace.json");
    trace << "{\"traceEvents\": [], \"pad\": \"" << std::string(big, 'x') << "\"}";
  }
  cli::WebServer server;
  ASSERT_TRUE(server.Listen("127.0.0.1", 0).ok());
  cli::ServeLimits limits;
  limits.request_timeout = seconds(60);
  limits.max_pending_bytes = 24 << 20;
  volatile std::sig_atomic_t stop = 0;
  const std::string folder = dir.path().string();
  std::thread serving([&] { (void)server.Serve(folder, &stop, limits); });
  // A reader that takes nothing: a tiny receive window, and no recv.
  const auto stalled = [&] {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int tiny = 4096;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &tiny, sizeof tiny);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server.port()));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    SendAll(fd, "GET /trace.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    return fd;
  };
  const int first = stalled();
  std::this_thread::sleep_for(milliseconds(300));  // let the server take it and fill the socket
  const int second = stalled();
  const std::string refused = ReadAnswer(second, seconds(10));
  const std::string small = Exchange(server.port(), "GET /summary.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  stop = 1;
  ::shutdown(first, SHUT_RDWR);
  serving.join();
  ::close(first);
  ::close(second);
  EXPECT_EQ(StatusOf(refused), 503) << refused.substr(0, 300);
  EXPECT_TRUE(Contains(refused, "have not read them")) << refused.substr(0, 300);
  EXPECT_EQ(StatusOf(small), 200) << small.substr(0, 300);
}

TEST(ServeHostileFlags, ABadRequestTimeoutIsOneLineAndExit2) {
  TempDir dir;
  WriteRunFolder(dir.path());
  for (const char* bad : {"abc", "0", "5ms", "11m", "1x"}) {
    // Bounded: a value wrongly taken would start a server that never ends by itself.
    const auto r = Shell("timeout 20 " + kInspector + " serve " + dir.path().string() +
                         " --port 0 --request-timeout " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_TRUE(Contains(r.err, "--request-timeout '" + std::string(bad) + "': expected a duration from 10ms to 10m"))
        << r.err;
    EXPECT_TRUE(r.out.empty()) << "it never started serving: " << r.out;
  }
}

}  // namespace
}  // namespace opscope
