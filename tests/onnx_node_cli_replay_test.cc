// Replays ONNX's node tests (Debian's libonnx-testdata) through `ops-debug
// run` as a user would call it: each case's inputs and expected outputs
// become .npy files, the node's attributes an --attrs string, and
//
//   ops-debug run --op OP --inputs in0.npy,... --expected out0.npy,... --attrs ...
//
// must exit 0. The ONNX data is the oracle: nothing here recomputes the math.
// Each case runs through the tool's own entry point in this process
// (cli::OpsDebugMain, of which the binary's main is one line), and every
// kSpawnEvery-th case also through the binary itself: both must give the
// same exit code and output. A spawn of the sanitizer build costs more than
// the op's run, and there are hundreds of cases.
// Floats are judged as ONNX's backend tests judge them (rtol 1e-3, atol 1e-7:
// --mode mixed --relerr 1e-3 --abserr 1e-7), integers and bool exactly.
//
// Cases that cannot pass today are listed, each with its reason, in
// tests/onnx_node_cli_replay_expected.txt as "name <TAB> status <TAB> reason",
// status one of exit1 (the check fails), exit2 (the CLI refuses the case) or
// notrun (no command line can express it). A case must reach exactly its
// listed status (unlisted: exit 0), so a fix that makes a listed case pass
// fails the test until its line is removed.
//
// Environment:
//   OPSCOPE_ONNX_DATA     root of the node tests (default: Debian's folder)
//   OPSCOPE_ONNX_FILTER   regex searched in the test folder name: a subset
//                         (the stale-entry check is off then)
//   OPSCOPE_REPLAY_WRITE  path: also write the list the run found, with
//                         reasons drawn from the CLI's output, for review
//   OPSCOPE_REPLAY_KEEP   set: keep the case folders (the .npy files and each
//                         command line, in cmd.txt) and print where they are
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/apps.h"
#include "graph/onnx/onnx_convert.h"
#include "opscope/npy.h"
#include "opscope/op.h"
#include "tool_test_util.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultRoot = "/usr/share/libonnx-testdata/data/node";
const std::string kOpsDebug = std::string(OPSCOPE_BINARY_DIR) + "/bin/ops-debug";
const std::string kExpectedList = std::string(OPSCOPE_SOURCE_DIR) + "/tests/onnx_node_cli_replay_expected.txt";
// One case in this many is also run as a process (the first one included).
constexpr size_t kSpawnEvery = 40;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : "";
}

std::string Slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// One node test, as a command line or as the reason there is none.
struct Case {
  std::string name;
  std::string op;
  fs::path dir;                   // where its files go
  std::vector<std::string> argv;  // empty: not run
  std::string notrun;             // why not
  // Filled by the run.
  int exit_code = -1;
  std::string out, err;
};

// ---- attributes as --attrs text ----------------------------------------------------

std::string FormatFloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);  // 9 digits: every float32 comes back exactly
  return buf;
}

// Strings that the --attrs splitter would cut go in double quotes.
StatusOr<std::string> FormatString(const std::string& s) {
  if (s.find('"') != std::string::npos) return UnimplementedError("a string attribute holding '\"'");
  if (s.find_first_of(",=[] '") == std::string::npos) return s;
  return "\"" + s + "\"";
}

