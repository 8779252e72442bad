#include "graph/onnx/onnx_convert.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace opscope {
namespace {

namespace fs = std::filesystem;

// A tensor of `dtype` whose elements all differ from their neighbours and
// include negative values, fractions and (for bool) both truth values.
Tensor Sample(DType dtype, const Shape& shape) {
  auto t = Tensor::Empty(dtype, shape);
  EXPECT_TRUE(t.ok());
  for (int64_t i = 0; i < t->numel(); ++i) {
    double v = IsFloat(dtype) ? (i * 7 % 11) - 5.25 : dtype == DType::kBool ? i % 3 == 0
               : IsSigned(dtype) ? (i * 37 % 200) - 100 : (i * 37) % 256;
    t->FlatSetFromDouble(i, v);
  }
  return *t;
}

bool SameTensorBytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

std::string TempPath(const std::string& leaf) {
  return (fs::temp_directory_path() / ("opscope_onnx_" + std::to_string(getpid()) + "_" + leaf)).string();
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(OnnxConvert, DTypeNumbersRoundTrip) {
  for (DType d : kAllDTypes) {
    auto back = DTypeFromOnnx(OnnxFromDType(d));
    ASSERT_TRUE(back.ok()) << DTypeName(d) << ": " << back.status().ToString();
    EXPECT_EQ(*back, d) << DTypeName(d);
  }
  EXPECT_EQ(OnnxFromDType(DType::kF32), onnx::TensorProto::FLOAT);
  EXPECT_EQ(OnnxFromDType(DType::kBF16), onnx::TensorProto::BFLOAT16);
}

TEST(OnnxConvert, UnsupportedDataTypeNamesTypeAndNumber) {
  for (int32_t t : {onnx::TensorProto::STRING, onnx::TensorProto::COMPLEX64, onnx::TensorProto::COMPLEX128}) {
    EXPECT_FALSE(DTypeFromOnnx(t).ok()) << OnnxDataTypeName(t);
  }
  onnx::TensorProto p;
  p.set_name("words");
  p.set_data_type(onnx::TensorProto::STRING);
  p.add_dims(1);
  p.add_string_data("hello");
  auto t = TensorFromProto(p);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(t.status().message(),
            "ONNX tensor 'words' has data type STRING (8), which opscope does not support");
}

// fuzz/crashes/onnx/bool_raw_data_not_0_or_1.onnx: a BOOL initializer whose
// raw_data byte is 0x42 made a C++ bool holding 66 (UBSan: "not a valid value
// for type bool", in If's branch choice). Any non-zero byte is true.
TEST(OnnxConvert, BoolRawDataBytesBeyondOneAreTrue) {
  onnx::TensorProto p;
  p.set_name("cond");
  p.set_data_type(onnx::TensorProto::BOOL);
  p.add_dims(4);
  p.set_raw_data(std::string("\x00\x42\x01\xff", 4));
  auto t = TensorFromProto(p);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const unsigned char* bytes = static_cast<const unsigned char*>(t->raw_data());
  EXPECT_EQ(bytes[0], 0);
  EXPECT_EQ(bytes[1], 1);  // not 0x42
  EXPECT_EQ(bytes[2], 1);
  EXPECT_EQ(bytes[3], 1);  // not 0xff
  EXPECT_EQ(t->FlatGetAsDouble(1), 1.0);
}

TEST(OnnxConvert, EveryDTypeRoundTripsThroughRawAndTypedFields) {
  for (DType d : kAllDTypes) {
    Tensor x = Sample(d, Shape({2, 3, 5}));
    for (bool raw : {true, false}) {
      auto p = TensorToProto(x, "x", raw);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      EXPECT_EQ(p->data_type(), OnnxFromDType(d));
      ASSERT_EQ(p->dims_size(), 3);
      EXPECT_EQ(p->dims(2), 5);
      EXPECT_EQ(p->has_raw_data(), raw) << DTypeName(d);
      if (raw) {
        EXPECT_EQ(p->raw_data().size(), x.nbytes());
      }
      // Through the wire format too, as a file would carry it.
      onnx::TensorProto parsed;
      ASSERT_TRUE(parsed.ParseFromString(p->SerializeAsString()));
      auto back = TensorFromProto(parsed);
      ASSERT_TRUE(back.ok()) << DTypeName(d) << " raw=" << raw << ": " << back.status().ToString();
      EXPECT_TRUE(SameTensorBytes(x, *back)) << DTypeName(d) << " raw=" << raw;
    }
  }
}

TEST(OnnxConvert, TypedFieldsUseOnnxsStorageRules) {
  // float16/bfloat16 travel as their bit patterns in int32_data.
  onnx::TensorProto h;
  h.set_data_type(onnx::TensorProto::FLOAT16);
  h.add_dims(2);
  h.add_int32_data(0x3C00);  // 1.0
  h.add_int32_data(0xC000);  // -2.0
  auto ht = TensorFromProto(h);
  ASSERT_TRUE(ht.ok()) << ht.status().ToString();
  EXPECT_EQ(ht->FlatGetAsDouble(0), 1.0);
  EXPECT_EQ(ht->FlatGetAsDouble(1), -2.0);

  onnx::TensorProto b;
  b.set_data_type(onnx::TensorProto::BFLOAT16);
  b.add_int32_data(0x4040);  // scalar 3.0
  auto bt = TensorFromProto(b);
  ASSERT_TRUE(bt.ok()) << bt.status().ToString();
  EXPECT_EQ(bt->rank(), 0);
  EXPECT_EQ(bt->FlatGetAsDouble(0), 3.0);

  onnx::TensorProto flags;
  flags.set_data_type(onnx::TensorProto::BOOL);
  flags.add_dims(3);
  for (int v : {0, 1, 5}) flags.add_int32_data(v);
  auto ft = TensorFromProto(flags);
  ASSERT_TRUE(ft.ok());
  EXPECT_FALSE(ft->data<bool>()[0]);
  EXPECT_TRUE(ft->data<bool>()[1]);
  EXPECT_TRUE(ft->data<bool>()[2]);

  onnx::TensorProto big;
  big.set_data_type(onnx::TensorProto::INT64);
  big.add_dims(1);
  big.add_int64_data(INT64_MAX - 1);  // more bits than a double holds
  auto gt = TensorFromProto(big);
  ASSERT_TRUE(gt.ok());
  EXPECT_EQ(gt->data<int64_t>()[0], INT64_MAX - 1);

  onnx::TensorProto i8;
  i8.set_data_type(onnx::TensorProto::INT8);
  i8.add_dims(2);
  i8.add_int32_data(-128);
  i8.add_int32_data(127);
  auto it = TensorFromProto(i8);
  ASSERT_TRUE(it.ok());
  EXPECT_EQ(it->data<int8_t>()[0], -128);
  EXPECT_EQ(it->data<int8_t>()[1], 127);

  // uint32 and uint64 live in uint64_data, uint16 in int32_data.
  onnx::TensorProto u64;
  u64.set_data_type(onnx::TensorProto::UINT64);
  u64.add_dims(1);
  u64.add_uint64_data(UINT64_MAX - 1);
  auto u64t = TensorFromProto(u64);
  ASSERT_TRUE(u64t.ok()) << u64t.status().ToString();
  EXPECT_EQ(u64t->data<uint64_t>()[0], UINT64_MAX - 1);
  onnx::TensorProto u32;
  u32.set_data_type(onnx::TensorProto::UINT32);
  u32.add_uint64_data(4000000000u);
  auto u32t = TensorFromProto(u32);
  ASSERT_TRUE(u32t.ok()) << u32t.status().ToString();
  EXPECT_EQ(u32t->data<uint32_t>()[0], 4000000000u);
  onnx::TensorProto u16;
  u16.set_data_type(onnx::TensorProto::UINT16);
  u16.add_int32_data(65535);
  auto u16t = TensorFromProto(u16);
  ASSERT_TRUE(u16t.ok()) << u16t.status().ToString();
  EXPECT_EQ(u16t->data<uint16_t>()[0], 65535);
  onnx::TensorProto u32_wrong_field;
  u32_wrong_field.set_data_type(onnx::TensorProto::UINT32);
  u32_wrong_field.add_int32_data(1);
  EXPECT_EQ(TensorFromProto(u32_wrong_field).status().code(), StatusCode::kDataLoss);
}

TEST(OnnxConvert, WrongDataSizesAreDataLossNamingTheTensor) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(3);
  p.add_dims(4);
  p.set_raw_data(std::string(40, '\0'));
  auto t = TensorFromProto(p);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(t.status().message(), "ONNX tensor 'w': raw_data has 40 bytes, float32[3,4] needs 48");

  p.clear_raw_data();
  for (int i = 0; i < 5; ++i) p.add_float_data(1.0f);
  t = TensorFromProto(p);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "ONNX tensor 'w': float_data has 5 values, float32[3,4] needs 12");

