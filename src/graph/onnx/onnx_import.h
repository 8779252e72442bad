// File: graph/onnx/onnx_import.h
// Reads an ONNX model into the framework layer of a graph::Model: runs ONNX's
// own shape inference first, keeps initializers as constants, rewrites nodes
// of older opsets into the form the built-in ops implement (onnx_adapter.h),
// derives namespaces from node names, and checks the graph.
//
//   OPSCOPE_ASSIGN_OR_RETURN(graph::Model m, graph::ImportOnnx("resnet.onnx"));
//
// A node opscope cannot run (unknown op, unsupported attribute, Loop) is
// kept and marked executable=false with the reason; the import still
// succeeds. An If's branches become framework nodes named and scoped
// "<if>/then_branch/..." (Node::branch_of), feeding the If, which stays not
// executable until the compiler resolves its cond (passes/if_resolution.cc).
// A truncated file, a cycle, an input nothing produces or dims whose element
// count overflows int64 fail the import with one message naming the file and
// the node or value.
#pragma once

#include <string>
#include <string_view>

#include "graph/ir/ir.h"

// Declared here so that users of ImportOnnx need no ONNX headers.
namespace onnx {
class ModelProto;
}  // namespace onnx

namespace opscope::graph {

// The opsets of the default domain the importer is built and tested for.
inline constexpr int64_t kMinOnnxOpset = 7;
inline constexpr int64_t kMaxOnnxOpset = 17;

StatusOr<Model> ImportOnnx(const std::string& path);
// The same for a model already in memory; `path` only names it in messages.
StatusOr<Model> ImportOnnxModel(const onnx::ModelProto& proto, const std::string& path);

// A graph another engine optimized and saved (onnxruntime's
// optimized_model_filepath): read as ImportOnnx reads a model, except that
// the opset_import entries no node uses are dropped first (onnxruntime lists
// every domain it knows, at versions newer than this build's ONNX). Its nodes
// of other domains (com.microsoft FusedConv, ...) are kept, not executable.
StatusOr<Model> ImportOptimizedOnnx(const std::string& path);

}  // namespace opscope::graph
