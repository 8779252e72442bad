// inspector-cli's web side as library calls: the self-contained report, the
// request router (what may and may not be served) and the server on a real
// loopback socket. The page's behaviour in a browser is tests/web/ui_test.mjs.
#include "cli/inspector_web.h"
#include "cli/apps.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace opscope::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Run files with names that would break a careless embedding.
std::vector<std::string> HostileRunFiles() {
  const json graph = {{"schema", "opscope.graph/1"},
                      {"framework", {{"nodes", {{{"node_id", 0}, {"name", "</script><script>alert(1)</script>"}}}}}},
                      {"compiled", {{"nodes", {{{"node_id", 1}, {"name", "<!--<script>"}}}}}}};
  const json trace = {{"traceEvents", json::array({{{"ph", "X"}, {"name", "</SCRIPT >"}}})}};
  const json summary = {{"schema", "opscope.summary/1"}, {"op_types", json::array()}};
  return {graph.dump(), trace.dump(), summary.dump()};
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(InspectorWeb, EscapedJsonHasNoAngleBracketAndParsesBackTheSame) {
  for (const std::string& text : HostileRunFiles()) {
    const std::string escaped = EscapeJsonForScript(text);
    EXPECT_EQ(escaped.find('<'), std::string::npos) << escaped;
    EXPECT_EQ(json::parse(escaped), json::parse(text));
  }
}

TEST(InspectorWeb, ReportInlinesEveryAssetAndEmbedsTheRunFilesIntact) {
  const std::vector<std::string> files = HostileRunFiles();
  StatusOr<std::string> html = BuildReportHtml(files);
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  // Nothing left to fetch: no linked script or stylesheet.
  EXPECT_EQ(html->find("<script src="), std::string::npos);
  EXPECT_EQ(html->find("rel=\"stylesheet\""), std::string::npos);
  for (const WebAsset& a : EmbeddedWebAssets()) {
    if (a.name == "index.html") continue;
    EXPECT_NE(html->find(std::string(a.data)), std::string::npos) << a.name;
  }
  // Every <script> element is closed exactly once: the data closed none early.
  EXPECT_EQ(Count(*html, "<script"), Count(*html, "</script>"));
  for (size_t i = 0; i < std::size(kRunFiles); ++i) {
    const std::string open = "<script type=\"application/json\" id=\"opscope-data-" + std::string(kRunFiles[i]) + "\">";
    const size_t begin = html->find(open);
    ASSERT_NE(begin, std::string::npos) << kRunFiles[i];
    const size_t start = begin + open.size(), end = html->find("</script>", start);
    EXPECT_EQ(json::parse(html->substr(start, end - start)), json::parse(files[i])) << kRunFiles[i];
  }
  EXPECT_FALSE(BuildReportHtml({"{}"}).ok());
}

class InspectorWebDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("inspector_web_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const std::vector<std::string> files = HostileRunFiles();
    for (size_t i = 0; i < files.size(); ++i) std::ofstream(dir_ / kRunFiles[i]) << files[i];
    std::ofstream(dir_ / "capture.json") << "{\"secret\": 1}";
  }
  void TearDown() override { fs::remove_all(dir_); }
  HttpResponse Get(const std::string& target) {
    return AnswerHttpRequest("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:8765\r\n\r\n", dir_.string());
  }
  fs::path dir_;
};

TEST_F(InspectorWebDir, ServesTheUiAndTheRunFilesOnly) {
  const HttpResponse index = Get("/");
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(index.body, std::string(FindWebAsset("index.html")->data));
  EXPECT_EQ(Get("/app.js").status, 200);
  EXPECT_EQ(Get("/style.css").content_type, "text/css; charset=utf-8");
  const HttpResponse graph = Get("/graph.json?reload=1");
  EXPECT_EQ(graph.status, 200);
  EXPECT_EQ(graph.content_type, "application/json");
  EXPECT_EQ(graph.body, HostileRunFiles()[0]);
  for (const char* refused : {"/capture.json", "/../capture.json", "/%2e%2e/capture.json", "/./graph.json",
                              "//graph.json", "/graph.json/", "/web/app.js", "graph.json", "/nope"}) {
    const HttpResponse r = Get(refused);
    EXPECT_EQ(r.status, 404) << refused;
    EXPECT_EQ(r.body.find("secret"), std::string::npos) << refused;
  }
  EXPECT_EQ(AnswerHttpRequest("POST / HTTP/1.1\r\n\r\n", dir_.string()).status, 405);
  EXPECT_EQ(AnswerHttpRequest("HEAD / HTTP/1.1\r\n\r\n", dir_.string()).status, 405);
  EXPECT_EQ(AnswerHttpRequest("garbage\r\n\r\n", dir_.string()).status, 400);
  fs::remove(dir_ / "trace.json");
  EXPECT_EQ(Get("/trace.json").status, 404);
}

