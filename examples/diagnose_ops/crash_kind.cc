// crash_kind: y = x, unless the `kind` attribute asks the kernel to die one
// of the ways a kernel dies, so each is seen through ops-debug diagnose:
//   none       y = x (correct)
//   null       writes through a null pointer          SIGSEGV, in no tensor
//   fpe        divides an integer by zero             SIGFPE
//   ill        executes an undefined instruction      SIGILL
//   abort      a failed check that calls abort()      SIGABRT, its message
//   terminate  throws out of a noexcept function      SIGABRT via std::terminate, the exception's text
//   bus        reads a mapped file past its end       SIGBUS
//   kill       is killed (as the OOM killer does)     SIGKILL
//   error      returns an error status, as a device reports a fault
//
//   ops-debug diagnose --plugin libdiagnose_ops.so --op crash_kind --attrs kind=fpe --input-shapes "[64]"
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "opscope/op.h"

namespace {

using opscope::KernelContext;
using opscope::Status;

__attribute__((noinline)) int DivideBy(int d) {
  volatile int divisor = d;  // kept a real division, not folded away
  return 1000 / divisor;
}

__attribute__((noinline)) void Throw() { throw std::runtime_error("crash_kind: the kernel threw and nothing caught it"); }

// The exception cannot leave: std::terminate, as in a kernel callback that is noexcept.
__attribute__((noinline)) void ThrowFromNoexcept() noexcept { Throw(); }

__attribute__((noinline)) int ReadPastMappedFile() {
  char path[] = "/tmp/opscope_crash_kind_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return -1;
  unlink(path);
  const long page = sysconf(_SC_PAGESIZE);
  if (ftruncate(fd, page) != 0) return -1;
  void* p = mmap(nullptr, static_cast<size_t>(2 * page), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return -1;
  return static_cast<volatile char*>(p)[page + 1];  // the file has one page: SIGBUS
}

Status CrashCpu(KernelContext& ctx) {
  const std::string kind = ctx.attrs().s("kind", "none");
  if (kind == "null") {
    volatile int* p = nullptr;
    *p = 1;
  } else if (kind == "fpe") {
    std::printf("%d\n", DivideBy(0));
  } else if (kind == "ill") {
    __builtin_trap();
  } else if (kind == "abort") {
    std::fprintf(stderr, "crash_kind: check failed: n_rows > 0 (n_rows = 0)\n");
    std::abort();
  } else if (kind == "terminate") {
    ThrowFromNoexcept();
  } else if (kind == "bus") {
    std::printf("%d\n", ReadPastMappedFile());
  } else if (kind == "kill") {
    raise(SIGKILL);
  } else if (kind == "error") {
    return opscope::DeviceError("crash_kind: the device reported an uncorrectable ECC error");
  }
  std::memcpy(ctx.out(0).raw_data(), ctx.in(0).raw_data(), ctx.in(0).nbytes());
  return Status::Ok();
}

Status CrashReference(KernelContext& ctx) {
  for (int64_t i = 0; i < ctx.in(0).numel(); ++i) ctx.out(0).FlatSetFromDouble(i, ctx.in(0).FlatGetAsDouble(i));
  return Status::Ok();
}

}  // namespace

OPSCOPE_OP("crash_kind")
    .Doc("y = x, or the kernel dies as `kind` says (null, fpe, ill, abort, terminate, bus, kill, error)")
    .Input("x").Output("y")
    .Attr("kind", std::string("none"), {"none", "null", "fpe", "ill", "abort", "terminate", "bus", "kill", "error"})
    .TypeConstraint("T", {opscope::DType::kF32})
    .SameShape()
    .Reference(CrashReference)
    .Kernel("cpu", CrashCpu);
