#include "graph/onnx/onnx_convert.h"

#include "opscope/npy.h"

namespace opscope {
namespace {

std::string TensorWhat(const onnx::TensorProto& p) { return "ONNX tensor '" + p.name() + "'"; }

// Copies a repeated field's values into `out`, converting each.
template <typename Out, typename Field, typename Convert>
void CopyTyped(const Field& field, Out* out, Convert convert) {
  for (int i = 0; i < field.size(); ++i) out[i] = convert(field.Get(i));
}

}  // namespace

bool IsDefaultOnnxDomain(std::string_view domain) { return domain.empty() || domain == "ai.onnx"; }

int64_t OpsetVersion(const onnx::ModelProto& model, std::string_view domain) {
  const bool want_default = IsDefaultOnnxDomain(domain);
  for (const auto& op : model.opset_import()) {
    if (want_default ? IsDefaultOnnxDomain(op.domain()) : op.domain() == domain) return op.version();
  }
  return -1;
}

StatusOr<onnx::ModelProto> LoadModel(const std::string& path) {
  // Through ReadFile: a device or a FIFO is refused and the size limit checked
  // before any byte is read (`run /dev/zero` would otherwise never end).
  OPSCOPE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    return DataLossError(path + ": not a valid ONNX model (protobuf parse of " + std::to_string(bytes.size()) +
                         " bytes failed: the file is truncated or corrupt)");
  }
  // A file cut between top-level fields still parses; what every model has
  // tells such a cut apart from a whole model.
  if (!model.has_graph()) {
    return DataLossError(path + ": ONNX model has no graph (truncated or not an ONNX model?)");
  }
  if (model.opset_import_size() == 0) {
    return DataLossError(path + ": ONNX model has no opset_import (truncated or not an ONNX model?)");
  }
  return model;
}

StatusOr<onnx::TensorProto> LoadTensorProtoFile(const std::string& path) {
  OPSCOPE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    return DataLossError(path + ": not a valid ONNX TensorProto (protobuf parse of " +
                         std::to_string(bytes.size()) + " bytes failed: the file is truncated or corrupt)");
  }
  return proto;
}

StatusOr<Tensor> ReadTensorProtoFile(const std::string& path) {
  OPSCOPE_ASSIGN_OR_RETURN(onnx::TensorProto proto, LoadTensorProtoFile(path));
  StatusOr<Tensor> t = TensorFromProto(proto);
  if (!t.ok()) return std::move(t).status().WithContext(path);
  return t;
}

std::string OnnxDataTypeName(int32_t onnx_type) {
  if (!onnx::TensorProto_DataType_IsValid(onnx_type)) return "UNKNOWN";
  return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(onnx_type));
}

StatusOr<DType> DTypeFromOnnx(int32_t onnx_type, std::string_view what) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT: return DType::kF32;
    case onnx::TensorProto::DOUBLE: return DType::kF64;
    case onnx::TensorProto::FLOAT16: return DType::kF16;
    case onnx::TensorProto::BFLOAT16: return DType::kBF16;
    case onnx::TensorProto::INT64: return DType::kI64;
    case onnx::TensorProto::INT32: return DType::kI32;
    case onnx::TensorProto::INT16: return DType::kI16;
    case onnx::TensorProto::INT8: return DType::kI8;
    case onnx::TensorProto::UINT8: return DType::kU8;
    case onnx::TensorProto::UINT16: return DType::kU16;
    case onnx::TensorProto::UINT32: return DType::kU32;
    case onnx::TensorProto::UINT64: return DType::kU64;
    case onnx::TensorProto::BOOL: return DType::kBool;
    default: break;
  }
  return UnimplementedError(std::string(what) + " has data type " + OnnxDataTypeName(onnx_type) + " (" +
                            std::to_string(onnx_type) + "), which opscope does not support");
}