  p.clear_float_data();
  p.add_dims(-2);
  t = TensorFromProto(p);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().ToString().find("ONNX tensor 'w' dims"), std::string::npos) << t.status().ToString();
}

TEST(OnnxConvert, ExternalDataIsUnimplemented) {
  onnx::TensorProto p;
  p.set_name("big");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(1024);
  p.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = p.add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  auto t = TensorFromProto(p);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(t.status().message().find("'big'"), std::string::npos);
  EXPECT_NE(t.status().message().find("external file ('weights.bin')"), std::string::npos) << t.status().message();
}

onnx::ModelProto TinyModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* g = m.mutable_graph();
  g->set_name("tiny");
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  g->add_input()->set_name("x");
  g->add_output()->set_name("y");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  return m;
}

TEST(OnnxConvert, LoadModelReadsAWholeModel) {
  std::string path = TempPath("whole.onnx");
  WriteBytes(path, TinyModel().SerializeAsString());
  auto m = LoadModel(path);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->graph().node(0).op_type(), "Relu");
  EXPECT_EQ(OpsetVersion(*m, ""), 17);
  EXPECT_EQ(OpsetVersion(*m, "ai.onnx"), 17);
  EXPECT_EQ(OpsetVersion(*m, "com.microsoft"), -1);
  fs::remove(path);
}

