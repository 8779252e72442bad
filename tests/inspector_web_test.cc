// inspector-cli's web side as library calls: the self-contained report (of a
// run, or of a trace alone with its roofline chart), the gate the chart passes
// to be put in as markup, the request router (what may and may not be served)
// and the server on a real loopback socket. The page's behaviour in a browser
// is tests/web/ui_test.mjs.
#include "cli/apps.h"
#include "graph_json_test_util.h"
#include "cli/http_request.h"
#include "cli/web_server.h"
#include "core/gzip.h"
#include "core/sha256.h"
#include "core/text_format.h"
#include "graph/run/run_identity.h"
#include "opscope/model.h"
#include "opscope/roofline.h"
#include "report/inline_svg.h"
#include "report/page_data.h"
#include "report/report_page.h"
#include "report/web_assets.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace opscope::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The identity every file of one run carries (graph/run/run_identity.h).
const json kRun = {{"id", "20250101T000000Z-1-0123456789abcdef"}, {"model_fingerprint", "3:0011223344556677"}};

// Run files with names that would break a careless embedding.
std::vector<std::string> HostileRunFiles() {
  const json graph = {{"schema", "opscope.graph/1"}, {"run", kRun},
                      {"framework", {{"nodes", {{{"node_id", 0}, {"name", "</script><script>alert(1)</script>"}}}}}},
                      {"compiled", {{"nodes", {{{"node_id", 1}, {"name", "<!--<script>"}}}}}}};
  const json trace = {{"schema", "opscope.trace/1"}, {"otherData", {{"run", kRun}}},
                      {"traceEvents", json::array({{{"ph", "X"}, {"name", "</SCRIPT >"}}})}};
  const json summary = {{"schema", "opscope.summary/1"}, {"run", kRun}, {"op_types", json::array()}};
  return {graph.dump(), trace.dump(), summary.dump()};
}

// A chart as a run writes it: its <svg> names the run (run_identity.h).
std::string StampedChart(const fs::path& svg_file, const json& run) {
  std::ifstream in(svg_file);
  std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string attrs = " data-run-id=\"" + run["id"].get<std::string>() + "\" data-model-fingerprint=\"" +
                            run["model_fingerprint"].get<std::string>() + "\"";
  return svg.insert(svg.find("<svg") + 4, attrs);
}

ReportData HostileRun() {
  const std::vector<std::string> f = HostileRunFiles();
  return ReportData{.graph = f[0], .trace = f[1], .summary = f[2]};
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The hand-written ops-debug profile and diagnosis the browser test opens too.
const fs::path kTimelineFixture = fs::path(OPSCOPE_SOURCE_DIR) / "tests/web/timeline";
const fs::path kDiagnosisFixture = fs::path(OPSCOPE_SOURCE_DIR) / "tests/web/diagnosis/diagnosis.json";

// The JSON a page embeds under `id`, parsed; null when the page has none.
json Embedded(const std::string& html, const std::string& id) {
  const std::string open = "<script type=\"application/json\" id=\"opscope-data-" + id + "\">";
  const size_t at = html.find(open);
  if (at == std::string::npos) return nullptr;
  const size_t start = at + open.size();
  return json::parse(html.substr(start, html.find("</script>", start) - start));
}

// A Content-Security-Policy, parsed: each directive's sources.
std::map<std::string, std::vector<std::string>> ParsePolicy(const std::string& policy) {
  std::map<std::string, std::vector<std::string>> directives;
  std::istringstream in(policy);
  for (std::string directive; std::getline(in, directive, ';');) {
    std::istringstream words(directive);
    std::string name;
    if (!(words >> name)) continue;
    auto& sources = directives[name];
    for (std::string source; words >> source;) sources.push_back(source);
  }
  return directives;
}

// The text of every <script> and <style> element of the page that runs or
// applies (JSON data blocks do neither), by tag. An element's text is skipped
// whole: a script may spell "<style>" in a string.
std::map<std::string, std::vector<std::string>> InlineTexts(const std::string& html) {
  std::map<std::string, std::vector<std::string>> texts;
  size_t at = 0;
  while ((at = html.find('<', at)) != std::string::npos) {
    const size_t open_end = html.find('>', at);
    const std::string open = html.substr(at, open_end - at);
    const std::string tag = open.starts_with("<script") ? "script" : open.starts_with("<style") ? "style" : "";
    if (tag.empty() || (open.size() > tag.size() + 1 && open[tag.size() + 1] != ' ')) {
      ++at;
      continue;
    }
    const size_t close = html.find("</" + tag + ">", open_end);
    if (open.find("application/json") == std::string::npos) {
      texts[tag].push_back(html.substr(open_end + 1, close - open_end - 1));
    }
    at = close;
  }
  return texts;
}

std::string HashSourceOf(const std::string& text) { return "'sha256-" + Base64(Sha256(text)) + "'"; }

TEST(InspectorWeb, EscapedJsonHasNoAngleBracketAndParsesBackTheSame) {
  for (const std::string& text : HostileRunFiles()) {
    const std::string escaped = EscapeJsonForScript(text);
    EXPECT_EQ(escaped.find('<'), std::string::npos) << escaped;
    EXPECT_EQ(json::parse(escaped), json::parse(text));
  }
}

TEST(InspectorWeb, ReportInlinesEveryAssetAndEmbedsTheRunFilesIntact) {
  const std::vector<std::string> files = HostileRunFiles();
  StatusOr<std::string> html = BuildReportHtml(HostileRun());
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  // Nothing left to fetch: no linked script or stylesheet.
  EXPECT_EQ(html->find("<script src="), std::string::npos);
  EXPECT_EQ(html->find("rel=\"stylesheet\""), std::string::npos);
  for (const WebAsset& a : EmbeddedWebAssets()) {
    if (a.name == "index.html") continue;
    EXPECT_NE(html->find(std::string(a.data)), std::string::npos) << a.name;
  }
  // Every <script> element is closed exactly once: the data closed none early.
  EXPECT_EQ(CountOccurrences(*html, "<script"), CountOccurrences(*html, "</script>"));
  for (size_t i = 0; i < std::size(kRunFiles); ++i) {
    const std::string open = "<script type=\"application/json\" id=\"opscope-data-" + std::string(kRunFiles[i]) + "\">";
    const size_t begin = html->find(open);
    ASSERT_NE(begin, std::string::npos) << kRunFiles[i];
    const size_t start = begin + open.size(), end = html->find("</script>", start);
    EXPECT_EQ(json::parse(html->substr(start, end - start)), json::parse(files[i])) << kRunFiles[i];
  }
  // No roofline: its panel is there, empty and hidden, and no chart is made up.
  EXPECT_NE(html->find("<div id=\"roofline\"></div>"), std::string::npos);
  EXPECT_EQ(html->find("opscope:roofline"), std::string::npos);
  EXPECT_EQ(html->find("opscope-data-page"), std::string::npos);
  EXPECT_FALSE(BuildReportHtml(ReportData{.graph = "{}"}).ok());
  EXPECT_FALSE(BuildReportHtml(ReportData{.graph = "{}", .trace = "{}"}).ok()) << "a graph without its summary";
}

// Base64 back to bytes, written here as the test's own oracle.
std::string FromBase64(std::string_view text) {
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t group = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    group = (group << 6) | static_cast<uint32_t>(alphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((group >> bits) & 0xff);
    }
  }
  return out;
}

