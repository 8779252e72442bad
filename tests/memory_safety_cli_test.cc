// The real tools on inputs that once crashed them (issue 11, "Memory
// safety") or that they silently accepted ("Loose acceptance"): each must
// exit 2 with one line naming the flag, file or field and what is wrong. The
// models and files are written here (the onnx protobuf, raw .npy bytes).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "tool_test_util.h"

namespace opscope {
namespace {

using namespace ::opscope::testing;  // tool_test_util.h

const std::string kBin = std::string(OPSCOPE_BINARY_DIR) + "/bin/";

// A usage error of `tool` naming every one of `parts`.
void ExpectOneLineError(const ToolResult& r, const std::string& tool, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) ::opscope::testing::ExpectUsageError(r, p, {.tool = tool});
}

void AddInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
             const std::vector<int64_t>& dims) {
  auto* t = list->Add();
  t->set_name(name);
  auto* tt = t->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

// x [dims] -> Relu -> y.
onnx::ModelProto ReluModel(const std::vector<int64_t>& dims) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("bad");
  AddInfo(g->mutable_input(), "x", dims);
  AddInfo(g->mutable_output(), "y", dims);
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->set_name("/Relu");
  n->add_input("x");
  n->add_output("y");
  return m;
}

std::string Write(const TempDir& dir, const std::string& name, const onnx::ModelProto& m) {
  const std::string path = (dir.path() / name).string();
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return path;
}

ToolResult InspectorRun(const TempDir& dir, const std::string& model) {
  return Shell(kBin + "inspector-cli run " + model + " --output-dir " + (dir.path() / "run").string());
}

TEST(BadInputCli, OpsDebugInputShapeWhoseBytesOverflow) {
  ToolResult r = Shell(kBin + "ops-debug run --op Relu --input-shapes '[4611686018427387904]'");
  ExpectOneLineError(r, "ops-debug", {"--input-shapes", "4611686018427387904"});
}

TEST(BadInputCli, InspectorGraphInputWhoseBytesOverflow) {
  TempDir dir;
  ToolResult r = InspectorRun(dir, Write(dir, "huge.onnx", ReluModel({int64_t{1} << 62})));
  ExpectOneLineError(r, "inspector-cli", {"'x'", "4611686018427387904"});
}

TEST(BadInputCli, InspectorGraphNamesListedTwice) {
  TempDir dir;
  onnx::ModelProto in = ReluModel({64, 64}), out = ReluModel({64, 64});
  *in.mutable_graph()->add_input() = in.graph().input(0);
  *out.mutable_graph()->add_output() = out.graph().output(0);
  ExpectOneLineError(InspectorRun(dir, Write(dir, "dup_in.onnx", in)), "inspector-cli",
                     {"dup_in.onnx", "graph input 'x'"});
  ExpectOneLineError(InspectorRun(dir, Write(dir, "dup_out.onnx", out)), "inspector-cli",
                     {"dup_out.onnx", "graph output 'y'"});
}

TEST(BadInputCli, InspectorMaxPoolWithZeroStride) {
  TempDir dir;
  onnx::ModelProto m = ReluModel({1, 1, 8, 8});
  onnx::NodeProto* n = m.mutable_graph()->mutable_node(0);
  n->set_op_type("MaxPool");
  n->set_name("/pool");
  for (const char* attr : {"kernel_shape", "strides"}) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(std::string(attr) == "strides" ? 0 : 2);
    a->add_ints(2);
  }
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  ExpectOneLineError(InspectorRun(dir, Write(dir, "pool.onnx", m)), "inspector-cli",
                     {"pool.onnx", "/pool", "strides"});
}

// ------------------------------------------------------------ loose acceptance

TEST(LooseAcceptance, ModelFieldsOutsideTheirRangeAreRefused) {
  struct Case {
    std::string name;
    std::function<void(onnx::ModelProto&)> edit;
    std::vector<std::string> said;
  };
  const std::vector<Case> cases = {
      {"ir0", [](onnx::ModelProto& m) { m.set_ir_version(0); }, {"ir_version 0", "unset"}},
      {"ir99", [](onnx::ModelProto& m) { m.set_ir_version(99); }, {"ir_version 99"}},
      {"opset_minus1", [](onnx::ModelProto& m) { m.mutable_opset_import(0)->set_version(-1); },
       {"opset_import of domain 'ai.onnx'", "version -1"}},
      {"opset99", [](onnx::ModelProto& m) { m.mutable_opset_import(0)->set_version(99); }, {"version 99", "knows 1 to"}},
      {"opset2e62", [](onnx::ModelProto& m) { m.mutable_opset_import(0)->set_version(int64_t{1} << 62); },
       {"version 4611686018427387904"}},
      {"opset_twice", [](onnx::ModelProto& m) { m.add_opset_import()->set_version(13); }, {"listed twice"}},
      {"no_outputs", [](onnx::ModelProto& m) { m.mutable_graph()->clear_output(); }, {"graph 'bad' has no outputs"}},
      {"init_twice",
       [](onnx::ModelProto& m) {
         for (int i = 0; i < 2; ++i) {
           onnx::TensorProto* t = m.mutable_graph()->add_initializer();
           t->set_name("w");
           t->set_data_type(onnx::TensorProto::FLOAT);
           t->add_dims(1);
           t->add_float_data(1.0f);
         }
       },
       {"initializer 'w' is listed twice"}},
      {"attr_twice",
       [](onnx::ModelProto& m) {
         onnx::NodeProto* n = m.mutable_graph()->mutable_node(0);
         n->set_op_type("LeakyRelu");
         for (float alpha : {0.1f, 0.2f}) {
           auto* a = n->add_attribute();
           a->set_name("alpha");
           a->set_type(onnx::AttributeProto::FLOAT);
           a->set_f(alpha);
         }
       },
       {"node '/Relu' (LeakyRelu): attribute alpha is given twice"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    onnx::ModelProto m = ReluModel({4, 4});
    c.edit(m);
    std::vector<std::string> said = c.said;
    said.push_back(c.name + ".onnx");
    ExpectOneLineError(InspectorRun(dir, Write(dir, c.name + ".onnx", m)), "inspector-cli", said);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "run" / "graph.json"));
  }
}