TEST(OnnxConvert, LoadModelRejectsEveryTruncationNamingTheFile) {
  const std::string bytes = TinyModel().SerializeAsString();
  std::string path = TempPath("cut.onnx");
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    WriteBytes(path, bytes.substr(0, cut));
    auto m = LoadModel(path);
    ASSERT_FALSE(m.ok()) << "a model cut to " << cut << " of " << bytes.size() << " bytes loaded";
    EXPECT_EQ(m.status().code(), StatusCode::kDataLoss) << m.status().ToString();
    EXPECT_EQ(m.status().message().rfind(path + ": ", 0), 0u) << m.status().message();
  }
  fs::remove(path);
}

TEST(OnnxConvert, LoadModelOnMissingFileIsNotFound) {
  auto m = LoadModel("/nonexistent/model.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  // The message names the file and says it cannot be opened (core's InputFile words it).
  EXPECT_NE(m.status().message().find("/nonexistent/model.onnx"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("cannot open"), std::string::npos) << m.status().message();
}

TEST(OnnxConvert, TensorProtoFileRoundTripAndCorruption) {
  Tensor x = Sample(DType::kF16, Shape({4, 3}));
  auto p = TensorToProto(x, "x");
  ASSERT_TRUE(p.ok());
  std::string path = TempPath("x.pb");
  const std::string bytes = p->SerializeAsString();
  WriteBytes(path, bytes);
  auto back = ReadTensorProtoFile(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(SameTensorBytes(x, *back));

  WriteBytes(path, bytes.substr(0, bytes.size() - 3));  // inside raw_data
  back = ReadTensorProtoFile(path);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(back.status().message().find(path), std::string::npos) << back.status().message();
  fs::remove(path);
}

// A real file from ONNX's node tests agrees with the type its model declares.
TEST(OnnxConvert, ReadsOnnxNodeTestDataAsItsModelDeclares) {
  const std::string dir = "/usr/share/libonnx-testdata/data/node/test_relu";
  ASSERT_TRUE(fs::exists(dir + "/model.onnx")) << "libonnx-testdata is a build dependency";
  auto m = LoadModel(dir + "/model.onnx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto& type = m->graph().input(0).type().tensor_type();
  auto x = ReadTensorProtoFile(dir + "/test_data_set_0/input_0.pb");
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  auto want = DTypeFromOnnx(type.elem_type());
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(x->dtype(), *want);
  ASSERT_EQ(x->rank(), type.shape().dim_size());
  for (int i = 0; i < x->rank(); ++i) EXPECT_EQ(x->dim(i), type.shape().dim(i).dim_value());
}

// ONNX's Cast tests keep bfloat16 as uint16 bit patterns; the model says bfloat16.
TEST(OnnxConvert, Bfloat16StoredAsUint16BitsIsReadAsItsModelDeclares) {
  const std::string dir = "/usr/share/libonnx-testdata/data/node/test_cast_FLOAT_to_BFLOAT16";
  ASSERT_TRUE(fs::exists(dir + "/model.onnx")) << "libonnx-testdata is a build dependency";
  auto m = LoadModel(dir + "/model.onnx");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const int32_t declared = m->graph().output(0).type().tensor_type().elem_type();
  ASSERT_EQ(declared, onnx::TensorProto::BFLOAT16);
  auto proto = LoadTensorProtoFile(dir + "/test_data_set_0/output_0.pb");
  ASSERT_TRUE(proto.ok()) << proto.status().ToString();
  ASSERT_EQ(proto->data_type(), onnx::TensorProto::UINT16) << "the file's own type";
  auto as_stored = TensorFromProto(*proto);
  auto y = TensorFromProtoAs(*proto, declared);
  ASSERT_TRUE(as_stored.ok() && y.ok()) << y.status().ToString();
  EXPECT_EQ(as_stored->dtype(), DType::kU16);
  EXPECT_EQ(y->dtype(), DType::kBF16);
  ASSERT_EQ(y->nbytes(), as_stored->nbytes());
  EXPECT_EQ(std::memcmp(y->raw_data(), as_stored->raw_data(), y->nbytes()), 0);
  // The input, float32, rounds to those bfloat16 values (to nearest even).
  auto x = ReadTensorProtoFile(dir + "/test_data_set_0/input_0.pb");
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(BFloat16(x->data<float>()[0]).bits, y->data<BFloat16>()[0].bits);
  // A declared type that is not bfloat16 leaves uint16 as it is.
  auto kept = TensorFromProtoAs(*proto, onnx::TensorProto::UINT16);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->dtype(), DType::kU16);
}

TEST(OnnxConvert, AttrsFromNodeConvertsEveryKindAndCoercesBySchema) {
  OpDef def("test_onnx_attrs");
  def.Input("x").Output("y").Attr("alpha", 0.5).Attr("scales", std::vector<double>{}).SameShape();
  onnx::NodeProto n;
  n.set_op_type("test_onnx_attrs");
  auto add = [&](const std::string& name, onnx::AttributeProto::AttributeType type) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  };
  add("alpha", onnx::AttributeProto::INT)->set_i(2);  // INT for a float attr
  auto* scales = add("scales", onnx::AttributeProto::INTS);
  scales->add_ints(1);
  scales->add_ints(3);
  add("axis", onnx::AttributeProto::INT)->set_i(-1);
  add("mode", onnx::AttributeProto::STRING)->set_s("linear");
  add("eps", onnx::AttributeProto::FLOAT)->set_f(0.25f);
  auto* perm = add("perm", onnx::AttributeProto::INTS);
  perm->add_ints(1);
  perm->add_ints(0);
  add("names", onnx::AttributeProto::STRINGS)->add_strings("a");
  auto* value = add("value", onnx::AttributeProto::TENSOR)->mutable_t();
  value->set_data_type(onnx::TensorProto::INT64);
  value->add_int64_data(9);

  auto attrs = AttrsFromNode(n, def.schema());
  ASSERT_TRUE(attrs.ok()) << attrs.status().ToString();
  EXPECT_EQ(AttrTypeOf(*attrs->Find("alpha")), AttrType::kFloat);
  EXPECT_EQ(attrs->f("alpha"), 2.0);
  EXPECT_EQ(attrs->floats("scales"), (std::vector<double>{1.0, 3.0}));
  EXPECT_EQ(attrs->i("axis"), -1);
  EXPECT_EQ(attrs->s("mode"), "linear");
  EXPECT_EQ(attrs->f("eps"), 0.25);
  EXPECT_EQ(attrs->ints("perm"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(attrs->strings("names"), std::vector<std::string>{"a"});
  ASSERT_NE(attrs->tensor("value"), nullptr);
  EXPECT_EQ(attrs->tensor("value")->dtype(), DType::kI64);
  EXPECT_EQ(attrs->tensor("value")->data<int64_t>()[0], 9);
}

TEST(OnnxConvert, GraphAttributesAreUnimplementedNamingTheAttr) {
  OpDef def("test_onnx_if");
  def.Input("x").Output("y").SameShape();
  onnx::NodeProto n;
  n.set_name("branch");
  n.set_op_type("If");
  auto* a = n.add_attribute();
  a->set_name("then_branch");
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name("then");
  auto attrs = AttrsFromNode(n, def.schema());
  ASSERT_FALSE(attrs.ok());
  EXPECT_EQ(attrs.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(attrs.status().ToString(),
            "ONNX node 'branch' (If): attribute 'then_branch' is a subgraph (GRAPH); opscope ops take no graph "
            "attributes");
}

}  // namespace
}  // namespace opscope
