// The minimal build's stand-in for graph/ (no ONNX or protobuf there): the
// model calls of opscope/model.h and opscope/accuracy.h, each answering in one
// line that models are not in this build, so a program or plugin that calls
// one gets that line rather than a missing symbol.
#include <ostream>

#include "opscope/accuracy.h"
#include "opscope/model.h"

namespace opscope {
namespace {

Status NoModels(const std::string& what) {
  return UnimplementedError(what + ": models are not in this build (the minimal build, OPSCOPE_MINIMAL, has no "
                                   "ONNX): run them where the full build is");
}

}  // namespace

StatusOr<ModelRunReport> RunModel(const ModelRunRequest& r) { return NoModels("model " + r.model); }
StatusOr<RunDiffReport> DiffRunFolders(const RunDiffRequest&) { return NoModels("run diff"); }
void PrintRunDiff(const RunDiffReport&, int, std::ostream& out) { out << "run diff: not in this build\n"; }
StatusOr<OrtImportReport> ImportOnnxruntimeRun(const OrtImportRequest&) { return NoModels("onnxruntime import"); }
StatusOr<std::vector<HotNode>> HotNodes(const ModelRunRequest& r) { return NoModels("model " + r.model); }
StatusOr<ModelSweep> SweepModel(const ModelSweepRequest& r) { return NoModels("model " + r.model.model); }
StatusOr<AccuracyReport> RunAccuracy(const AccuracyRequest&) { return NoModels("accuracy"); }
void PrintAccuracy(const AccuracyReport&, int, std::ostream& out) { out << "accuracy: not in this build\n"; }
bool AccuracyReport::clean() const { return false; }

}  // namespace opscope