int32_t OnnxFromDType(DType dtype) {
  switch (dtype) {
    case DType::kF64: return onnx::TensorProto::DOUBLE;
    case DType::kF32: return onnx::TensorProto::FLOAT;
    case DType::kF16: return onnx::TensorProto::FLOAT16;
    case DType::kBF16: return onnx::TensorProto::BFLOAT16;
    case DType::kI64: return onnx::TensorProto::INT64;
    case DType::kI32: return onnx::TensorProto::INT32;
    case DType::kI16: return onnx::TensorProto::INT16;
    case DType::kI8: return onnx::TensorProto::INT8;
    case DType::kU8: return onnx::TensorProto::UINT8;
    case DType::kU16: return onnx::TensorProto::UINT16;
    case DType::kU32: return onnx::TensorProto::UINT32;
    case DType::kU64: return onnx::TensorProto::UINT64;
    case DType::kBool: return onnx::TensorProto::BOOL;
  }
  return onnx::TensorProto::UNDEFINED;
}

StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& p) {
  const std::string what = TensorWhat(p);
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    for (const auto& kv : p.external_data()) {
      if (kv.key() == "location") location = kv.value();
    }
    return UnimplementedError(what + " keeps its data in an external file ('" + location +
                              "'); opscope reads only data stored inside the model");
  }
  if (p.has_segment()) return UnimplementedError(what + " is a segment of a larger tensor; opscope reads whole tensors only");
  OPSCOPE_ASSIGN_OR_RETURN(DType dtype, DTypeFromOnnx(p.data_type(), what));
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  Shape shape(std::move(dims));
  if (Status st = shape.Validate(); !st.ok()) return std::move(st).WithContext(what + " dims");
  // Sizes are checked before allocating, so a corrupt dims field cannot ask
  // for terabytes.
  const int64_t numel = shape.numel();
  const size_t nbytes = static_cast<size_t>(numel) * DTypeSize(dtype);
  const std::string desc = std::string(DTypeName(dtype)) + shape.ToString();
  if (p.has_raw_data()) {
    if (p.raw_data().size() != nbytes) {
      return DataLossError(what + ": raw_data has " + std::to_string(p.raw_data().size()) + " bytes, " + desc +
                           " needs " + std::to_string(nbytes));
    }
    OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtype, shape));
    // ONNX stores raw_data little-endian, as this host does.
    if (dtype == DType::kBool) {
      // A bool in C++ may only hold 0 or 1; a file's byte 2 copied as is
      // would make a bool that is neither (undefined, and UBSan's report in
      // If's branch choice): any non-zero byte is true, as numpy reads it.
      const auto* in = reinterpret_cast<const unsigned char*>(p.raw_data().data());
      bool* out = t.data<bool>();
      for (size_t i = 0; i < nbytes; ++i) out[i] = in[i] != 0;
    } else if (nbytes > 0) {
      std::memcpy(t.raw_data(), p.raw_data().data(), nbytes);
    }
    return t;
  }
  const char* field = "int32_data";
  int64_t have = p.int32_data_size();
  if (dtype == DType::kF32) field = "float_data", have = p.float_data_size();
  if (dtype == DType::kF64) field = "double_data", have = p.double_data_size();
  if (dtype == DType::kI64) field = "int64_data", have = p.int64_data_size();
  // ONNX keeps uint32 and uint64 in uint64_data; uint16, like the other narrow types, in int32_data.
  if (dtype == DType::kU32 || dtype == DType::kU64) field = "uint64_data", have = p.uint64_data_size();
  if (have != numel) {
    return DataLossError(what + ": " + field + " has " + std::to_string(have) + " values, " + desc + " needs " +
                         std::to_string(numel));
  }
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtype, shape));
  switch (dtype) {
    case DType::kF32:
      CopyTyped(p.float_data(), t.data<float>(), [](float v) { return v; });
      break;
    case DType::kF64:
      CopyTyped(p.double_data(), t.data<double>(), [](double v) { return v; });
      break;
    case DType::kI64:
      CopyTyped(p.int64_data(), t.data<int64_t>(), [](int64_t v) { return v; });
      break;
    case DType::kI32:
      CopyTyped(p.int32_data(), t.data<int32_t>(), [](int32_t v) { return v; });
      break;
    case DType::kI16:
      CopyTyped(p.int32_data(), t.data<int16_t>(), [](int32_t v) { return static_cast<int16_t>(v); });
      break;
    case DType::kI8:
      CopyTyped(p.int32_data(), t.data<int8_t>(), [](int32_t v) { return static_cast<int8_t>(v); });
      break;
    case DType::kU8:
      CopyTyped(p.int32_data(), t.data<uint8_t>(), [](int32_t v) { return static_cast<uint8_t>(v); });
      break;
    case DType::kU16:
      CopyTyped(p.int32_data(), t.data<uint16_t>(), [](int32_t v) { return static_cast<uint16_t>(v); });
      break;
    case DType::kU32:
      CopyTyped(p.uint64_data(), t.data<uint32_t>(), [](uint64_t v) { return static_cast<uint32_t>(v); });
      break;
    case DType::kU64:
      CopyTyped(p.uint64_data(), t.data<uint64_t>(), [](uint64_t v) { return v; });
      break;
    case DType::kBool:
      CopyTyped(p.int32_data(), t.data<bool>(), [](int32_t v) { return v != 0; });
      break;
    case DType::kF16:
      CopyTyped(p.int32_data(), t.data<Half>(), [](int32_t v) { return Half::FromBits(static_cast<uint16_t>(v)); });
      break;
    case DType::kBF16:
      CopyTyped(p.int32_data(), t.data<BFloat16>(),
                [](int32_t v) { return BFloat16::FromBits(static_cast<uint16_t>(v)); });
      break;
  }
  return t;
}

