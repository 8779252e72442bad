// Runs ONNX's own node tests (libonnx-testdata: one folder per test, a
// model.onnx and test_data_set_N/{input,output}_K.pb) through the dispatcher,
// both with the "cpu" kernels and with the reference kernels, and compares
// with ONNX's expected outputs as ONNX's backend tests do
// (numpy.testing.assert_allclose, rtol=1e-3, atol=1e-7; exact for integers).
//
// Environment:
//   OPSCOPE_ONNX_DATA    root holding the node/ folder's tests (default: the
//                        Debian libonnx-testdata node folder)
//   OPSCOPE_ONNX_FILTER  regex searched in the test folder name: run a subset
//   OPSCOPE_ONNX_VERBOSE set: name each test on stderr before it runs (finds
//                        the one that hangs or crashes)
//   OPSCOPE_ONNX_EXPECTED the expected-status list (default:
//                        tests/onnx_node_expected.txt)
//   OPSCOPE_UPDATE_EXPECTED=1  rewrite that list from this run (review the diff)
//
// Single-node tests whose op is built in are the conformance count. Graphs of
// several nodes (the *_expanded function bodies) run too when all their ops are
// built in, node after node, and are counted apart.
//
// Every test folder's outcome (pass, or skip with its reason) is pinned in the
// expected-status list: a test that does not reach its listed status fails the
// suite by name, so a kernel that starts returning Unimplemented for some
// inputs turns a "pass" into a failure rather than into one more skip.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "capture/dispatcher.h"
#include "expected_status.h"
#include "graph/onnx/onnx_adapter.h"
#include "graph/onnx/onnx_convert.h"
#include "opscope/op.h"