// Data of kGzipEmbeddedFrom bytes or more goes in gzipped as base64 (a
// 100,000-node run's page: 15 MB instead of 92); smaller data stays JSON.
TEST(InspectorWeb, LargeDataIsEmbeddedGzippedAndComesBackExactly) {
  std::string trace = R"({"traceEvents":[)";
  for (int i = 0; trace.size() < kGzipEmbeddedFrom + 1000; ++i) {
    trace += R"({"name":"/block)" + std::to_string(i) + R"(/Relu <\/script>","ph":"X","ts":)" + std::to_string(i) +
             R"(,"dur":1,"pid":0,"tid":0},)";
  }
  trace += R"({"name":"end","ph":"i","ts":0}]})";
  ReportData data = HostileRun();
  data.trace = trace;
  StatusOr<std::string> html = BuildReportHtml(data);
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  const std::string open =
      "<script type=\"application/octet-stream\" id=\"opscope-data-trace.json\" data-encoding=\"gzip+base64\">";
  const size_t at = html->find(open);
  ASSERT_NE(at, std::string::npos);
  const size_t start = at + open.size(), end = html->find("</script>", start);
  const std::string body = html->substr(start, end - start);
  EXPECT_EQ(body.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
            std::string::npos);
  StatusOr<std::string> back = Gunzip(FromBase64(body), trace.size());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, trace);
  EXPECT_LT(html->size(), trace.size() / 2);
  // The small files stay readable JSON.
  EXPECT_EQ(Embedded(*html, "summary.json"), json::parse(SummaryForPage(data.summary)));
  EXPECT_EQ(CountOccurrences(*html, "<script"), CountOccurrences(*html, "</script>"));
}

// A node name that became markup anyway could run nothing: the page allows
// its own inline scripts and styles by their hashes, no handler, no other
// script or stylesheet, and fetches nothing.
TEST(InspectorWeb, ReportPolicyAllowsOnlyItsOwnInlineScriptsAndStyles) {
  StatusOr<std::string> html = BuildReportHtml(HostileRun());
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  const std::string meta = "<meta http-equiv=\"Content-Security-Policy\" content=\"";
  const size_t at = html->find(meta);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(CountOccurrences(*html, "Content-Security-Policy"), 1u);
  // A <meta> policy covers only what comes after it.
  EXPECT_LT(at, html->find("<style"));
  EXPECT_LT(at, html->find("<script"));
  const size_t begin = at + meta.size();
  auto policy = ParsePolicy(html->substr(begin, html->find('"', begin) - begin));
  EXPECT_EQ(policy["default-src"], std::vector<std::string>{"'none'"});
  EXPECT_EQ(policy["img-src"], std::vector<std::string>{"data:"});
  EXPECT_EQ(policy["base-uri"], std::vector<std::string>{"'none'"});
  EXPECT_EQ(policy.count("connect-src"), 0u) << "default-src 'none' covers it";
  auto inline_texts = InlineTexts(*html);
  for (const std::string tag : {"script", "style"}) {
    const std::vector<std::string>& texts = inline_texts[tag];
    ASSERT_EQ(texts.size(), tag == "style" ? 1u : std::size(EmbeddedWebAssets()) - 2) << tag;
    std::vector<std::string> expected;
    for (const std::string& text : texts) expected.push_back(HashSourceOf(text));
    // Each by its hash and nothing else: no 'unsafe-inline', no 'self', no host.
    EXPECT_EQ(policy[tag + "-src"], expected) << tag;
  }
}

