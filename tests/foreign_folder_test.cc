// Someone else's folder (issue 22): a run folder, a model or a cloned
// repository is data that may have been made to harm whoever opens it. No
// reading command loads code a file names; no writer goes through a link
// planted at its output path or folder; the server and export read a folder's
// files only from the folder; every printed command line is safe to paste;
// names that are not UTF-8 still give files that are.
//
// The reading commands run in this process (cli/apps.h); runs that load a
// plugin, and the pasted lines, in a child, so this process loads no plugin.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include "capture/flight_recorder.h"
#include "cli/apps.h"
#include "cli/http_request.h"
#include "core/text_format.h"
#include "opscope/npy.h"
#include "opscope/tensor.h"
#include "graph_json_test_util.h"
#include "tool_test_util.h"

namespace opscope {
namespace {

using namespace ::opscope::testing;  // tool_test_util.h
using nlohmann::json;
namespace fs = std::filesystem;

const std::string kBin = std::string(OPSCOPE_BINARY_DIR) + "/bin/";
const std::string kLib = std::string(OPSCOPE_BINARY_DIR) + "/lib/";

std::string Model(const std::string& name) { return std::string(OPSCOPE_SOURCE_DIR) + "/examples/models/" + name; }

void Put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

struct Result {
  int code;
  std::string out, err;
};

// inspector-cli or ops-debug in this process.
using MainFn = int (*)(int, const char* const*, std::ostream&, std::ostream&);
Result InProcess(MainFn main, const char* tool, std::vector<std::string> args) {
  args.insert(args.begin(), tool);
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = main(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}
Result Inspector(std::vector<std::string> args) { return InProcess(cli::InspectorMain, "inspector-cli", std::move(args)); }
Result OpsDebug(std::vector<std::string> args) { return InProcess(cli::OpsDebugMain, "ops-debug", std::move(args)); }

class ForeignFolder : public ::testing::Test {
 protected:
  // A run of the small two-branch model, written by this process.
  fs::path MakeRun(const std::string& name) {
    const fs::path out = dir_.path() / name;
    const Result r = Inspector({"run", Model("two_branch.onnx"), "--output-dir", out.string()});
    EXPECT_EQ(r.code, 0) << r.err;
    return out;
  }
  TempDir dir_;
};

TEST_F(ForeignFolder, ReadingCommandsLoadNoPluginTheFolderNames) {
  const std::string evil = kLib + "libconstructor_plugin.so";
  ASSERT_TRUE(fs::exists(evil)) << evil << ": build the constructor_plugin target";
  const fs::path run = MakeRun("run"), marker = dir_.path() / "LOADED";
  json capture = json::parse(Slurp(run / "capture.json"));
  capture["plugins"] = json::array({evil, "./evil.so"});
  Put(run / "capture.json", capture.dump());
  ASSERT_EQ(::setenv("OPSCOPE_TEST_LOADED_MARKER", marker.c_str(), 1), 0);

  const Result summary = Inspector({"summary", run.string()});
  EXPECT_EQ(summary.code, 0) << summary.err;
  EXPECT_TRUE(Contains(summary.out, "plugins the run loaded (not loaded here): " + evil + ", ./evil.so")) << summary.out;
  const std::vector<std::vector<std::string>> reading = {
      {"path", run.string(), "--node", ReadGraphJson(run / "graph.json")["framework"]["nodes"][0]["name"]},
      {"diff", run.string(), run.string()},
      {"export", "--input-dir", run.string(), "--format", "json"},
      {"export", "--input-dir", run.string(), "--format", "html"},
  };
  for (const auto& args : reading) {
    const Result r = Inspector(args);
    EXPECT_NE(r.code, 2) << args[0] << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(marker)) << "a reading command loaded the library capture.json names";
  ::unsetenv("OPSCOPE_TEST_LOADED_MARKER");
}

TEST_F(ForeignFolder, ARunOfAPluginOpIsReadWithoutThePlugin) {
  const std::string plugin = kLib + "libmy_ops.so";
  const fs::path run = dir_.path() / "custom";
  const auto r = Shell(kBin + "inspector-cli run " + Model("custom_op.onnx") + " --plugin " + plugin +
                       " --output-dir " + run.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // This process never loaded my_ops: my_norm has no schema here.
  const Result summary = Inspector({"summary", run.string()});
  ASSERT_EQ(summary.code, 0) << summary.err;
  EXPECT_TRUE(Contains(summary.out, "my_norm")) << summary.out;
  EXPECT_TRUE(Contains(summary.out, "(not loaded here): " + plugin)) << summary.out;
  const Result exported = Inspector({"export", "--input-dir", run.string(), "--format", "json"});
  EXPECT_EQ(exported.code, 0) << exported.err;
}

TEST_F(ForeignFolder, WritersReplaceALinkAtTheirOutputNeverFollowIt) {
  const fs::path victim = dir_.path() / "authorized_keys";
  const std::string keys = "ssh-ed25519 AAAA user@host\n";
  Put(victim, keys);
  // export --format html into a folder holding report.html -> the victim.
  const fs::path run = MakeRun("shared");
  fs::create_symlink(victim, run / "report.html");
  const Result html = Inspector({"export", "--input-dir", run.string(), "--format", "html"});
  EXPECT_EQ(html.code, 0) << html.err;
  EXPECT_EQ(Slurp(victim), keys);
  EXPECT_FALSE(fs::is_symlink(run / "report.html"));
  // run into a folder whose every run file is a link to the victim.
  const fs::path again = dir_.path() / "again";
  fs::create_directories(again);
  for (const char* f : {"graph.json", "trace.json", "summary.json", "capture.json", "roofline.svg"}) {
    fs::create_symlink(victim, again / f);
  }
  const Result rerun = Inspector({"run", Model("two_branch.onnx"), "--output-dir", again.string()});
  EXPECT_EQ(rerun.code, 0) << rerun.err;
  EXPECT_EQ(Slurp(victim), keys) << "a run wrote through a link in its output folder";
  for (const char* f : {"graph.json", "trace.json", "summary.json", "capture.json"}) {
    EXPECT_FALSE(fs::is_symlink(again / f)) << f;
  }
}

TEST_F(ForeignFolder, AnOutputFolderThatIsALinkIsRefused) {
  const fs::path elsewhere = dir_.path() / "dot_ssh";
  fs::create_directories(elsewhere);
  fs::create_symlink(elsewhere, dir_.path() / "out");
  const Result run = Inspector({"run", Model("two_branch.onnx"), "--output-dir", (dir_.path() / "out").string()});
  EXPECT_EQ(run.code, 2);
  EXPECT_TRUE(Contains(run.err, "symbolic link")) << run.err;
  // diagnose's default opscope-out/diagnose in a cloned repository holding opscope-out -> elsewhere.
  fs::create_symlink(elsewhere, dir_.path() / "opscope-out");
  const auto diag =
      Shell("sh -c " + ShellQuote("cd " + ShellQuote(dir_.path().string()) + " && " + kBin + "ops-debug diagnose -- /bin/true"));
  EXPECT_EQ(diag.exit_code, 2) << diag.out << diag.err;
  EXPECT_TRUE(Contains(diag.err, "symbolic link")) << diag.err;
  EXPECT_TRUE(fs::is_empty(elsewhere)) << "something was written through the link";
}

TEST_F(ForeignFolder, TheFlightRingIsNeverOpenedThroughALink) {
  const fs::path victim = dir_.path() / "victim", ring = dir_.path() / "flight.ring";
  Put(victim, "precious");
  fs::create_symlink(victim, ring);
  auto rec = FlightRecorder::Open(ring.string(), {.slots = 4});
  EXPECT_FALSE(rec.ok());
  EXPECT_EQ(Slurp(victim), "precious") << "the ring truncated the link's target";
}

TEST_F(ForeignFolder, ServeAndExportReadTheFolderOnlyFromTheFolder) {
  const fs::path run = MakeRun("served"), secret = dir_.path() / "secret.json";
  Put(secret, "{\"secret\": \"outside the folder\"}");
  ASSERT_EQ(cli::AnswerHttpRequest("GET /trace.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", run.string()).status, 200);
  // trace.json swapped for a link after the server started.
  fs::remove(run / "trace.json");
  fs::create_symlink(secret, run / "trace.json");
  const cli::HttpResponse swapped =
      cli::AnswerHttpRequest("GET /trace.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", run.string());
  EXPECT_NE(swapped.status, 200);
  EXPECT_FALSE(Contains(swapped.body, "outside the folder")) << swapped.body;
  // A trace-only folder whose timeline.json links to any JSON file.
  const fs::path trace_only = dir_.path() / "trace_only";
  fs::create_directories(trace_only);
  fs::create_symlink(secret, trace_only / "timeline.json");
  const Result exported = Inspector({"export", "--input-dir", trace_only.string(), "--format", "html"});
  EXPECT_EQ(exported.code, 2);
  EXPECT_TRUE(Contains(exported.err, "symbolic link")) << exported.err;
  EXPECT_FALSE(fs::exists(trace_only / "report.html"));
}

TEST_F(ForeignFolder, PrintedCommandLinesRunOnlyTheToolWhenPasted) {
  // An input whose name would run `touch PWNED` if a printed line were pasted
  // with bad quoting: backticks, $(), a tab, a backslash, a quote.
  const fs::path pwned = dir_.path() / "PWNED";
  const std::string name = "in`touch PWNED`$(touch PWNED)\t\\it's.npy";  // run in dir_, if ever
  const fs::path input = dir_.path() / name;
  auto x = Tensor::Empty(DType::kF32, Shape({64}));
  ASSERT_TRUE(x.ok());
  for (int i = 0; i < 64; ++i) x->data<float>()[i] = static_cast<float>(i - 32);
  const Status written = WriteNpy(input.string(), *x);
  ASSERT_TRUE(written.ok()) << written.ToString();
  // A stand-in ops-debug on PATH prints the words it was given, one a line.
  const fs::path fake = dir_.path() / "bin";
  fs::create_directories(fake);
  Put(fake / "ops-debug", "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n");
  fs::permissions(fake / "ops-debug", fs::perms::owner_all);
  const auto pasted = [&](const std::string& line) {
    return Shell("sh -c " + ShellQuote("cd " + ShellQuote(dir_.path().string()) + " && PATH=" +
                                       ShellQuote(fake.string()) + ":/usr/bin:/bin sh -c " + ShellQuote(line)));
  };

  const Result run = OpsDebug({"run", "--op", "Relu", "--inputs", input.string(), "--report",
                               (dir_.path() / "report.json").string()});
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string run_line = json::parse(Slurp(dir_.path() / "report.json"))["repro"]["command"].get<std::string>();
  const auto ran = pasted(run_line);
  EXPECT_EQ(ran.exit_code, 0) << run_line;
  EXPECT_TRUE(Contains(ran.out, "\n" + input.string() + "\n")) << "the input came back whole:\n" << ran.out;

  const fs::path sweep_dir = dir_.path() / "sweep";
  const Result sweep = OpsDebug({"sweep", "--op", "Relu", "--inputs", input.string(), "--block", "65536",
                                 "--warmup", "0", "--iters", "1", "--output-dir", sweep_dir.string(),
                                 "--peak-bw", "10", "--peak-flops", "10"});
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  const std::string sweep_line = json::parse(Slurp(sweep_dir / "sweep.json"))["repro"].get<std::string>();
  const auto swept = pasted(sweep_line);
  EXPECT_TRUE(Contains(swept.out, "\n" + input.string() + "\n")) << sweep_line << "\n" << swept.out;
  EXPECT_FALSE(fs::exists(pwned)) << "a pasted line ran touch:\n" << run_line << "\n" << sweep_line;
}

// two_branch.onnx with every node name given bytes that are not UTF-8.
fs::path InvalidUtf8Model(const fs::path& dir) {
  onnx::ModelProto m;
  std::ifstream in(Model("two_branch.onnx"), std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in));
  for (auto& n : *m.mutable_graph()->mutable_node()) n.set_name("/sc\xff\xfeope/" + n.name() + "\xc3");
  const fs::path out = dir / "bad_names.onnx";
  std::ofstream o(out, std::ios::binary);
  EXPECT_TRUE(m.SerializeToOstream(&o));
  return out;
}

TEST_F(ForeignFolder, NamesThatAreNotUtf8GiveFilesThatAre) {
  const fs::path model = InvalidUtf8Model(dir_.path()), run = dir_.path() / "run";
  const Result r = Inspector({"run", model.string(), "--output-dir", run.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  int files = 0;
  for (const auto& e : fs::directory_iterator(run)) {
    if (!e.is_regular_file()) continue;
    ++files;
    EXPECT_TRUE(IsValidUtf8(Slurp(e.path()))) << e.path() << " is not valid UTF-8";
  }
  EXPECT_GE(files, 4);
  // The run's own folder can still be exported, and the page is UTF-8 too.
  const Result html = Inspector({"export", "--input-dir", run.string(), "--format", "html"});
  ASSERT_EQ(html.code, 0) << html.err;
  EXPECT_TRUE(IsValidUtf8(Slurp(run / "report.html")));
  EXPECT_TRUE(Contains(Slurp(run / "trace.json"), "/sc\xef\xbf\xbd\xef\xbf\xbdope/")) << "U+FFFD for each bad byte";
}

}  // namespace
}  // namespace opscope