namespace opscope {
namespace {

namespace fs = std::filesystem;

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;
constexpr const char* kDefaultRoot = "/usr/share/libonnx-testdata/data/node";

enum class Verdict { kPass, kFail, kSkip };

struct Outcome {
  Verdict verdict = Verdict::kPass;
  std::string skip_reason;            // grouped and counted in the summary
  std::vector<std::string> failures;  // one line each
};

Outcome Skip(std::string reason) { return Outcome{Verdict::kSkip, std::move(reason), {}}; }
Outcome Fail(std::string line) { return Outcome{Verdict::kFail, "", {std::move(line)}}; }

std::string Env(const char* name, const std::string& fallback = "") {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string IndexString(const Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.rank());
  for (int i = shape.rank() - 1; i >= 0; --i) {
    int64_t d = shape[i];
    idx[i] = d ? flat % d : 0;
    flat = d ? flat / d : 0;
  }
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? "," : "") + std::to_string(idx[i]);
  return s + "]";
}

std::string FormatValue(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

// ONNX's expected values are rounded to the output dtype; the reference's
// float64 values are rounded the same way first, so the tolerance judges the
// math and not the rounding (bfloat16's step is wider than rtol).
double RoundTo(DType dtype, double v) {
  switch (dtype) {
    case DType::kF32: return static_cast<float>(v);
    case DType::kF16: return static_cast<float>(Half(static_cast<float>(v)));
    case DType::kBF16: return static_cast<float>(BFloat16(static_cast<float>(v)));
    default: return v;
  }
}

int64_t IntAt(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kI64) return t.data<int64_t>()[i];  // beyond 2^53 doubles lose bits
  if (t.dtype() == DType::kU64) return static_cast<int64_t>(t.data<uint64_t>()[i]);  // the same bits: equality holds
  return static_cast<int64_t>(t.FlatGetAsDouble(i));
}

// Empty string: matches. Otherwise the one-line reason.
std::string Compare(const Tensor& expected, const Tensor& actual_in, bool reference) {
  const DType want_dtype = reference ? ReferenceDType(expected.dtype()) : expected.dtype();
  if (actual_in.dtype() != want_dtype) {
    return std::string("dtype ") + DTypeName(actual_in.dtype()) + ", expected " + DTypeName(want_dtype);
  }
  if (actual_in.shape() != expected.shape()) {
    return "shape " + actual_in.shape().ToString() + ", expected " + expected.shape().ToString();
  }
  auto host = ToHost(actual_in);
  if (!host.ok()) return "cannot read output: " + host.status().ToString();
  auto actual = host->Contiguous();
  if (!actual.ok()) return "cannot read output: " + actual.status().ToString();
  const int64_t n = expected.numel();
  int64_t bad = 0, first_bad = -1;
  double max_err = 0;
  double first_e = 0, first_a = 0;
  const bool exact = !IsFloat(expected.dtype());
  for (int64_t i = 0; i < n; ++i) {
    double e, a;
    bool ok;
    if (exact) {
      int64_t ei = IntAt(expected, i), ai = IntAt(*actual, i);
      ok = ei == ai;
      e = static_cast<double>(ei);
      a = static_cast<double>(ai);
    } else {
      e = expected.FlatGetAsDouble(i);
      a = actual->FlatGetAsDouble(i);
      if (reference) a = RoundTo(expected.dtype(), a);
      if (std::isnan(e) || std::isnan(a)) {
        ok = std::isnan(e) && std::isnan(a);
      } else if (std::isinf(e) || std::isinf(a)) {
        ok = e == a;
      } else {
        ok = std::fabs(a - e) <= kAtol + kRtol * std::fabs(e);
      }
    }
    if (!std::isnan(e) && !std::isnan(a)) max_err = std::max(max_err, std::fabs(a - e));
    if (!ok) {
      if (first_bad < 0) {
        first_bad = i;
        first_e = e;
        first_a = a;
      }
      ++bad;
    }
  }
  if (bad == 0) return "";
  return "first bad " + IndexString(expected.shape(), first_bad) + " expected " + FormatValue(first_e) +
         " actual " + FormatValue(first_a) + ", max abs err " + FormatValue(max_err) + " (" +
         std::to_string(bad) + "/" + std::to_string(n) + " mismatched)";
}

// "" for a tensor type; otherwise what the value is (its .pb is no TensorProto).
std::string NonTensorKind(const onnx::ValueInfoProto& v) {
  if (!v.has_type()) return "";
  switch (v.type().value_case()) {
    case onnx::TypeProto::kTensorType: return "";
    case onnx::TypeProto::kSequenceType: return "sequence";
    case onnx::TypeProto::kMapType: return "map";
    case onnx::TypeProto::kOptionalType: return "optional";
    case onnx::TypeProto::kSparseTensorType: return "sparse tensor";
    default: return "unknown type";
  }
}

// Reads input_K.pb / output_K.pb for K = 0, 1, ... until one is missing.
// Unimplemented (a dtype opscope lacks) comes back as is, for a skip.
// `declared` holds the model's element type of each value: bfloat16 that
// ONNX's generator stored as uint16 bits is read as bfloat16 (exact for
// inputs); as expected outputs those bits were truncated, not rounded, so
// they are no oracle for a cast to bfloat16 and come back as a skip.
StatusOr<std::vector<Tensor>> ReadNumbered(const fs::path& dir, const std::string& prefix,
                                           const std::vector<int32_t>& declared) {
  std::vector<Tensor> out;
  for (int k = 0;; ++k) {
    fs::path p = dir / (prefix + std::to_string(k) + ".pb");
    if (!fs::exists(p)) break;
    OPSCOPE_ASSIGN_OR_RETURN(onnx::TensorProto proto, LoadTensorProtoFile(p.string()));
    if (!DTypeFromOnnx(proto.data_type()).ok()) {
      return UnimplementedError("dtype not supported: " + OnnxDataTypeName(proto.data_type()));
    }
    const int32_t want = k < static_cast<int>(declared.size()) ? declared[k] : proto.data_type();
    if (want == onnx::TensorProto::BFLOAT16 && proto.data_type() == onnx::TensorProto::UINT16 &&
        prefix == "output_") {
      return UnimplementedError("data: bfloat16 expected values stored as uint16 bits (truncated by ONNX's generator)");
    }
    StatusOr<Tensor> t = TensorFromProtoAs(proto, want);
    if (!t.ok()) {
      if (t.status().code() == StatusCode::kUnimplemented) {
        return UnimplementedError("data not supported: " + t.status().message());
      }
      return std::move(t).status().WithContext(p.string());
    }
    out.push_back(std::move(t).value());
  }
  return out;
}

// Evaluates the graph node by node, through the dispatcher. `device` nullptr
// runs the reference kernels; their float64 outputs are rounded back to the
// op's declared dtype before a later node reads them, as the kernel path would.
class GraphRunner {
 public:
  GraphRunner(const onnx::ModelProto& model, Device* device) : model_(model), device_(device) {}