TEST(LooseAcceptance, FlagValuesOutsideTheirRangeAreRefused) {
  const std::string relu = kBin + "ops-debug run --op Relu --input-shapes '[4]' ";
  // CLI11 alone read -1 and 2^64 as 2^64-1.
  ExpectOneLineError(Shell(relu + "--seed -1"), "ops-debug", {"--seed", "'-1' is not a seed"});
  ExpectOneLineError(Shell(relu + "--seed 18446744073709551616"), "ops-debug", {"--seed", "beyond 2^64-1"});
  ExpectOneLineError(Shell(kBin + "inspector-cli run x.onnx --output-dir d --seed -1"), "inspector-cli", {"--seed"});
  EXPECT_EQ(Shell(relu + "--seed 18446744073709551615").exit_code, 0);
  // One cpu device: cpu:1 opened a second.
  ExpectOneLineError(Shell(relu + "--device cpu:1"), "ops-debug", {"--device", "cpu:1", "only cpu:0"});
  ExpectOneLineError(Shell(relu + "--device cpu:x"), "ops-debug", {"--device", "cpu:x"});
  EXPECT_EQ(Shell(relu + "--device cpu:0").exit_code, 0);
  // Inside brackets only ',' separates: [0x10] was [0,10].
  ExpectOneLineError(Shell(kBin + "ops-debug run --op Relu --input-shapes '[0x10]'"), "ops-debug",
                     {"--input-shapes", "'0x10' is not an integer"});
  ExpectOneLineError(Shell(kBin + "ops-debug run --op Relu --input-shapes '[-0]'"), "ops-debug", {"dims must be >= 0"});
  EXPECT_EQ(Shell(kBin + "ops-debug run --op Relu --input-shapes 0x10").exit_code, 0);  // the 2x3x4 form: [0,10]
  // A float literal beyond float32 became inf.
  ExpectOneLineError(Shell(kBin + "ops-debug run --op LeakyRelu --input-shapes '[4]' --attrs alpha=1e999"), "ops-debug",
                     {"--attrs", "alpha=1e999", "float32's range"});
  EXPECT_EQ(Shell(kBin + "ops-debug run --op LeakyRelu --input-shapes '[4]' --attrs alpha=-inf").exit_code, 0);
  ExpectOneLineError(Shell(relu + "--tunables block=0"), "ops-debug", {"--tunables", "0 is not one of them"});
  ExpectOneLineError(Shell(relu + "--tunables block=-1"), "ops-debug", {"--tunables", "-1 is not one of them"});
}

// numpy reads a header's shape only as a tuple: [4] and (4) are refused by np.load.
TEST(LooseAcceptance, NpyShapeThatIsNotATupleIsRefused) {
  TempDir dir;
  for (const std::string shape : {"[4]", "(4)"}) {
    SCOPED_TRACE(shape);
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
    const uint16_t len = static_cast<uint16_t>(header.size());
    const std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + char(len & 0xff) + char(len >> 8) + header +
                              std::string(16, '\0');
    const std::string path = (dir.path() / "x.npy").string();
    std::ofstream(path, std::ios::binary) << bytes;
    ExpectOneLineError(Shell(kBin + "ops-debug run --op Relu --inputs " + path), "ops-debug",
                       {"x.npy", "'shape' is not a tuple"});
  }
}

// A node name with an escape sequence that retitles the terminal, a bell and
// a backspace: what the tools print shows them as \xNN, never as themselves.
TEST(LooseAcceptance, ControlCharactersInNamesDoNotReachTheTerminal) {
  TempDir dir;
  onnx::ModelProto m = ReluModel({4, 4});
  m.mutable_graph()->mutable_node(0)->set_name("re\x1b]0;owned\x07lu\b");
  ASSERT_EQ(InspectorRun(dir, Write(dir, "ctrl.onnx", m)).exit_code, 0);
  ToolResult r = Shell(kBin + "inspector-cli summary " + (dir.path() / "run").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "re\\x1b]0;owned\\x07lu\\x08 (Relu)")) << r.out;
  for (char c : {'\x1b', '\x07', '\b'}) EXPECT_EQ(r.out.find(c), std::string::npos) << int(c);
  // And in an error that names what was asked for (a screen-clearing node name).
  ToolResult e = Shell(kBin + "inspector-cli path " + (dir.path() / "run").string() + " --node \"$(printf '\\033[2J')\"");
  EXPECT_EQ(e.exit_code, 2) << e.err;
  EXPECT_EQ(e.err.find('\x1b'), std::string::npos) << e.err;
  EXPECT_TRUE(Contains(e.err, "\\x1b[2J")) << e.err;
}

}  // namespace
}  // namespace opscope