// The --attrs value of one attribute; Unimplemented where --attrs has no syntax for it.
StatusOr<std::string> AttrText(const AttrValue& v) {
  switch (AttrTypeOf(v)) {
    case AttrType::kInt: return std::to_string(std::get<int64_t>(v));
    case AttrType::kFloat: return FormatFloat(std::get<double>(v));
    case AttrType::kString: return FormatString(std::get<std::string>(v));
    case AttrType::kInts: {
      std::string s;
      for (int64_t x : std::get<std::vector<int64_t>>(v)) s += (s.empty() ? "" : ",") + std::to_string(x);
      return "[" + s + "]";
    }
    case AttrType::kFloats: {
      std::string s;
      for (double x : std::get<std::vector<double>>(v)) s += (s.empty() ? "" : ",") + FormatFloat(x);
      return "[" + s + "]";
    }
    case AttrType::kStrings: {
      std::string s;
      for (const std::string& x : std::get<std::vector<std::string>>(v)) {
        OPSCOPE_ASSIGN_OR_RETURN(std::string q, FormatString(x));
        s += (s.empty() ? "" : ",") + q;
      }
      return "[" + s + "]";
    }
    case AttrType::kTensor: {
      // --attrs reads a list of numbers as a 1-D int64 tensor (all integers) or float32.
      const Tensor& t = std::get<Tensor>(v);
      if (t.rank() != 1 || (t.dtype() != DType::kI64 && t.dtype() != DType::kF32)) {
        return UnimplementedError(std::string("a tensor attribute ") + DTypeName(t.dtype()) + t.shape().ToString() +
                                  " (--attrs makes 1-D int64 or float32 tensors only)");
      }
      std::string s;
      for (int64_t i = 0; i < t.numel(); ++i) {
        std::string x = t.dtype() == DType::kI64 ? std::to_string(t.data<int64_t>()[i]) : FormatFloat(t.data<float>()[i]);
        // A float32 item that reads as an integer would make the tensor int64.
        if (t.dtype() == DType::kF32 && x.find_first_of(".eEn") == std::string::npos) x += ".0";
        s += (s.empty() ? "" : ",") + x;
      }
      return "[" + s + "]";
    }
  }
  return UnimplementedError("an attribute of unknown type");
}

// ---- building a case ----------------------------------------------------------------

std::string NonTensorKind(const onnx::ValueInfoProto& v) {
  if (!v.has_type() || v.type().value_case() == onnx::TypeProto::kTensorType) return "";
  switch (v.type().value_case()) {
    case onnx::TypeProto::kSequenceType: return "sequence";
    case onnx::TypeProto::kMapType: return "map";
    case onnx::TypeProto::kOptionalType: return "optional";
    case onnx::TypeProto::kSparseTensorType: return "sparse tensor";
    default: return "unknown type";
  }
}

std::string JoinPaths(const std::vector<fs::path>& paths) {
  std::string s;
  for (const fs::path& p : paths) s += (s.empty() ? "" : ",") + p.string();
  return s;
}

// Reads a .pb as the type its model declares and writes it as .npy; the
// reason on failure.
StatusOr<DType> PbToNpy(const fs::path& pb, const onnx::ValueInfoProto& declared, const fs::path& npy) {
  OPSCOPE_ASSIGN_OR_RETURN(onnx::TensorProto proto, LoadTensorProtoFile(pb.string()));
  StatusOr<Tensor> t = TensorFromProtoAs(proto, declared.type().tensor_type().elem_type());
  if (!t.ok()) return UnimplementedError("dtype not supported: " + OnnxDataTypeName(proto.data_type()));
  OPSCOPE_RETURN_IF_ERROR(WriteNpy(npy.string(), *t));
  return t->dtype();
}

