// A run folder's files and their identity, as library calls: what a reader
// refuses (two runs, no identity, malformed JSON, an identity of the wrong
// kind), and what the next run removes before it writes (its own files and
// temporary files only).
#include "graph/export/run_folder.h"
#include "graph/run/run_identity.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>


namespace opscope::graph {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class RunFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "run_identity_test_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name, std::ios::trunc) << text;
  }
  // The four JSON files and the chart of one run, as a run writes them.
  void WriteRun(const RunIdentity& id) {
    const json run = RunIdentityJson(id);
    Write("graph.json", json({{"schema", "opscope.graph/1"}, {"run", run}, {"compiled", {{"nodes", json::array()}}}}).dump());
    Write("trace.json", "{\"schema\":\"opscope.trace/1\",\"otherData\":{\"run\":" + run.dump() +
                            "},\"traceEvents\":[\n{\"ph\":\"M\"}]}\n");
    Write("summary.json", json({{"schema", "opscope.summary/1"}, {"run", run}, {"op_types", json::array()}}).dump(2));
    Write("roofline.svg", StampSvg("<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>", id));
    Write("capture.json", json({{"schema", "opscope.capture/1"}, {"run", run}, {"tasks", json::array()}}).dump());
  }
  std::string Error(const std::map<std::string, const std::string*>& texts = {}) {
    StatusOr<RunIdentity> id = CheckRunFolder(dir_.string(), texts);
    return id.ok() ? "accepted" : id.status().ToString();
  }

  fs::path dir_;
  const RunIdentity a_{.id = "20250101T000000Z-1-00000000000000aa", .model_fingerprint = "10:00000000000000a0"};
  const RunIdentity b_{.id = "20250101T000001Z-2-00000000000000bb", .model_fingerprint = "20:00000000000000b0"};
};

TEST_F(RunFolder, NewIdentitiesDifferEvenWithinOneSecondOfOneProcess) {
  const RunIdentity x = NewRunIdentity("1:2"), y = NewRunIdentity("1:2");
  EXPECT_NE(x.id, y.id);
  EXPECT_EQ(x.model_fingerprint, "1:2");
  EXPECT_NE(x.id.find("-" + std::to_string(::getpid()) + "-"), std::string::npos) << x.id;
}

TEST_F(RunFolder, FilesOfOneRunAreAccepted) {
  WriteRun(a_);
  StatusOr<RunIdentity> id = CheckRunFolder(dir_.string());
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, a_);
  // Each kind of file is read for its identity where it keeps it.
  for (const char* name : kRunFolderFiles) {
    StatusOr<RunIdentity> one = ReadRunFileIdentity((dir_ / name).string());
    ASSERT_TRUE(one.ok()) << name << ": " << one.status().ToString();
    EXPECT_EQ(*one, a_) << name;
  }
}