TEST(InspectorWeb, TimelinePageEmbedsTheTraceAloneAndTheChartAsMarkup) {
  const std::string timeline = Slurp(kTimelineFixture / "timeline.json");
  const std::string svg = Slurp(kTimelineFixture / "roofline.svg");
  ASSERT_FALSE(timeline.empty());
  ASSERT_FALSE(svg.empty());
  StatusOr<std::string> html = BuildTimelineHtml(timeline, svg, "my_norm </script> profile");
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  EXPECT_EQ(html->find("opscope-data-graph.json"), std::string::npos);
  EXPECT_EQ(html->find("opscope-data-summary.json"), std::string::npos);
  const std::string open = "<script type=\"application/json\" id=\"opscope-data-trace.json\">";
  const size_t start = html->find(open) + open.size();
  ASSERT_NE(start, std::string::npos + open.size());
  EXPECT_EQ(json::parse(html->substr(start, html->find("</script>", start) - start)), json::parse(timeline));
  const std::string page_open = "<script type=\"application/json\" id=\"opscope-data-page\">";
  const size_t page_at = html->find(page_open) + page_open.size();
  ASSERT_NE(page_at, std::string::npos + page_open.size());
  EXPECT_EQ(json::parse(html->substr(page_at, html->find("</script>", page_at) - page_at))["title"],
            "my_norm </script> profile");
  // The chart sits in its panel as it came (trimmed), outside every script.
  const std::string trimmed = svg.substr(0, svg.find_last_not_of("\n") + 1);
  const size_t chart = html->find("<div id=\"roofline\">" + trimmed + "</div>");
  ASSERT_NE(chart, std::string::npos);
  EXPECT_EQ(CountOccurrences(html->substr(0, chart), "<script"), CountOccurrences(html->substr(0, chart), "</script>"));
  EXPECT_EQ(CountOccurrences(*html, "<script"), CountOccurrences(*html, "</script>"));
  // Without a chart the page is the same page, the panel empty.
  StatusOr<std::string> bare = BuildTimelineHtml(timeline, "", "");
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_NE(bare->find("<div id=\"roofline\"></div>"), std::string::npos);
  EXPECT_FALSE(BuildTimelineHtml("", svg, "").ok());
}

TEST(InspectorWeb, OnlyOneSvgOfDrawingElementsIsPutIn) {
  const std::string svg = Slurp(kTimelineFixture / "roofline.svg");
  StatusOr<std::string> fixture = CheckInlineSvg(svg);
  ASSERT_TRUE(fixture.ok()) << fixture.status().ToString();
  EXPECT_EQ(fixture->find("<svg"), 0u);
  const std::string small =
      "<svg viewBox=\"0 0 10 10\"><defs><marker id=\"chart-m\"/><linearGradient id='chart-g'><stop offset=\"0\" "
      "stop-color=\"rgb(1, 2, 3)\"/></linearGradient></defs><use href=\"#chart-m\"/><circle class='p' cx=\"1\" "
      "cy=\"1\" r=\"1\" fill='url(\"#chart-g\")' transform=\"rotate(-90 1 1) translate (2,3)\"><title>a &amp; b</title>"
      "</circle></svg>";
  for (const std::string& ok : std::vector<std::string>{small, "<?xml version=\"1.0\"?>\n" + small + "\n", "  <svg/>  "}) {
    StatusOr<std::string> checked = CheckInlineSvg(ok);
    ASSERT_TRUE(checked.ok()) << ok << ": " << checked.status().ToString();
    EXPECT_EQ(checked->rfind("<svg", 0), 0u) << *checked;
  }
  EXPECT_EQ(*CheckInlineSvg("<?xml version=\"1.0\"?>" + small), small);
  for (const char* refused : {
           "", "plain text", "<g></g>", "<svg>", "<svg><g></svg></g>", "<svg></svg><svg></svg>",
           "<svg></svg><script>alert(1)</script>", "</script><svg></svg>", "x<svg></svg>", "<svg></svg>x",
           "<svg><script>alert(1)</script></svg>", "<svg><SCRIPT>alert(1)</SCRIPT></svg>",
           "<svg onload=\"alert(1)\"></svg>", "<svg><circle ONclick='alert(1)'/></svg>",
           "<svg><foreignObject><div></div></foreignObject></svg>", "<svg><div>breaks out of the svg</div></svg>",
           "<svg><img src=x></svg>", "<svg><a href=\"#m\"></a></svg>", "<svg><use href=\"https://evil.example/x.svg#a\"/></svg>",
           "<svg><use xlink:href=\"javascript:alert(1)\"/></svg>", "<svg><rect style=\"x:javascript:1\"/></svg>",
           "<svg><!-- --></svg>", "<svg><![CDATA[</svg><img src=x onerror=alert(1)>]]></svg>",
           "<svg><text>1 < 2</text></svg>", "<svg><text>a</svg>", "<svg><rect width=1/></svg>",
           "<svg><rect title=\"</script>\"/></svg>", "<svg><rect x=\"1/></svg>", "<svg><rect x/></svg>",
           "<svg></svg\n><script>alert(1)</script>"}) {
    StatusOr<std::string> checked = CheckInlineSvg(refused);
    EXPECT_FALSE(checked.ok()) << "accepted: " << refused;
    if (!checked.ok()) {
      EXPECT_NE(checked.status().message().find("roofline chart refused"), std::string::npos);
    }
  }
  // A page is never built around a refused chart.
  ReportData run = HostileRun();
  run.roofline_svg = "<svg><script>alert(1)</script></svg>";
  EXPECT_FALSE(BuildReportHtml(run).ok());
  EXPECT_FALSE(BuildTimelineHtml("{\"traceEvents\": []}", "<svg></svg></div><script>alert(1)</script>", "").ok());
}