// Fills c.argv, or c.notrun with the reason no command line expresses the case.
void BuildCase(const onnx::ModelProto& model, const fs::path& test_dir, Case& c) {
  auto notrun = [&c](std::string why) { c.notrun = std::move(why); };
  const onnx::GraphProto& g = model.graph();
  const onnx::NodeProto& node = g.node(0);
  for (const auto* values : {&g.input(), &g.output()}) {
    for (const auto& v : *values) {
      if (std::string kind = NonTensorKind(v); !kind.empty()) return notrun("type not supported: " + kind + " value");
    }
  }
  const fs::path set = test_dir / "test_data_set_0";
  if (!fs::is_directory(set)) return notrun("no test_data_set_0");

  // Graph inputs (initializers aside) are input_K.pb in order; initializers are constants.
  std::map<std::string, fs::path> npy_of;
  std::map<std::string, DType> dtype_of;
  std::map<std::string, const onnx::TensorProto*> initializer;
  for (const auto& init : g.initializer()) initializer[init.name()] = &init;
  int k = 0;
  for (const auto& in : g.input()) {
    if (initializer.count(in.name())) continue;
    const fs::path pb = set / ("input_" + std::to_string(k) + ".pb");
    const fs::path npy = c.dir / ("in" + std::to_string(k) + ".npy");
    ++k;
    if (!fs::exists(pb)) continue;  // an optional graph input left out of the data set
    StatusOr<DType> d = PbToNpy(pb, in, npy);
    if (!d.ok()) return notrun(d.status().message());
    npy_of[in.name()] = npy;
  }
  for (const auto& [name, proto] : initializer) {
    StatusOr<Tensor> t = TensorFromProto(*proto);
    if (!t.ok()) return notrun("dtype not supported: initializer");
    const fs::path npy = c.dir / ("init_" + std::to_string(npy_of.size()) + ".npy");
    if (!WriteNpy(npy.string(), *t).ok()) return notrun("cannot write " + npy.string());
    npy_of[name] = npy;
  }

  // The node's inputs in its order; an omitted one ("") is an empty --inputs entry.
  std::vector<fs::path> inputs;
  int last_given = -1;
  for (int i = 0; i < node.input_size(); ++i) {
    if (!node.input(i).empty() && npy_of.count(node.input(i))) last_given = i;
  }
  for (int i = 0; i <= last_given; ++i) {
    const std::string& name = node.input(i);
    if (!name.empty() && !npy_of.count(name)) return notrun("input " + std::to_string(i) + " has no data");
    inputs.push_back(name.empty() ? fs::path() : npy_of[name]);
  }

  // The node's outputs in its order, from the graph outputs' output_K.pb.
  std::map<std::string, int> graph_output;
  for (int i = 0; i < g.output_size(); ++i) graph_output[g.output(i).name()] = i;
  std::vector<fs::path> expected;
  bool any_float = false;
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string& name = node.output(i);
    auto it = graph_output.find(name);
    if (name.empty() || it == graph_output.end()) {
      if (i == node.output_size() - 1) break;
      return notrun("omitted output before a given one: --expected cannot leave output " + std::to_string(i) + " out");
    }
    const fs::path pb = set / ("output_" + std::to_string(it->second) + ".pb");
    const fs::path npy = c.dir / ("out" + std::to_string(i) + ".npy");
    StatusOr<DType> d = PbToNpy(pb, g.output(it->second), npy);
    if (!d.ok()) return notrun(d.status().message());
    any_float = any_float || IsFloat(*d);
    expected.push_back(npy);
  }

  std::string attrs;
  for (const auto& a : node.attribute()) {
    StatusOr<AttrValue> v = AttrValueFromProto(a);
    if (!v.ok()) return notrun("attribute '" + a.name() + "': " + v.status().message());
    StatusOr<std::string> text = AttrText(*v);
    if (!text.ok()) return notrun("attribute '" + a.name() + "': " + text.status().message());
    attrs += (attrs.empty() ? "" : ",") + a.name() + "=" + *text;
  }

  c.argv = {kOpsDebug, "run", "--op", c.op};
  if (!inputs.empty()) c.argv.insert(c.argv.end(), {"--inputs", JoinPaths(inputs)});
  if (!expected.empty()) c.argv.insert(c.argv.end(), {"--expected", JoinPaths(expected)});
  if (!attrs.empty()) c.argv.insert(c.argv.end(), {"--attrs", attrs});
  // ONNX's backend-test tolerance for floats; integers stay exact under
  // --mode mixed with the default zero bounds (ints and bool only: no flags).
  if (any_float) c.argv.insert(c.argv.end(), {"--mode", "mixed", "--relerr", "1e-3", "--abserr", "1e-7"});
}

// ---- running --------------------------------------------------------------------------

// Runs argv with stdout and stderr into files of `dir`; the exit code (-1: no exit).
int Spawn(const std::vector<std::string>& argv, const fs::path& dir) {
  ::opscope::testing::SpawnArgs spawn(argv);  // without OPSCOPE_PLUGINS: a hermetic run
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, spawn.argv.data(), spawn.env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string FirstLine(const std::string& text, const std::string& containing = "") {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && (containing.empty() || line.find(containing) != std::string::npos)) return line;
  }
  return "";
}