  // Fills `values` (graph inputs and initializers on entry) with every node
  // output. A skip comes back as Unimplemented, a failure as any other error.
  Status Run(std::map<std::string, Tensor>& values, std::map<std::string, Tensor>& outputs) {
    const auto& g = model_.graph();
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto& node = g.node(i);
      NodeEnv env;
      env.opset = OpsetVersion(model_, node.domain());
      for (const auto& name : node.input()) {
        auto it = values.find(name);
        if (it == values.end()) continue;
        env.descs[name] = TensorDesc{it->second.dtype(), it->second.shape()};
        env.values[name] = it->second;
      }
      StatusOr<AdaptedNode> adapted = AdaptOnnxNode(node, env);
      if (!adapted.ok()) {
        Status st = std::move(adapted).status();
        if (st.code() == StatusCode::kUnimplemented) return UnimplementedError("conversion: " + st.message());
        return st.WithContext("node " + std::to_string(i) + " (" + node.op_type() + ") conversion");
      }
      const onnx::NodeProto& n = adapted->node;
      const OpSchema* schema = OpRegistry::Global().Find(n.op_type());
      if (!schema) return UnimplementedError("op not built in: " + n.op_type());
      StatusOr<Attrs> attrs = AttrsFromNode(n, *schema);
      if (!attrs.ok()) {
        Status st = std::move(attrs).status();
        if (st.code() == StatusCode::kUnimplemented) return UnimplementedError("attribute: " + st.message());
        return st;
      }
      std::vector<Tensor> inputs;
      for (const auto& name : n.input()) {
        if (name.empty()) {
          inputs.emplace_back();
          continue;
        }
        auto it = values.find(name);
        if (it == values.end()) {
          auto c = adapted->constants.find(name);
          if (c == adapted->constants.end()) {
            return InternalError("node " + std::to_string(i) + " (" + n.op_type() + ") input '" + name +
                                 "' has no value");
          }
          inputs.push_back(c->second);
        } else {
          inputs.push_back(it->second);
        }
      }
      while (!inputs.empty() && !inputs.back().defined()) inputs.pop_back();  // trailing omitted inputs

      RunOptions opts;
      opts.device = device_;
      opts.num_outputs = n.output_size();
      StatusOr<OpRun> run = Dispatcher::Global().Run(*schema, inputs, *attrs, opts);
      if (!run.ok()) {
        Status st = std::move(run).status();
        if (st.code() == StatusCode::kUnimplemented) return UnimplementedError("op unimplemented: " + st.message());
        return st.WithContext(std::string(device_ ? "kernel" : "reference") + " of node " + std::to_string(i) +
                              " (" + n.op_type() + " " + attrs->ToString() + ")");
      }
      std::vector<TensorDesc> declared;
      if (!device_ && g.node_size() > 1) {
        Attrs a = *attrs;
        auto d = Dispatcher::Global().InferOutputs(*schema, inputs, a, n.output_size());
        if (!d.ok()) return d.status();
        declared = *d;
      }
      for (int k = 0; k < n.output_size() && k < static_cast<int>(run->outputs.size()); ++k) {
        const std::string& name = n.output(k);
        if (name.empty() || !run->outputs[k].defined()) continue;
        outputs[name] = run->outputs[k];
        Tensor feed = run->outputs[k];
        if (!declared.empty() && feed.dtype() != declared[k].dtype) {
          OPSCOPE_ASSIGN_OR_RETURN(Tensor host, ToHost(feed));
          OPSCOPE_ASSIGN_OR_RETURN(feed, host.CastTo(declared[k].dtype));
        }
        values[name] = feed;
      }
    }
    return Status::Ok();
  }

 private:
  const onnx::ModelProto& model_;
  Device* device_;
};