TEST_F(RunFolder, AnyFileOfAnotherRunIsRefusedNamingBothFiles) {
  for (const char* odd : kRunFolderFiles) {
    SCOPED_TRACE(odd);
    WriteRun(a_);
    const fs::path other = dir_ / "other";
    fs::create_directories(other);
    const fs::path keep = dir_;
    dir_ = other;
    WriteRun(b_);
    dir_ = keep;
    fs::copy_file(other / odd, dir_ / odd, fs::copy_options::overwrite_existing);
    // graph.json is read first: the odd file, or the one the odd file differs from.
    const std::string expected = std::string(odd) == "graph.json"
                                     ? "graph.json is of run " + b_.id + ", trace.json of run " + a_.id
                                     : "graph.json is of run " + a_.id + ", " + odd + " of run " + b_.id;
    const std::string e = Error();
    EXPECT_NE(e.find("files of two runs: " + expected), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    fs::remove_all(other);
  }
}

TEST_F(RunFolder, OneRunIdWithTwoModelsIsRefused) {
  WriteRun(a_);
  RunIdentity forged = a_;
  forged.model_fingerprint = b_.model_fingerprint;
  Write("summary.json", json({{"schema", "opscope.summary/1"}, {"run", RunIdentityJson(forged)}}).dump());
  EXPECT_NE(Error().find("graph.json and summary.json are of run " + a_.id + " but name two models"), std::string::npos)
      << Error();
}

TEST_F(RunFolder, AFileWithoutAnIdentityIsRefusedWithTheAdviceToRunAgain) {
  WriteRun(a_);
  Write("summary.json", json({{"schema", "opscope.summary/1"}, {"op_types", json::array()}}).dump());
  const std::string e = Error();
  EXPECT_NE(e.find("summary.json: no run identity (field run)"), std::string::npos) << e;
  EXPECT_NE(e.find("inspector-cli run MODEL.onnx --output-dir " + dir_.string() + "` again"), std::string::npos) << e;
  // Every file of a folder written before identities is refused alike: the
  // first one read is named.
  for (const char* name : kRunFolderFiles) fs::remove(dir_ / name);
  Write("trace.json", "{\"schema\":\"opscope.trace/1\",\"traceEvents\":[]}");
  Write("roofline.svg", "<svg></svg>");
  EXPECT_NE(Error().find("trace.json: no run identity (field otherData.run)"), std::string::npos) << Error();
  fs::remove(dir_ / "trace.json");
  EXPECT_NE(Error().find("roofline.svg: no run identity"), std::string::npos) << Error();
  fs::remove(dir_ / "roofline.svg");
  EXPECT_NE(Error().find("not an inspector-cli run folder"), std::string::npos) << Error();
}

TEST_F(RunFolder, MalformedFilesAndMistypedIdentitiesAreOneLineNamingFileAndField) {
  WriteRun(a_);
  const std::string graph = json({{"schema", "opscope.graph/1"}, {"run", RunIdentityJson(a_)}}).dump();
  Write("graph.json", graph.substr(0, graph.size() - 3));
  EXPECT_NE(Error().find("graph.json: not valid JSON (line 1, column "), std::string::npos) << Error();
  EXPECT_NE(Error().find("it ends too early"), std::string::npos) << Error();
  Write("graph.json", "{\"schema\": \"opscope.graph/1\",\n \"run\": {\"id\": 7, \"model_fingerprint\": \"x\"}}");
  EXPECT_NE(Error().find("graph.json: field run.id: expected a string, found an integer"), std::string::npos) << Error();
  Write("graph.json", "{\"schema\": \"opscope.graph/1\", \"run\": [1]}");
  EXPECT_NE(Error().find("graph.json: field run: expected an object, found an array"), std::string::npos) << Error();
  Write("graph.json", "{\"schema\": \"opscope.graph/1\", \"run\": {\"id\": \"x\"}}");
  EXPECT_NE(Error().find("graph.json: field run.model_fingerprint: missing"), std::string::npos) << Error();
  Write("graph.json", "{\"schema\": \"opscope.summary/1\", \"run\": " + RunIdentityJson(a_).dump() + "}");
  EXPECT_NE(Error().find("graph.json: field schema: \"opscope.summary/1\", expected \"opscope.graph/3\""),
            std::string::npos) << Error();
  // A text the caller holds is checked whole: what follows the identity too.
  WriteRun(a_);
  const std::string trace = "{\"schema\":\"opscope.trace/1\",\"otherData\":{\"run\":" + RunIdentityJson(a_).dump() +
                            "},\"traceEvents\":[\n{\"ph\":\"M\"},\n{\"ph\" \"X\"}]}";
  EXPECT_NE(Error({{"trace.json", &trace}}).find("trace.json: not valid JSON (line 3, column 9: unexpected '\"')"),
            std::string::npos) << Error({{"trace.json", &trace}});
}

TEST_F(RunFolder, AReaderOfATraceStopsAtItsIdentity) {
  WriteRun(a_);
  // Broken after its first line: a reader that wants the identity alone never gets there.
  Write("trace.json", "{\"schema\":\"opscope.trace/1\",\"otherData\":{\"run\":" + RunIdentityJson(a_).dump() +
                          "},\"traceEvents\":[\n{\"ph\": nonsense");
  StatusOr<RunIdentity> id = ReadRunFileIdentity((dir_ / "trace.json").string());
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, a_);
}

TEST_F(RunFolder, ClearingRemovesThePreviousRunAndOurLeftoversOnly) {
  WriteRun(a_);
  Write("passes/01_shape_inference.json",
        json({{"schema", "opscope.graph/1"}, {"run", RunIdentityJson(a_)}, {"pass", {{"index", 1}}}}).dump());
  // What a killed writer leaves: ours.
  for (const char* tmp : {".graph.json.tmp.Ab12Cd", ".capture.json.tmp.000000", ".report.html.tmp.zzzzzz",
                          "passes/.01_shape_inference.json.tmp.QwErTy"}) {
    Write(tmp, "partial");
  }
  // The user's, or not of our making: they stay.
  const std::vector<std::string> kept = {"notes.txt", ".notes.txt.tmp.Ab12Cd", ".graph.json.tmp.ab-123",
                                         ".graph.json.tmp.Ab12Cde", "passes/02_mine.json", "passes/readme.md",
                                         "diff.json", "report.html"};
  for (const std::string& f : kept) Write(f, "{\"mine\": true}");
  fs::create_symlink(dir_ / "notes.txt", dir_ / ".summary.json.tmp.LiNk00");

  ASSERT_TRUE(ClearRunFolder(dir_.string()).ok());
  for (const char* name : kRunFolderFiles) EXPECT_FALSE(fs::exists(dir_ / name)) << name;
  EXPECT_FALSE(fs::exists(dir_ / "passes/01_shape_inference.json"));
  for (const char* tmp : {".graph.json.tmp.Ab12Cd", ".capture.json.tmp.000000", ".report.html.tmp.zzzzzz",
                          "passes/.01_shape_inference.json.tmp.QwErTy"}) {
    EXPECT_FALSE(fs::exists(dir_ / tmp)) << tmp;
  }
  for (const std::string& f : kept) EXPECT_TRUE(fs::exists(dir_ / f)) << f;
  EXPECT_TRUE(fs::is_symlink(dir_ / ".summary.json.tmp.LiNk00"));
}

TEST_F(RunFolder, ClearingLeavesALinkNamedLikeARunFileAndWhatItPointsAt) {
  Write("mine.json", "{\"mine\": true}");
  fs::create_symlink(dir_ / "mine.json", dir_ / "graph.json");
  ASSERT_TRUE(ClearRunFolder(dir_.string()).ok());
  EXPECT_TRUE(fs::is_symlink(dir_ / "graph.json"));
  EXPECT_TRUE(fs::exists(dir_ / "mine.json"));
}

}  // namespace
}  // namespace opscope::graph