// What a run concluded, less its times and addresses: each output's
// verdict line, the status and the repro line.
std::string Verdicts(const std::string& text) {
  std::istringstream in(text);
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("output ", 0) == 0 || line.rfind("status ", 0) == 0 || line.rfind("repro: ", 0) == 0) {
      kept += line + "\n";
    }
  }
  return kept;
}

std::string StatusOf(const Case& c) {
  if (!c.notrun.empty()) return "notrun";
  return c.exit_code == 0 ? "pass" : "exit" + std::to_string(c.exit_code);
}

// Why a case did not pass, in the list's "category: detail" form.
std::string Reason(const Case& c) {
  if (!c.notrun.empty()) return c.notrun;
  if (c.exit_code == 1) {
    std::string line = FirstLine(c.out, "FAILED");
    if (line.empty()) line = FirstLine(c.out, "status");
    return "mismatch: " + line;
  }
  std::string line = FirstLine(c.err);
  if (line.find("--expected:") != std::string::npos && line.find("file(s) for") != std::string::npos) {
    return "needs --outputs (harness): " + line;
  }
  if (line.find("empty array, nothing to compare") != std::string::npos) {
    return "empty expected output (harness): " + line;
  }
  return "refused: " + line;
}

struct Listed {
  std::string status, reason;
};

std::map<std::string, Listed> ReadList(const std::string& path, std::string* error) {
  std::map<std::string, Listed> list;
  std::ifstream f(path);
  if (!f) {
    *error = path + ": cannot be read";
    return list;
  }
  int n = 0;
  for (std::string line; std::getline(f, line);) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream s(line);
    for (std::string field; std::getline(s, field, '\t');) fields.push_back(field);
    if (fields.size() != 3 || (fields[1] != "exit1" && fields[1] != "exit2" && fields[1] != "notrun")) {
      *error = path + ":" + std::to_string(n) + ": expected 'name<TAB>exit1|exit2|notrun<TAB>reason'";
      return list;
    }
    list[fields[0]] = Listed{fields[1], fields[2]};
  }
  return list;
}