TEST_F(InspectorWebDir, OnLoopbackOnlyLoopbackHostNamesAreAnswered) {
  const auto with_host = [&](const std::string& host, const char* bind = "127.0.0.1") {
    return AnswerHttpRequest("GET /graph.json HTTP/1.1\r\nAccept: */*\r\nHOST:  " + host + "\r\n\r\n",
                             dir_.string(), bind).status;
  };
  for (const char* ok : {"127.0.0.1:8765", "localhost:8765", "LocalHost", "[::1]:8765", "127.0.0.2"}) {
    EXPECT_EQ(with_host(ok), 200) << ok;
  }
  for (const char* refused : {"evil.example:8765", "evil.example", "127.0.0.1.evil.example", "[::2]:80"}) {
    EXPECT_EQ(with_host(refused), 403) << refused;
  }
  // Bound elsewhere on purpose, the user reaches it by whatever name.
  EXPECT_EQ(with_host("workstation.lan:8765", "0.0.0.0"), 200);
}

TEST_F(InspectorWebDir, WriteReportNamesTheMissingFileAndWritesNothing) {
  fs::remove(dir_ / "summary.json");
  StatusOr<std::string> path = WriteReportHtml(dir_.string());
  ASSERT_FALSE(path.ok());
  EXPECT_NE(path.status().ToString().find("summary.json: missing"), std::string::npos) << path.status().ToString();
  EXPECT_FALSE(fs::exists(dir_ / "report.html"));
}

std::string Fetch(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    ::send(fd, request.data(), request.size(), 0);
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return answer;
}

TEST_F(InspectorWebDir, ServerAnswersOnLoopbackUntilStopped) {
  WebServer server;
  ASSERT_TRUE(server.Listen("127.0.0.1", 0).ok());
  ASSERT_GT(server.port(), 0);
  volatile std::sig_atomic_t stop = 0;
  Status served;
  std::thread serving([&] { served = server.Serve(dir_.string(), &stop); });
  // A silent connection (as browsers open ahead of time) must not hold up others.
  const int idle = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server.port()));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  ASSERT_EQ(::connect(idle, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);

  const std::string ok = Fetch(server.port(), "GET /summary.json HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("Content-Length: " + std::to_string(HostileRunFiles()[2].size()) + "\r\n"), std::string::npos);
  EXPECT_EQ(ok.substr(ok.find("\r\n\r\n") + 4), HostileRunFiles()[2]);
  const std::string refused = Fetch(server.port(), "GET /../capture.json HTTP/1.1\r\n\r\n");
  EXPECT_EQ(refused.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << refused;
  ::close(idle);
  stop = 1;
  serving.join();
  EXPECT_TRUE(served.ok()) << served.ToString();
}

TEST(InspectorWeb, ListenRejectsABadAddressOrPort) {
  WebServer a, b;
  EXPECT_NE(a.Listen("localhost", 0).ToString().find("--bind 'localhost'"), std::string::npos);
  EXPECT_NE(b.Listen("127.0.0.1", 70000).ToString().find("--port 70000"), std::string::npos);
}

int Inspector(std::vector<std::string> args, std::string* err = nullptr) {
  args.insert(args.begin(), "inspector-cli");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, errs;
  const int code = InspectorMain(static_cast<int>(argv.size()), argv.data(), out, errs);
  if (err) *err = errs.str();
  return code;
}

TEST(InspectorWebCli, ExportAllRewritesTheJsonAndWritesTheReport) {
  const fs::path dir = fs::temp_directory_path() / ("inspector_web_cli_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ASSERT_EQ(Inspector({"run", std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/two_branch.onnx", "--output-dir",
                       dir.string(), "--streams", "2"}),
            0);
  fs::remove(dir / "graph.json");
  std::string err;
  EXPECT_EQ(Inspector({"export", "--input-dir", dir.string(), "--format", "html"}, &err), 2);
  EXPECT_NE(err.find("graph.json: missing"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir / "report.html"));
  ASSERT_EQ(Inspector({"export", "--input-dir", dir.string(), "--format", "all"}, &err), 0) << err;
  StatusOr<std::vector<std::string>> files = ReadRunFiles(dir.string());
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  std::ifstream report(dir / "report.html");
  const std::string html((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find(EscapeJsonForScript((*files)[0])), std::string::npos);
  EXPECT_EQ(Inspector({"serve", (dir / "nope").string()}, &err), 2);
  EXPECT_NE(err.find("no such folder"), std::string::npos) << err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace opscope::cli