StatusOr<Tensor> TensorFromProtoAs(const onnx::TensorProto& p, int32_t declared_type) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(p));
  if (declared_type != onnx::TensorProto::BFLOAT16 || t.dtype() != DType::kU16) return t;
  OPSCOPE_ASSIGN_OR_RETURN(Tensor bf, Tensor::Empty(DType::kBF16, t.shape()));
  if (t.nbytes() > 0) std::memcpy(bf.raw_data(), t.raw_data(), t.nbytes());  // the same 16 bits
  return bf;
}

StatusOr<onnx::TensorProto> TensorToProto(const Tensor& t_in, const std::string& name, bool use_raw_data) {
  if (!t_in.defined()) return InvalidArgumentError("TensorToProto: tensor '" + name + "' is undefined");
  OPSCOPE_ASSIGN_OR_RETURN(Tensor host, ToHost(t_in));
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, host.Contiguous());
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(OnnxFromDType(t.dtype()));
  for (int64_t d : t.shape().dims()) p.add_dims(d);
  if (use_raw_data) {
    p.set_raw_data(static_cast<const char*>(t.raw_data()), t.nbytes());
    return p;
  }
  const int64_t n = t.numel();
  switch (t.dtype()) {
    case DType::kF32:
      for (int64_t i = 0; i < n; ++i) p.add_float_data(t.data<float>()[i]);
      break;
    case DType::kF64:
      for (int64_t i = 0; i < n; ++i) p.add_double_data(t.data<double>()[i]);
      break;
    case DType::kI64:
      for (int64_t i = 0; i < n; ++i) p.add_int64_data(t.data<int64_t>()[i]);
      break;
    case DType::kI32:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<int32_t>()[i]);
      break;
    case DType::kI16:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<int16_t>()[i]);
      break;
    case DType::kI8:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<int8_t>()[i]);
      break;
    case DType::kU8:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<uint8_t>()[i]);
      break;
    case DType::kU16:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<uint16_t>()[i]);
      break;
    case DType::kU32:
      for (int64_t i = 0; i < n; ++i) p.add_uint64_data(t.data<uint32_t>()[i]);
      break;
    case DType::kU64:
      for (int64_t i = 0; i < n; ++i) p.add_uint64_data(t.data<uint64_t>()[i]);
      break;
    case DType::kBool:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<bool>()[i] ? 1 : 0);
      break;
    case DType::kF16:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<Half>()[i].bits);
      break;
    case DType::kBF16:
      for (int64_t i = 0; i < n; ++i) p.add_int32_data(t.data<BFloat16>()[i].bits);
      break;
  }
  return p;
}