TEST(OnnxNodeCliReplay, EveryBuiltinOpCasePassesThroughOpsDebugOrIsListed) {
  const std::string root = Env("OPSCOPE_ONNX_DATA").empty() ? kDefaultRoot : Env("OPSCOPE_ONNX_DATA");
  ASSERT_TRUE(fs::is_directory(root)) << "OPSCOPE_ONNX_DATA: '" << root
                                      << "' is not a folder of ONNX node tests (install libonnx-testdata)";
  ASSERT_EQ(::access(kOpsDebug.c_str(), X_OK), 0) << kOpsDebug << " is missing: build the ops-debug target";
  const std::string filter_text = Env("OPSCOPE_ONNX_FILTER");
  std::regex filter(filter_text.empty() ? ".*" : filter_text);
  std::string list_error;
  const std::map<std::string, Listed> listed = ReadList(kExpectedList, &list_error);
  ASSERT_TRUE(list_error.empty()) << list_error;

  std::string tmpl = (fs::temp_directory_path() / "opscope_replay_XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path work(tmpl);
  const bool keep = !Env("OPSCOPE_REPLAY_KEEP").empty();

  // Single-node tests whose op the library has, under the op's own name.
  std::vector<Case> cases;
  int other = 0;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root)) {
    if (e.is_directory() && fs::exists(e.path() / "model.onnx") &&
        std::regex_search(e.path().filename().string(), filter)) {
      dirs.push_back(e.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    StatusOr<onnx::ModelProto> model = LoadModel((dir / "model.onnx").string());
    ASSERT_TRUE(model.ok()) << dir << ": " << model.status().ToString();
    const auto& g = model->graph();
    if (g.node_size() != 1 || !IsDefaultOnnxDomain(g.node(0).domain()) ||
        !OpRegistry::Global().Find(g.node(0).op_type())) {
      ++other;
      continue;
    }
    Case c;
    c.name = dir.filename().string();
    c.op = g.node(0).op_type();
    c.dir = work / c.name;
    fs::create_directories(c.dir);
    BuildCase(*model, dir, c);
    cases.push_back(std::move(c));
  }

  const auto start = std::chrono::steady_clock::now();
  // What a spawned plugin search would not see must not change this process either.
  ::unsetenv("OPSCOPE_PLUGINS");
  int spawned = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    Case& c = cases[i];
    if (c.argv.empty()) continue;
    std::vector<const char*> argv;
    for (const std::string& a : c.argv) argv.push_back(a.c_str());
    std::ostringstream out, err;
    c.exit_code = cli::OpsDebugMain(static_cast<int>(argv.size()), argv.data(), out, err);
    c.out = out.str();
    c.err = err.str();
    if (i % kSpawnEvery != 0) continue;
    ++spawned;
    const int code = Spawn(c.argv, c.dir);
    EXPECT_EQ(code, c.exit_code) << c.name << ": the binary and OpsDebugMain disagree";
    EXPECT_EQ(Verdicts(Slurp(c.dir / "stdout")), Verdicts(c.out)) << c.name;
    EXPECT_EQ(Slurp(c.dir / "stderr"), c.err) << c.name;
  }
  EXPECT_GE(spawned, cases.size() >= kSpawnEvery ? 2 : 1);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::map<std::string, int> by_status;
  std::vector<std::string> wrong;
  std::map<std::string, bool> seen;
  for (const Case& c : cases) {
    seen[c.name] = true;
    if (keep && !c.argv.empty()) {
      std::ofstream cmd(c.dir / "cmd.txt");
      for (const std::string& a : c.argv) cmd << "'" << a << "' ";
      cmd << "\n";
    }
    const std::string got = StatusOf(c);
    ++by_status[got];
    auto it = listed.find(c.name);
    const std::string want = it == listed.end() ? "pass" : it->second.status;
    if (got == want) continue;
    std::string line = c.name + ": expected " + want;
    if (it != listed.end()) line += " (" + it->second.reason + ")";
    line += ", got " + got;
    if (got != "pass") line += ": " + Reason(c);
    else line += ": remove its line from the list";
    wrong.push_back(line);
  }
  if (filter_text.empty()) {
    for (const auto& [name, l] : listed) {
      if (!seen.count(name)) wrong.push_back(name + ": listed but no such built-in-op case: remove its line");
    }
  }

  if (const std::string out = Env("OPSCOPE_REPLAY_WRITE"); !out.empty()) {
    std::ofstream f(out);
    f << "# ONNX node tests that do not pass through `ops-debug run` (tests/onnx_node_cli_replay_test.cc).\n"
      << "# name<TAB>status<TAB>reason; status: exit1 (mismatch), exit2 (refused), notrun (no command line).\n";
    for (const Case& c : cases) {
      if (StatusOf(c) != "pass") f << c.name << "\t" << StatusOf(c) << "\t" << Reason(c) << "\n";
    }
  }

  std::cout << "ONNX node tests through ops-debug run: " << cases.size() << " cases with a built-in op ("
            << other << " other tests: several nodes, another domain or an op not built in), " << by_status["pass"]
            << " passed";
  for (const auto& [status, n] : by_status) {
    if (status != "pass") std::cout << ", " << n << " " << status;
  }
  std::cout << "; in process, " << spawned << " also through the binary, " << FormatFloat(seconds) << " s\n";
  if (keep) {
    std::cout << "case folders kept in " << work.string() << "\n";
  } else {
    std::error_code ec;
    fs::remove_all(work, ec);
  }
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " case(s) not at their listed status:\n" << [&] {
    std::string s;
    for (const std::string& w : wrong) s += "  " + w + "\n";
    return s;
  }();
  if (filter_text.empty()) {
    EXPECT_GE(by_status["pass"], 300) << "fewer than 300 cases passed: is ops-debug broken?";
  }
}

}  // namespace
}  // namespace opscope