// Styles and fetches from a folder's chart: a <style> could @import from
// anywhere when the file:// page opens or hide the page (body>*{display:none});
// an attribute could name a URL or shadow the page's own ids.
TEST(InspectorWeb, AChartCarriesNoCssFetchesNothingAndShadowsNoId) {
  const std::pair<std::string, std::string> refused[] = {
      {"<svg><style>.p{fill:red}</style></svg>", "<style>"},
      {"<svg><style>@import url(https://evil.example/x.css);</style></svg>", "<style>"},
      {"<svg><style>body>*{display:none}</style></svg>", "<style>"},
      {"<svg><rect fill=\"url(https://evil.example/x.svg#a)\"/></svg>", "url() out of the chart"},
      {"<svg><rect fill='url( \"//evil.example/x.svg#a\")'/></svg>", "url() out of the chart"},
      {"<svg><rect fill=\"URL(http://evil.example/x#a)\"/></svg>", "url() out of the chart"},
      {"<svg><rect mask=\"image-set('https://evil.example/m.png' 1x)\"/></svg>", "image-set"},
      {"<svg><rect fill=\"&#117;rl(https://evil.example/x#a)\"/></svg>", "'&'"},
      {"<svg><rect fill=\"\\75 rl(https://evil.example/x#a)\"/></svg>", "'\\'"},
      {"<svg><rect style=\"fill:url(https://evil.example/x#a)\"/></svg>", "attribute style"},
      {"<svg><rect style=\"fill:red\"/></svg>", "attribute style"},
      {"<svg><rect foo=\"1\"/></svg>", "attribute foo"},
      {"<svg><rect name=\"timeline\"/></svg>", "attribute name"},
      {"<svg><text id=\"opscope-data-trace.json\">{}</text></svg>", "id 'opscope-data-trace.json'"},
      {"<svg><g id=\"timeline\"/></svg>", "id 'timeline'"},
      {"<svg><foreignObject><div>x</div></foreignObject></svg>", "<foreignObject>"},
      {"<svg><image href=\"#chart-a\"/></svg>", "<image>"},
      {"<svg><a href=\"#chart-a\"><text>x</text></a></svg>", "<a>"},
  };
  for (const auto& [svg, why] : refused) {
    StatusOr<std::string> checked = CheckInlineSvg(svg);
    ASSERT_FALSE(checked.ok()) << "accepted: " << svg;
    EXPECT_NE(checked.status().message().find(why), std::string::npos) << svg << ": " << checked.status().ToString();
  }
}

// What opscope writes itself (a run's and a profile's chart, the run's stamp
// on it) passes, hostile labels and all.
TEST(InspectorWeb, OpscopesOwnRooflineChartPasses) {
  const RoofPeaks peaks{.bandwidth_gbs = 100, .gflops_f32 = 1000, .gflops_f64 = 500, .source = "<given> & \"test\""};
  const Cost stream{.bytes_read = 400'000, .bytes_written = 400'000, .flops = 1e5};
  const Cost gemm{.bytes_read = 1'000'000, .flops = 2e9};
  const std::vector<RooflineChartPoint> points{
      {"</text><script>alert(1)</script>", DType::kF32, Roofline(stream, DType::kF32, 240, peaks)},
      {"<img src=x onerror=alert(1)>", DType::kF64, Roofline(gemm, DType::kF64, 4000, peaks)},
      {"no cost", DType::kF32, Roofline(std::nullopt, DType::kF32, 10, peaks)}};
  const graph::RunIdentity id{.id = kRun["id"].get<std::string>(),
                                .model_fingerprint = kRun["model_fingerprint"].get<std::string>()};
  const std::string svg = graph::StampSvg(RooflineSvg(peaks, points), id);
  StatusOr<std::string> checked = CheckInlineSvg(svg);
  ASSERT_TRUE(checked.ok()) << checked.status().ToString() << "\n" << svg;
  EXPECT_NE(checked->find("data-run-id"), std::string::npos);
}

class InspectorWebDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("inspector_web_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const std::vector<std::string> files = HostileRunFiles();
    for (size_t i = 0; i < files.size(); ++i) std::ofstream(dir_ / kRunFiles[i]) << files[i];
    std::ofstream(dir_ / "capture.json") << json({{"schema", "opscope.capture/1"}, {"run", kRun}, {"secret", 1}}).dump();
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

TEST(InspectorWeb, RequestHeadsAreFramedWithinTheirLimits) {
  const std::string get = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  EXPECT_EQ(ScanRequestHead(get).head_size, get.size());
  EXPECT_EQ(ScanRequestHead(get + "GET /next").head_size, get.size()) << "what follows the head is not in it";
  EXPECT_EQ(ScanRequestHead("GET / HTTP/1.0\r\n\r\n").head_size, 18u);
  for (size_t cut = 0; cut < get.size(); ++cut) {
    const RequestHeadScan part = ScanRequestHead(get.substr(0, cut));
    EXPECT_EQ(part.head_size, 0u) << cut;
    EXPECT_EQ(part.refuse, 0) << cut << ": " << part.reason;
  }
  const auto refused = [](const std::string& received) { return ScanRequestHead(received).refuse; };
  // Noise is refused at its first bytes, a bad line once it is whole.
  for (const std::string& bad : {std::string("\x16\x03\x01"), std::string(" GET"), std::string("GE\rT"),
                                 std::string("garbage\r"), std::string("GET /\r\n"), std::string("GET / HTTP/2\r\n"),
                                 std::string("GET  HTTP/1.1\r\n"), std::string(10000, 'G')}) {
    EXPECT_EQ(refused(bad), 400) << ::testing::PrintToString(bad);
  }
  // The limits, at them and one byte past them.
  const std::string line = "GET /" + std::string(kMaxRequestLineBytes - 14, 'a') + " HTTP/1.1";
  ASSERT_EQ(line.size(), kMaxRequestLineBytes);
  EXPECT_EQ(refused(line), 0);
  EXPECT_EQ(refused(line + "\r"), 0) << "the CR may be its line's end";
  EXPECT_EQ(refused(line + "a"), 414);
  EXPECT_EQ(refused("GET /a" + line.substr(5) + "\r\n\r\n"), 414);
  const std::string headers = "X: " + std::string(kMaxHeaderBytes - 7, 'b') + "\r\n\r\n";
  ASSERT_EQ(headers.size(), kMaxHeaderBytes);
  EXPECT_EQ(ScanRequestHead(line + "\r\n" + headers).head_size, kMaxRequestHeadBytes - 1);
  EXPECT_EQ(refused(line + "\r\n" + headers.substr(0, headers.size() - 2)), 0);
  EXPECT_EQ(refused(line + "\r\nX: b" + headers.substr(3)), 431);
  EXPECT_EQ(refused(line + "\r\n" + std::string(kMaxHeaderBytes + 1, 'c')), 431) << "before its end comes";
  // However the bytes fall, kMaxRequestHeadBytes of them are enough to decide.
  const std::string any(kMaxRequestHeadBytes, 'h');
  for (const std::string& flood : {std::string(kMaxRequestHeadBytes, 'G'), "GET /" + any,
                                   "GET / HTTP/1.1\r\n" + any, line + "\r\n" + std::string(any.size(), '\r')}) {
    const RequestHeadScan scan = ScanRequestHead(flood.substr(0, kMaxRequestHeadBytes));
    EXPECT_TRUE(scan.head_size > 0 || scan.refuse != 0) << flood.substr(0, 40);
  }
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

TEST_F(InspectorWebDir, ServesTheRooflineChartCheckedAndListsWhatTheFolderHolds) {
  const auto listed = [&] { return json::parse(Get("/files.json").body)["files"]; };
  EXPECT_EQ(Get("/files.json").content_type, "application/json");
  EXPECT_EQ(listed(), json({"graph.json", "trace.json", "summary.json"}));
  EXPECT_EQ(Get("/roofline.svg").status, 404);
  std::ofstream(dir_ / "roofline.svg") << StampedChart(kTimelineFixture / "roofline.svg", kRun);
  fs::copy_file(kTimelineFixture / "timeline.json", dir_ / "timeline.json");
  EXPECT_EQ(listed(), json({"graph.json", "trace.json", "summary.json", "timeline.json", "roofline.svg"}));
  const HttpResponse svg = Get("/roofline.svg");
  EXPECT_EQ(svg.status, 200);
  EXPECT_EQ(svg.content_type, "image/svg+xml");
  EXPECT_EQ(svg.body.rfind("<svg", 0), 0u);
  EXPECT_EQ(Get("/timeline.json").body, Slurp(kTimelineFixture / "timeline.json"));
  std::ofstream(dir_ / "roofline.svg") << "<svg onload=\"alert(1)\"></svg>";
  const HttpResponse refused = Get("/roofline.svg");
  EXPECT_EQ(refused.status, 422);
  EXPECT_EQ(refused.body.find("alert"), std::string::npos) << refused.body;
  EXPECT_NE(refused.body.find("the handler onload"), std::string::npos) << refused.body;
}

TEST_F(InspectorWebDir, AFolderWithATraceAloneIsShownWithoutTheGraph) {
  fs::remove(dir_ / "graph.json");
  StatusOr<ReportData> half = ReadReportDir(dir_.string());
  ASSERT_FALSE(half.ok()) << "summary.json without graph.json is a broken run, not a trace alone";
  EXPECT_NE(half.status().ToString().find("graph.json: missing"), std::string::npos) << half.status().ToString();
  fs::remove(dir_ / "summary.json");
  fs::remove(dir_ / "trace.json");
  StatusOr<ReportData> none = ReadReportDir(dir_.string());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().ToString().find("no trace.json, timeline.json (ops-debug profile) or diagnosis.json"),
            std::string::npos) << none.status().ToString();
  fs::copy_file(kTimelineFixture / "timeline.json", dir_ / "timeline.json");
  StatusOr<ReportData> alone = ReadReportDir(dir_.string());
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  EXPECT_TRUE(alone->graph.empty() && alone->summary.empty() && alone->roofline_svg.empty());
  EXPECT_EQ(alone->trace, Slurp(kTimelineFixture / "timeline.json"));
  // A trace.json beside it wins: it is the name the run folders use.
  std::ofstream(dir_ / "trace.json") << "{\"traceEvents\": []}";
  EXPECT_EQ(ReadReportDir(dir_.string())->trace, "{\"traceEvents\": []}");
  fs::remove(dir_ / "trace.json");
  std::ofstream(dir_ / "roofline.svg") << "<svg><foreignObject/></svg>";
  StatusOr<ReportData> bad_chart = ReadReportDir(dir_.string());
  ASSERT_FALSE(bad_chart.ok());
  EXPECT_NE(bad_chart.status().ToString().find("roofline.svg: roofline chart refused: <foreignObject>"), std::string::npos)
      << bad_chart.status().ToString();
  EXPECT_FALSE(WriteReportHtml(dir_.string()).ok());
  EXPECT_FALSE(fs::exists(dir_ / "report.html"));
  fs::remove(dir_ / "roofline.svg");
  fs::copy_file(kTimelineFixture / "roofline.svg", dir_ / "roofline.svg");
  StatusOr<std::string> written = WriteReportHtml(dir_.string());
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  const std::string html = Slurp(*written);
  EXPECT_NE(html.find("<div id=\"roofline\"><svg"), std::string::npos);
  EXPECT_EQ(html.find("opscope-data-graph.json"), std::string::npos);
}

// A page never mixes two runs: the files it is built from, and capture.json
// and roofline.svg beside them, must all name one run.
TEST_F(InspectorWebDir, AFolderOfTwoRunsIsRefusedBeforeAnythingIsDrawn) {
  ASSERT_TRUE(ReadReportDir(dir_.string()).ok()) << ReadReportDir(dir_.string()).status().ToString();
  EXPECT_EQ(Get("/files.json").status, 200);
  json other = kRun;
  other["id"] = "20250101T000001Z-2-00000000000000ff";
  std::ofstream(dir_ / "capture.json", std::ios::trunc)
      << json({{"schema", "opscope.capture/1"}, {"run", other}}).dump();
  const std::string two_runs = "files of two runs: graph.json is of run " + kRun["id"].get<std::string>() +
                               ", capture.json of run " + other["id"].get<std::string>();
  StatusOr<ReportData> mixed = ReadReportDir(dir_.string());
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().ToString().find(two_runs), std::string::npos) << mixed.status().ToString();
  EXPECT_FALSE(WriteReportHtml(dir_.string()).ok());
  EXPECT_FALSE(fs::exists(dir_ / "report.html"));
  // The page asks for files.json first, and shows the reason it gets.
  const HttpResponse listed = Get("/files.json");
  EXPECT_EQ(listed.status, 422);
  EXPECT_NE(listed.body.find(two_runs), std::string::npos) << listed.body;
  // A run's trace shown alone is held to the same rule; a trace no run wrote is not.
  fs::remove(dir_ / "graph.json");
  fs::remove(dir_ / "summary.json");
  StatusOr<ReportData> alone = ReadReportDir(dir_.string());
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().ToString().find("trace.json is of run " + kRun["id"].get<std::string>()), std::string::npos)
      << alone.status().ToString();
  std::ofstream(dir_ / "trace.json", std::ios::trunc) << "{\"traceEvents\": []}";
  EXPECT_TRUE(ReadReportDir(dir_.string()).ok());
  // A run's file that is not valid JSON is named, with where it breaks.
  const std::vector<std::string> files = HostileRunFiles();
  for (size_t i = 0; i < files.size(); ++i) std::ofstream(dir_ / kRunFiles[i], std::ios::trunc) << files[i];
  std::ofstream(dir_ / "capture.json", std::ios::trunc)
      << json({{"schema", "opscope.capture/1"}, {"run", kRun}}).dump();
  std::ofstream(dir_ / "summary.json", std::ios::trunc) << files[2].substr(0, files[2].size() - 1);
  StatusOr<ReportData> cut = ReadReportDir(dir_.string());
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().ToString().find("summary.json: not valid JSON (line 1, column "), std::string::npos)
      << cut.status().ToString();
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

