// side_stream_sum: y = 2x + 1, in two kernels: the scale on the op's stream,
// then the +1 on a stream the kernel makes for itself (as ops that overlap a
// branch do). BUG (ordered=0, the default): no event orders the two, so the
// side kernel may read y before the scale wrote it. With ordered=1 the side
// stream waits for an event recorded after the scale, and the op's stream
// waits for the side kernel.
//   ops-debug diagnose --plugin libdiagnose_ops.so --op side_stream_sum --input-shapes "[4096]"
// diagnose sees the side launch (Stream::Launch reports it) and names the race
// with both kernels and both streams, the side launch's buffers taken as the
// op's tensors and the allocations the op made before it.
// With scratch=1 the op copies x into a scratch buffer it allocates, on its
// own stream, and the side kernel computes y = 2t + 1 from it: unordered
// (ordered=0), the side kernel may read the scratch before the copy lands.
#include "opscope/device.h"
#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::KernelLaunch;
using opscope::Status;

KernelLaunch OneBlock(std::string name, std::function<void()> body) {
  KernelLaunch k{.name = std::move(name)};
  k.host = [body = std::move(body)](const opscope::BlockContext&) { body(); };
  return k;
}

// The scratch variant: copy x into t on the op's stream, y = 2t + 1 on the side.
Status SideStreamScratch(KernelContext& ctx, bool ordered) {
  const int64_t n = ctx.in(0).numel();
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  // A tensor on the op's device (EmptyOnDevice reports the allocation to the
  // recorder; a raw Device::Allocate would not be seen).
  OPSCOPE_ASSIGN_OR_RETURN(opscope::Tensor scratch, opscope::EmptyOnDevice(opscope::DType::kF32, ctx.in(0).shape(), ctx.device()));
  auto* t = scratch.data<float>();
  float* y = ctx.out(0).data<float>();
  OPSCOPE_RETURN_IF_ERROR(ctx.stream()->Memcpy(t, ctx.in(0).data<float>(), bytes, opscope::CopyKind::kDeviceToDevice));
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<opscope::Stream> side, ctx.device()->CreateStream());
  if (ordered) {
    OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<opscope::Event> copied, ctx.device()->CreateEvent());
    OPSCOPE_RETURN_IF_ERROR(ctx.stream()->Record(*copied));
    OPSCOPE_RETURN_IF_ERROR(side->Wait(*copied));
  }
  OPSCOPE_RETURN_IF_ERROR(side->Launch(OneBlock("side_stream_from_scratch", [=] {
    for (int64_t i = 0; i < n; ++i) y[i] = 2 * t[i] + 1;
  })));
  return side->Synchronize();  // before the scratch is freed (at return)
}

Status SideStreamCpu(KernelContext& ctx) {
  const float* x = ctx.in(0).data<float>();
  float* y = ctx.out(0).data<float>();
  const int64_t n = ctx.in(0).numel();
  const bool ordered = ctx.attrs().i("ordered") != 0;
  if (ctx.attrs().i("scratch") != 0) return SideStreamScratch(ctx, ordered);
  OPSCOPE_RETURN_IF_ERROR(ctx.Launch(OneBlock("side_stream_scale", [=] {
    for (int64_t i = 0; i < n; ++i) y[i] = 2 * x[i];
  })));
  OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<opscope::Stream> side, ctx.device()->CreateStream());
  if (ordered) {
    OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<opscope::Event> scaled, ctx.device()->CreateEvent());
    OPSCOPE_RETURN_IF_ERROR(ctx.stream()->Record(*scaled));
    OPSCOPE_RETURN_IF_ERROR(side->Wait(*scaled));
  }
  OPSCOPE_RETURN_IF_ERROR(side->Launch(OneBlock("side_stream_add", [=] {
    for (int64_t i = 0; i < n; ++i) y[i] += 1;
  })));
  if (ordered) {
    OPSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<opscope::Event> added, ctx.device()->CreateEvent());
    OPSCOPE_RETURN_IF_ERROR(side->Record(*added));
    OPSCOPE_RETURN_IF_ERROR(ctx.stream()->Wait(*added));
  }
  return side->Synchronize();
}

Status SideStreamReference(KernelContext& ctx) {
  for (int64_t i = 0; i < ctx.in(0).numel(); ++i) ctx.out(0).FlatSetFromDouble(i, 2 * ctx.in(0).FlatGetAsDouble(i) + 1);
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("side_stream_sum")
    .Doc("y = 2x + 1, the +1 on a side stream (BUG with ordered=0: no event orders it after the scale)")
    .Input("x").Output("y")
    .Attr("ordered", int64_t{0})
    .Attr("scratch", int64_t{0})
    .TypeConstraint("T", {opscope::DType::kF32})
    .SameShape()
    .Reference(SideStreamReference)
    .Kernel("cpu", SideStreamCpu);
