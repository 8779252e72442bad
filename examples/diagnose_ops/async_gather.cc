// Two ops that are wrong together, as in a model: async_indices hands its
// output to a side stream of its own for the copy and returns without an
// event, so the op that reads the indices next may run before they land.
//
//   async_indices(x; rows) -> idx int64 [n]: idx[i] = (7 * i) % rows.
//     BUG: it fills idx with -1 (a "not ready" sentinel), then queues the
//     real values on a side stream (behind 200 ms of other work) and
//     returns: nothing orders that copy before idx's readers.
//   gather_rows(table [R, D], idx [n]) -> y [n, D]: y[i, :] = table[idx[i], :].
//     Correct for correct indices; it trusts them, so idx = -1 reads the row
//     before table's start: a guard-page fault under diagnose.
//
//   ops-debug diagnose -- inspector-cli run examples/diagnose_ops/async_gather.onnx --plugin libdiagnose_ops.so
//   # top cause: the race between the side stream's copy and gather_rows, not the read it crashed on
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;

Status IndicesInfer(opscope::InferContext& c) {
  c.SetOutput(0, opscope::DType::kI64, opscope::Shape({c.input(0).shape.numel()}));
  return Status::Ok();
}

Status IndicesCpu(KernelContext& ctx) {
  opscope::Tensor& idx = ctx.out(0);
  const int64_t n = idx.numel(), rows = ctx.attrs().i("rows", 1);
  if (rows < 1) return opscope::InvalidArgumentError("async_indices: rows must be >= 1");
  // The copy's source must outlive the call: one staging buffer per call, kept.
  static std::mutex mu;
  static std::vector<std::unique_ptr<std::vector<int64_t>>> staging;
  static std::unique_ptr<opscope::Stream> side;
  std::vector<int64_t>* values;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!side) {
      auto s = ctx.device()->CreateStream();
      if (!s.ok()) return s.status();
      side = std::move(s).value();
    }
    staging.push_back(std::make_unique<std::vector<int64_t>>(static_cast<size_t>(n)));
    values = staging.back().get();
  }
  for (int64_t i = 0; i < n; ++i) (*values)[static_cast<size_t>(i)] = (7 * i) % rows;
  std::memset(idx.raw_data(), 0xFF, idx.nbytes());  // -1: "not ready"
  OPSCOPE_RETURN_IF_ERROR(side->EnqueueHostFunction([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the side stream's other work
    return Status::Ok();
  }));
  // The bug: no event recorded after this copy, nothing for idx's readers to wait on.
  return side->Memcpy(idx.raw_data(), values->data(), idx.nbytes(), opscope::CopyKind::kHostToDevice);
}

Status IndicesReference(KernelContext& ctx) {
  const int64_t rows = ctx.attrs().i("rows", 1);
  for (int64_t i = 0; i < ctx.out(0).numel(); ++i) ctx.out(0).FlatSetFromDouble(i, static_cast<double>((7 * i) % rows));
  return Status::Ok();
}

Status GatherInfer(opscope::InferContext& c) {
  const auto& table = c.input(0);
  if (table.shape.rank() != 2) return opscope::InvalidArgumentError("gather_rows: table must be [R,D], got " + table.shape.ToString());
  c.SetOutput(0, table.dtype, opscope::Shape({c.input(1).shape.numel(), table.shape.dim(1)}));
  return Status::Ok();
}

Status GatherCpu(KernelContext& ctx) {
  const opscope::Tensor& table = ctx.in(0);
  const opscope::Tensor& idx = ctx.in(1);
  if (table.dtype() != opscope::DType::kF32 || idx.dtype() != opscope::DType::kI64) {
    return opscope::UnimplementedError("gather_rows: float32 table, int64 indices");
  }
  const int64_t n = idx.numel(), D = table.dim(1);
  const float* t = table.data<float>();
  const int64_t* ix = idx.data<int64_t>();
  float* y = ctx.out(0).data<float>();
  return ctx.ParallelFor("gather_rows_cpu", n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) std::memcpy(y + i * D, t + ix[i] * D, static_cast<size_t>(D) * sizeof(float));
  }, /*default_block=*/16);
}

Status GatherReference(KernelContext& ctx) {
  const opscope::Tensor& table = ctx.in(0);
  const int64_t n = ctx.in(1).numel(), R = table.dim(0), D = table.dim(1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = static_cast<int64_t>(ctx.in(1).FlatGetAsDouble(i));
    if (r < 0 || r >= R) return opscope::InvalidArgumentError("gather_rows: index " + std::to_string(r) + " out of [0, " + std::to_string(R) + ")");
    for (int64_t d = 0; d < D; ++d) ctx.out(0).FlatSetFromDouble(i * D + d, table.FlatGetAsDouble(r * D + d));
  }
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("async_indices")
    .Doc("idx[i] = (7 i) % rows, one per element of x (BUG: copied in on a side stream with no event)")
    .Input("x").Output("idx", "I64")
    .TypeConstraint("T", {opscope::DType::kF32}).TypeConstraint("I64", {opscope::DType::kI64})
    .Domain("com.opscope.examples")
    .Attr("rows", int64_t{1})
    .Infer(IndicesInfer)
    .Reference(IndicesReference)
    .Kernel("cpu", IndicesCpu);

OPSCOPE_OP("gather_rows")
    .Doc("y[i, :] = table[idx[i], :] (trusts its indices)")
    .Domain("com.opscope.examples")
    .Input("table").Input("idx", "I64").Output("y")
    .TypeConstraint("T", {opscope::DType::kF32}).TypeConstraint("I64", {opscope::DType::kI64})
    .Infer(GatherInfer)
    .Reference(GatherReference)
    .Kernel("cpu", GatherCpu);