// `is_multi` tells the caller which tally the outcome belongs to.
Outcome RunOneTest(const fs::path& dir, Device* cpu, bool* is_multi) {
  const std::string test = dir.filename().string();
  StatusOr<onnx::ModelProto> model = LoadModel((dir / "model.onnx").string());
  *is_multi = false;
  if (!model.ok()) return Fail(test + ": " + model.status().ToString());
  const auto& g = model->graph();
  *is_multi = g.node_size() > 1;
  if (g.node_size() == 0) return Skip("graph has no nodes");
  for (const auto& node : g.node()) {
    if (!IsDefaultOnnxDomain(node.domain())) return Skip("op not built in: " + node.domain() + "." + node.op_type());
    std::string op = AdaptedOpType(node, OpsetVersion(*model, node.domain()));
    if (!OpRegistry::Global().Find(op)) return Skip("op not built in: " + op);
  }

  for (const auto* values : {&g.input(), &g.output()}) {
    for (const auto& v : *values) {
      std::string kind = NonTensorKind(v);
      if (!kind.empty()) return Skip("type not supported: " + kind + " value '" + v.name() + "'");
    }
  }

  std::vector<fs::path> set_dirs;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) set_dirs.push_back(e.path());
  }
  std::sort(set_dirs.begin(), set_dirs.end());
  if (set_dirs.empty()) return Fail(test + ": no test_data_set_* folder");

  std::map<std::string, Tensor> initializers;
  for (const auto& init : g.initializer()) {
    StatusOr<Tensor> t = TensorFromProto(init);
    if (!t.ok()) {
      if (t.status().code() == StatusCode::kUnimplemented) return Skip("dtype not supported: initializer");
      return Fail(test + ": initializer: " + t.status().ToString());
    }
    initializers[init.name()] = *t;
  }
  std::vector<std::string> graph_inputs;
  std::vector<int32_t> graph_input_types, graph_output_types;
  for (const auto& in : g.input()) {
    if (initializers.count(in.name())) continue;
    graph_inputs.push_back(in.name());
    graph_input_types.push_back(in.type().tensor_type().elem_type());
  }
  for (const auto& out : g.output()) graph_output_types.push_back(out.type().tensor_type().elem_type());

  Outcome outcome;
  for (const fs::path& set_dir : set_dirs) {
    const std::string set_name = set_dir.filename().string();
    StatusOr<std::vector<Tensor>> inputs = ReadNumbered(set_dir, "input_", graph_input_types);
    StatusOr<std::vector<Tensor>> expected = inputs.ok() ? ReadNumbered(set_dir, "output_", graph_output_types) : inputs;
    if (!expected.ok()) {
      if (expected.status().code() == StatusCode::kUnimplemented) return Skip(expected.status().message());
      return Fail(test + " " + set_name + ": " + expected.status().ToString());
    }
    if (inputs->size() > graph_inputs.size() || expected->size() != static_cast<size_t>(g.output_size())) {
      return Fail(test + " " + set_name + ": " + std::to_string(inputs->size()) + " inputs and " +
                  std::to_string(expected->size()) + " outputs in the data set, the graph has " +
                  std::to_string(graph_inputs.size()) + " and " + std::to_string(g.output_size()));
    }
    for (Device* device : {cpu, static_cast<Device*>(nullptr)}) {
      const char* path = device ? "kernel" : "reference";
      std::map<std::string, Tensor> values = initializers;
      for (size_t k = 0; k < inputs->size(); ++k) values[graph_inputs[k]] = (*inputs)[k];
      std::map<std::string, Tensor> produced;
      Status st = GraphRunner(*model, device).Run(values, produced);
      if (!st.ok()) {
        if (st.code() == StatusCode::kUnimplemented) return Skip(st.message());
        outcome.verdict = Verdict::kFail;
        outcome.failures.push_back(test + " " + set_name + " " + path + ": " + st.ToString());
        continue;
      }
      for (int k = 0; k < g.output_size(); ++k) {
        const std::string& name = g.output(k).name();
        auto it = produced.find(name);
        std::string why = it == produced.end() ? "not produced" : Compare((*expected)[k], it->second, !device);
        if (!why.empty()) {
          outcome.verdict = Verdict::kFail;
          outcome.failures.push_back(test + " " + set_name + " output " + std::to_string(k) + " '" + name + "' " +
                                     path + ": " + why);
        }
      }
    }
  }
  return outcome;
}

struct Tally {
  int run = 0, passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int> skip_reasons;
  std::vector<std::string> failures;

  void Add(const Outcome& o) {
    if (o.verdict == Verdict::kSkip) {
      ++skipped;
      ++skip_reasons[o.skip_reason];
      return;
    }
    ++run;
    if (o.verdict == Verdict::kPass) {
      ++passed;
    } else {
      ++failed;
      failures.insert(failures.end(), o.failures.begin(), o.failures.end());
    }
  }