// serve's answers carry the policy as a header: the UI's files from the
// server only, fetches to it only, and the inline scripts of a diagnosis
// folder's page (which comes built) by their hashes.
TEST_F(InspectorWebDir, EveryAnswerOfTheServerCarriesThePolicy) {
  StatusOr<std::string> built = BuildReportHtml(HostileRun());
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  auto inline_texts = InlineTexts(*built);
  WebServer server;
  ASSERT_TRUE(server.Listen("127.0.0.1", 0).ok());
  volatile std::sig_atomic_t stop = 0;
  Status served;
  std::thread serving([&] { served = server.Serve(dir_.string(), &stop); });
  // Every answer first, then the server stopped: a failed ASSERT must not leave its thread running.
  std::map<std::string, std::string> answers;
  for (const char* target : {"/", "/app.js", "/graph.json", "/nope"}) {
    answers[target] = Fetch(server.port(), "GET " + std::string(target) + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
  }
  stop = 1;
  serving.join();
  EXPECT_TRUE(served.ok()) << served.ToString();
  for (const auto& [target, answer] : answers) {
    const std::string head = answer.substr(0, answer.find("\r\n\r\n") + 2);
    const std::string name = "\r\nContent-Security-Policy: ";
    const size_t at = head.find(name);
    ASSERT_NE(at, std::string::npos) << target << ":\n" << head;
    const size_t begin = at + name.size();
    auto policy = ParsePolicy(head.substr(begin, head.find("\r\n", begin) - begin));
    EXPECT_EQ(policy["default-src"], std::vector<std::string>{"'none'"}) << target;
    EXPECT_EQ(policy["connect-src"], std::vector<std::string>{"'self'"}) << target;
    EXPECT_EQ(policy["img-src"], std::vector<std::string>{"data:"}) << target;
    EXPECT_EQ(policy["frame-ancestors"], std::vector<std::string>{"'none'"}) << target;
    for (const std::string tag : {"script", "style"}) {
      const std::vector<std::string>& sources = policy[tag + "-src"];
      ASSERT_FALSE(sources.empty()) << target << " " << tag;
      EXPECT_EQ(sources[0], "'self'") << target;
      for (const std::string& s : sources) EXPECT_TRUE(s == "'self'" || s.starts_with("'sha256-")) << target << " " << s;
      for (const std::string& text : inline_texts[tag]) {
        EXPECT_NE(std::find(sources.begin(), sources.end(), HashSourceOf(text)), sources.end()) << target << " " << tag;
      }
    }
  }
}

TEST(InspectorWeb, ListenRejectsABadAddressOrPort) {
  WebServer a, b;
  EXPECT_NE(a.Listen("localhost", 0).ToString().find("--bind 'localhost'"), std::string::npos);
  EXPECT_NE(b.Listen("127.0.0.1", 70000).ToString().find("--port 70000"), std::string::npos);
}

TEST_F(InspectorWebDir, AFolderWithADiagnosisIsShownAsItsTimelineAndPanel) {
  for (const char* f : kRunFiles) fs::remove(dir_ / f);
  fs::copy_file(kDiagnosisFixture, dir_ / "diagnosis.json");
  StatusOr<ReportData> data = ReadReportDir(dir_.string());
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_TRUE(data->graph.empty() && data->summary.empty());
  EXPECT_EQ(json::parse(data->trace)["schema"], "opscope.diagnosis_timeline/1");
  EXPECT_EQ(json::parse(data->diagnosis)["schema"], "opscope.diagnosis_panel/1");
  EXPECT_EQ(data->title, "my_pool: crashed (SIGSEGV)");
  // Served: / is the page built from it now, the file itself is there as it is.
  const HttpResponse index = Get("/");
  ASSERT_EQ(index.status, 200) << index.body;
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(Embedded(index.body, "diagnosis"), json::parse(data->diagnosis));
  EXPECT_EQ(Embedded(index.body, "trace.json"), json::parse(data->trace));
  EXPECT_EQ(Get("/index.html").body, index.body);
  EXPECT_EQ(Get("/diagnosis.json").body, Slurp(kDiagnosisFixture));
  EXPECT_EQ(json::parse(Get("/files.json").body)["files"], json({"diagnosis.json"}));
  // A broken one is refused with the reason, not drawn half.
  std::ofstream(dir_ / "diagnosis.json") << "{\"schema\": \"opscope.report/1\"}";
  const HttpResponse refused = Get("/");
  EXPECT_EQ(refused.status, 422);
  EXPECT_NE(refused.body.find("diagnosis.json: field schema: \"opscope.report/1\", not \"opscope.diagnosis/1\""),
            std::string::npos) << refused.body;
  // Beside a run's files it is not what the folder is shown by.
  fs::remove(dir_ / "diagnosis.json");
  std::ofstream(dir_ / "graph.json") << HostileRunFiles()[0];
  EXPECT_EQ(Get("/").body, std::string(FindWebAsset("index.html")->data));
}

TEST(InspectorWeb, DiagnosisPageEmbedsTheConvertedTraceAndThePanel) {
  StatusOr<std::string> html = BuildDiagnosisHtml(Slurp(kDiagnosisFixture), "x/diagnosis.json");
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  const json trace = Embedded(*html, "trace.json"), panel = Embedded(*html, "diagnosis");
  ASSERT_TRUE(trace.is_object() && panel.is_object());
  EXPECT_EQ(panel["failing_seq"], 7);
  EXPECT_EQ(panel["causes"].size(), 2u);
  EXPECT_EQ(Embedded(*html, "page")["title"], "my_pool: crashed (SIGSEGV)");
  EXPECT_TRUE(Embedded(*html, "graph.json").is_null());
  EXPECT_EQ(CountOccurrences(*html, "<script"), CountOccurrences(*html, "</script>"));
  StatusOr<std::string> bad = BuildDiagnosisHtml("not json", "x/diagnosis.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("x/diagnosis.json: not valid JSON"), std::string::npos) << bad.status().ToString();
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
  // --format all writes every file again from capture.json, the roofline chart included.
  fs::remove(dir / "roofline.svg");
  ASSERT_EQ(Inspector({"export", "--input-dir", dir.string(), "--format", "all"}, &err), 0) << err;
  StatusOr<ReportData> files = ReadReportDir(dir.string());
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  const std::string html = Slurp(dir / "report.html");
  // The page's share of them (cli/page_data.h), from the files as read.
  EXPECT_NE(html.find(EscapeJsonForScript(GraphForPage(files->graph))), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "roofline.svg"));
  EXPECT_NE(html.find("<div id=\"roofline\"><svg"), std::string::npos) << "the run's chart is in its page";
  EXPECT_NE(html.find(EscapeJsonForScript(SummaryForPage(files->summary))), std::string::npos);
  // A folder without a chart: the page has an empty Roofline panel, hidden.
  fs::remove(dir / "roofline.svg");
  ASSERT_EQ(Inspector({"export", "--input-dir", dir.string(), "--format", "html"}, &err), 0) << err;
  EXPECT_NE(Slurp(dir / "report.html").find("<div id=\"roofline\"></div>"), std::string::npos);
  // A chart placed there (here the UI test's) is shown when it names this
  // run; one that names no run could be an earlier run's, and is refused.
  fs::copy_file(kTimelineFixture / "roofline.svg", dir / "roofline.svg");
  EXPECT_EQ(Inspector({"export", "--input-dir", dir.string(), "--format", "html"}, &err), 2);
  EXPECT_NE(err.find("roofline.svg: no run identity"), std::string::npos) << err;
  std::ofstream(dir / "roofline.svg", std::ios::trunc)
      << StampedChart(kTimelineFixture / "roofline.svg", ReadGraphJson(dir / "graph.json")["run"]);
  ASSERT_EQ(Inspector({"export", "--input-dir", dir.string(), "--format", "html"}, &err), 0) << err;
  EXPECT_NE(Slurp(dir / "report.html").find("<div id=\"roofline\"><svg"), std::string::npos);
  EXPECT_EQ(Inspector({"serve", (dir / "nope").string()}, &err), 2);
  EXPECT_NE(err.find("no such folder"), std::string::npos) << err;
  fs::remove_all(dir);
}

// --baseline: the page carries the diff of the two runs, as `inspector-cli
// diff` judged it, less what the page does not read; what cannot be compared
// is refused in one line and no report is written.
TEST(InspectorWebCli, ExportWithABaselineEmbedsTheDiffOrRefusesInOneLine) {
  const fs::path dir = fs::temp_directory_path() / ("inspector_web_base_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string models = std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/";
  const auto run = [&](const std::string& model, const std::string& name, const std::string& streams) {
    EXPECT_EQ(Inspector({"run", models + model, "--output-dir", (dir / name).string(), "--streams", streams,
                         "--iterations", "3", "--peak-bw", "10", "--peak-flops", "50"}),
              0);
    return (dir / name).string();
  };
  const std::string base = run("two_branch.onnx", "base", "2"), now = run("two_branch.onnx", "now", "1"),
                    other = run("const_if.onnx", "other", "2");
  std::string err;
  ASSERT_EQ(Inspector({"export", "--input-dir", now, "--format", "html", "--baseline", base}, &err), 0) << err;
  const json page = Embedded(Slurp(fs::path(now) / "report.html"), "diff.json");
  ASSERT_TRUE(page.is_object()) << "the page embeds diff.json";
  EXPECT_EQ(page["schema"], "opscope.diff/1");
  EXPECT_EQ(page["base"], base);
  ASSERT_EQ(page["changed_settings"].size(), 1u) << page["changed_settings"].dump();
  EXPECT_EQ(page["changed_settings"][0]["setting"], "streams");
  EXPECT_FALSE(page.contains("top_tasks"));
  // Every timed compiled node is either kept with its medians or counted unchanged.
  StatusOr<RunDiffReport> full = DiffRunFolders({.base_dir = base, .new_dir = now});
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  const json whole = json::parse(full->json);
  size_t changed = 0, unchanged = 0;
  for (const json& e : whole["node_times"]) {
    changed += e["verdict"] != "unchanged" && e["verdict"] != "within noise";
    unchanged += e["verdict"] == "unchanged";
  }
  EXPECT_EQ(page["node_times"].size(), changed);
  EXPECT_EQ(page["node_times_unchanged"].get<size_t>(), unchanged);
  EXPECT_EQ(page["node_times_within_noise"].get<size_t>() + unchanged + changed, whole["node_times"].size());
  for (const json& e : page["node_times"]) {
    EXPECT_NE(e["verdict"], "unchanged");
    EXPECT_NE(e["verdict"], "within noise");
    EXPECT_TRUE(e["base_us"].is_number() && e["new_us"].is_number()) << e.dump();
  }

  fs::remove(fs::path(other) / "report.html");
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"export", "--input-dir", other, "--format", "html", "--baseline", base}, "--allow-different-models"},
      {{"export", "--input-dir", other, "--format", "json", "--baseline", base}, "--baseline: only with --format html"},
      {{"export", "--input-dir", other, "--format", "html", "--baseline", (dir / "nope").string()}, "--baseline "},
      {{"export", "--input-dir", other, "--format", "html", "--baseline", base, "--threshold-time", "x%"},
       "--threshold-time 'x%'"},
  };
  for (const auto& [args, expected] : refused) {
    EXPECT_EQ(Inspector(args, &err), 2) << expected;
    EXPECT_NE(err.find(expected), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_FALSE(fs::exists(fs::path(other) / "report.html")) << expected;
  }
  ASSERT_EQ(Inspector({"export", "--input-dir", other, "--format", "html", "--baseline", base,
                       "--allow-different-models"}, &err), 0) << err;
  const json across = Embedded(Slurp(fs::path(other) / "report.html"), "diff.json");
  EXPECT_FALSE(across["models"]["same"].get<bool>());
  EXPECT_FALSE(across["nodes"]["framework"]["added"].empty());
  fs::remove_all(dir);
}