StatusOr<AttrValue> AttrValueFromProto(const onnx::AttributeProto& a) {
  const std::string what = "attribute '" + a.name() + "'";
  if (!a.ref_attr_name().empty()) {
    return UnimplementedError(what + " refers to the enclosing function's attribute '" + a.ref_attr_name() +
                              "'; only function bodies may hold such references");
  }
  auto type = a.type();
  if (type == onnx::AttributeProto::UNDEFINED) {
    // Models from before IR version 2 leave `type` unset: the filled field says.
    if (a.has_f()) type = onnx::AttributeProto::FLOAT;
    else if (a.has_i()) type = onnx::AttributeProto::INT;
    else if (a.has_s()) type = onnx::AttributeProto::STRING;
    else if (a.has_t()) type = onnx::AttributeProto::TENSOR;
    else if (a.has_g()) type = onnx::AttributeProto::GRAPH;
    else if (a.floats_size()) type = onnx::AttributeProto::FLOATS;
    else if (a.ints_size()) type = onnx::AttributeProto::INTS;
    else if (a.strings_size()) type = onnx::AttributeProto::STRINGS;
    else if (a.graphs_size()) type = onnx::AttributeProto::GRAPHS;
    else return InvalidArgumentError(what + " has no type and no value");
  }
  switch (type) {
    case onnx::AttributeProto::FLOAT: return AttrValue(static_cast<double>(a.f()));
    case onnx::AttributeProto::INT: return AttrValue(static_cast<int64_t>(a.i()));
    case onnx::AttributeProto::STRING: return AttrValue(a.s());
    case onnx::AttributeProto::TENSOR: {
      StatusOr<Tensor> t = TensorFromProto(a.t());
      if (!t.ok()) return std::move(t).status().WithContext(what);
      return AttrValue(std::move(t).value());
    }
    case onnx::AttributeProto::FLOATS:
      return AttrValue(std::vector<double>(a.floats().begin(), a.floats().end()));
    case onnx::AttributeProto::INTS:
      return AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case onnx::AttributeProto::STRINGS:
      return AttrValue(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case onnx::AttributeProto::GRAPH:
    case onnx::AttributeProto::GRAPHS:
      return UnimplementedError(what + " is a subgraph (" + onnx::AttributeProto_AttributeType_Name(type) +
                                "); opscope ops take no graph attributes");
    default:
      return UnimplementedError(what + " has type " + onnx::AttributeProto_AttributeType_Name(type) +
                                ", which opscope ops do not take");
  }
}

StatusOr<Attrs> AttrsFromNode(const onnx::NodeProto& node, const OpSchema& schema) {
  Attrs attrs;
  for (const auto& a : node.attribute()) {
    StatusOr<AttrValue> v = AttrValueFromProto(a);
    if (!v.ok()) {
      return std::move(v).status().WithContext("ONNX node '" + node.name() + "' (" + node.op_type() + ")");
    }
    AttrValue value = std::move(v).value();
    if (const AttrDef* def = schema.FindAttr(a.name())) {
      const AttrType got = AttrTypeOf(value);
      if (def->type == AttrType::kFloat && got == AttrType::kInt) {
        value = static_cast<double>(std::get<int64_t>(value));
      } else if (def->type == AttrType::kFloats && got == AttrType::kInts) {
        const auto& ints = std::get<std::vector<int64_t>>(value);
        value = std::vector<double>(ints.begin(), ints.end());
      } else if (def->type == AttrType::kInts && got == AttrType::kFloats &&
                 std::get<std::vector<double>>(value).empty()) {
        value = std::vector<int64_t>{};
      }
    }
    attrs.Set(a.name(), std::move(value));
  }
  return attrs;
}

}  // namespace opscope