  void Print(std::ostream& os, const std::string& title) const {
    os << title << ": " << run << " run, " << passed << " passed, " << failed << " failed, " << skipped
       << " skipped\n";
    // Reasons grouped by their category (the text before the first ':'), largest first.
    std::map<std::string, std::vector<std::pair<std::string, int>>> groups;
    std::map<std::string, int> group_total;
    for (const auto& [reason, count] : skip_reasons) {
      std::string cat = reason.substr(0, reason.find(':'));
      groups[cat].push_back({reason, count});
      group_total[cat] += count;
    }
    std::vector<std::pair<int, std::string>> order;
    for (const auto& [cat, total] : group_total) order.push_back({-total, cat});
    std::sort(order.begin(), order.end());
    for (const auto& [neg, cat] : order) {
      os << "  skipped " << -neg << ": " << cat << "\n";
      auto items = groups.at(cat);
      std::sort(items.begin(), items.end(), [](auto& a, auto& b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
      for (const auto& [reason, count] : items) {
        if (reason != cat) os << "    " << count << "  " << reason << "\n";
      }
    }
    if (!failures.empty()) {
      os << "  failures:\n";
      for (const auto& f : failures) os << "    " << f << "\n";
    }
  }
};

TEST(OnnxNodeConformance, BuiltinOpsMatchOnnxNodeTests) {
  const std::string root = Env("OPSCOPE_ONNX_DATA", kDefaultRoot);
  const std::string filter_text = Env("OPSCOPE_ONNX_FILTER");
  if (!fs::is_directory(root)) {
    FAIL() << "OPSCOPE_ONNX_DATA: '" << root << "' is not a folder of ONNX node tests "
           << "(install libonnx-testdata or point the variable at one)";
  }
  std::regex filter;
  try {
    filter = std::regex(filter_text.empty() ? ".*" : filter_text);
  } catch (const std::regex_error& e) {
    FAIL() << "OPSCOPE_ONNX_FILTER: '" << filter_text << "' is not a valid regex: " << e.what();
  }
  auto cpu = GetDevice("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();

  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root)) {
    if (!e.is_directory() || !fs::exists(e.path() / "model.onnx")) continue;
    if (std::regex_search(e.path().filename().string(), filter)) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());

  const std::string expected_path =
      Env("OPSCOPE_ONNX_EXPECTED", std::string(OPSCOPE_SOURCE_DIR) + "/tests/onnx_node_expected.txt");
  testing::ExpectedList expected;
  std::string load_error;
  const bool loaded = expected.Load(expected_path, &load_error);
  const bool update = testing::UpdateExpectedRequested();
  if (!loaded && !update) FAIL() << load_error;

  const bool verbose = !Env("OPSCOPE_ONNX_VERBOSE").empty();
  Tally single, multi;
  std::map<std::string, testing::CaseOutcome> observed;
  for (const fs::path& dir : dirs) {
    if (verbose) std::cerr << "running " << dir.filename().string() << std::endl;
    bool is_multi = false;
    Outcome o = RunOneTest(dir, *cpu, &is_multi);
    (is_multi ? multi : single).Add(o);
    testing::CaseOutcome& c = observed[dir.filename().string()];
    if (o.verdict == Verdict::kPass) {
      c.status = "pass";
    } else if (o.verdict == Verdict::kSkip) {
      c.status = "skip";
      c.reason = o.skip_reason;
      std::replace(c.reason.begin(), c.reason.end(), '\n', ' ');
    } else {
      c.status = "fail";
      c.reason = o.failures.empty() ? "" : o.failures.front();
    }
  }

  std::ostringstream summary;
  single.Print(summary, "ONNX node tests");
  multi.Print(summary, "ONNX multi-node graphs (expanded functions, all ops built in)");
  std::cout << summary.str() << std::flush;
  RecordProperty("run", single.run);
  RecordProperty("passed", single.passed);
  RecordProperty("failed", single.failed);
  RecordProperty("skipped", single.skipped);

  EXPECT_EQ(single.failed + multi.failed, 0) << "failures are listed above";
  if (update) {
    if (!filter_text.empty()) FAIL() << "OPSCOPE_UPDATE_EXPECTED with OPSCOPE_ONNX_FILTER would drop every other test";
    const std::string error = expected.Write(observed, "# Expected status of every ONNX node test (tests/onnx_node_conformance_test.cc).\n");
    ASSERT_EQ(error, "");
    std::cout << "wrote " << expected_path << " (" << observed.size() << " tests): review the diff\n";
    return;
  }
  for (const std::string& line : expected.Differences(observed, filter_text.empty())) ADD_FAILURE() << line;
}

}  // namespace
}  // namespace opscope