TEST(InspectorWebCli, ExportOfADiagnosisFolderAndOfABrokenOne) {
  const fs::path dir = fs::temp_directory_path() / ("inspector_web_diag_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(kDiagnosisFixture, dir / "diagnosis.json");
  std::string err;
  ASSERT_EQ(Inspector({"export", "--input-dir", dir.string(), "--format", "html"}, &err), 0) << err;
  EXPECT_EQ(Embedded(Slurp(dir / "report.html"), "diagnosis")["status"], "crashed");
  fs::remove(dir / "report.html");
  const std::vector<std::pair<std::string, std::string>> broken = {
      {"{\"schema\": \"opscope.diagnosis/1\", \"status\": ", "diagnosis.json: not valid JSON (line 1, column "},
      {"{\"schema\": \"opscope.timeline/1\"}", "diagnosis.json: field schema: \"opscope.timeline/1\", not"},
  };
  for (const auto& [text, expected] : broken) {
    std::ofstream(dir / "diagnosis.json") << text;
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"export", "--input-dir", dir.string(), "--format", "html"}, {"serve", dir.string(), "--port", "0"}}) {
      EXPECT_EQ(Inspector(args, &err), 2) << args[0];
      EXPECT_EQ(err.rfind("inspector-cli: error: ", 0), 0u) << err;
      EXPECT_NE(err.find((dir / expected).string()), std::string::npos) << err;
      EXPECT_NE(err.find("expected an opscope.diagnosis/1 file"), std::string::npos) << err;
      EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    }
    EXPECT_EQ(std::vector<fs::path>(fs::directory_iterator(dir), fs::directory_iterator()),
              std::vector<fs::path>{dir / "diagnosis.json"}) << "nothing written";
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace opscope::cli
