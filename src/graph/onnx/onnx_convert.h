// File: graph/onnx/onnx_convert.h
// The bridge between ONNX's protobuf messages and opscope's own types: model
// and TensorProto files, tensors in both directions, data-type numbers, and a
// node's attributes read against an op's schema. The ONNX importer and the
// conformance test over ONNX's node tests both stand on this.
//
//   OPSCOPE_ASSIGN_OR_RETURN(onnx::ModelProto model, LoadModel("model.onnx"));
//   OPSCOPE_ASSIGN_OR_RETURN(Tensor x, ReadTensorProtoFile("test_data_set_0/input_0.pb"));
//   OPSCOPE_ASSIGN_OR_RETURN(Attrs attrs, AttrsFromNode(model.graph().node(0), *schema));
//
// Only embedded data is read: tensors whose data lives in external files give
// Unimplemented, as do ONNX data types with no opscope DType (string, uint16/32/64,
// complex, float8).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "onnx/onnx_pb.h"
#include "opscope/op.h"
#include "opscope/status.h"
#include "opscope/tensor.h"

namespace opscope {

// The ONNX opset whose operator semantics the built-in ops implement.
inline constexpr int64_t kOnnxTargetOpset = 17;

// Parses an ONNX model file. Errors name the file: NotFound when it cannot be
// opened, DataLoss when the bytes are not a complete ModelProto.
StatusOr<onnx::ModelProto> LoadModel(const std::string& path);
// Parses a serialized TensorProto file (the node tests' input_K.pb / output_K.pb).
StatusOr<onnx::TensorProto> LoadTensorProtoFile(const std::string& path);
// LoadTensorProtoFile + TensorFromProto, errors naming the file.
StatusOr<Tensor> ReadTensorProtoFile(const std::string& path);

// The opset version the model imports for `domain` ("" and "ai.onnx" are the
// same domain); -1 when the model does not import it.
int64_t OpsetVersion(const onnx::ModelProto& model, std::string_view domain);
// True for ONNX's default operator domain ("" or "ai.onnx").
bool IsDefaultOnnxDomain(std::string_view domain);

// "FLOAT", "STRING", "BFLOAT16", ... for a TensorProto::DataType number.
std::string OnnxDataTypeName(int32_t onnx_type);
// Unimplemented names the type and number when opscope has no such DType;
// `what` names the tensor in the message ("ONNX tensor 'x'").
StatusOr<DType> DTypeFromOnnx(int32_t onnx_type, std::string_view what = "ONNX tensor");
int32_t OnnxFromDType(DType dtype);

// Reads raw_data or the typed field ONNX stores the type in (int32_data also
// carries int8/int16/uint8/bool values and the bits of float16/bfloat16).
StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto);
// TensorFromProto for a value whose model declares `declared_type` (an ONNX
// data type number). ONNX's node-test generator writes bfloat16 data as its
// uint16 bit patterns (numpy has no bfloat16); such a tensor comes back as
// the bfloat16 the model declares. Any other pair is read as stored.
StatusOr<Tensor> TensorFromProtoAs(const onnx::TensorProto& proto, int32_t declared_type);
// Host copy of `t` as a TensorProto, in raw_data (the form ONNX's exporters
// write) or in the typed field when `use_raw_data` is false.
StatusOr<onnx::TensorProto> TensorToProto(const Tensor& t, const std::string& name = "",
                                          bool use_raw_data = true);

// One attribute as an AttrValue, without a schema to guide it.
StatusOr<AttrValue> AttrValueFromProto(const onnx::AttributeProto& attr);
// The node's attributes, with values coerced to the types `schema` declares
// where ONNX's form differs harmlessly (an INT for a float attr, an empty list).
// Names are not checked here: the dispatcher's validation reports unknown ones.
StatusOr<Attrs> AttrsFromNode(const onnx::NodeProto& node, const OpSchema& schema);

}  // namespace opscope
