// OpenBLAS made single-threaded as libopscope loads, its server threads
// stopped (dense_blas.h says why it is single-threaded at all).
//
// openblas_set_num_threads(1) alone leaves the pthread build's server threads
// polling sched_yield for OpenBLAS's thread timeout (2^28 cycles, about 0.1 s)
// after the call, and after their start when the library loaded: a whole core
// while a short run was timed. perf showed one of them with 17% of all
// samples of an `inspector-cli run` of the encoder (40 iterations), and the
// span's median moved from 2.7 to 2.3 ms with OPENBLAS_NUM_THREADS=1, which
// keeps them from starting. blas_thread_shutdown_ ends them; with one thread
// OpenBLAS never starts them again. It is weak: the serial and OpenMP builds
// of OpenBLAS have no server, and no such symbol.
//
// Not under a cap on address space or data (ulimit -v, -d): a server thread
// that cannot allocate its buffer retries for ever, and joining it hung the
// process at load (bad_input_cli_test's OutOfMemory case). There the threads
// stay, and spin their 0.1 s.
#if !defined(OPSCOPE_MINIMAL)
#include <cblas.h>
#include <sys/resource.h>

#include "ops/builtin/dense_blas.h"

extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace opscope::dense {

namespace {
bool MemoryCapped() {
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    rlimit limit{};
    if (getrlimit(resource, &limit) != 0 || limit.rlim_cur != RLIM_INFINITY) return true;
  }
  return false;
}
}  // namespace

void BlasSingleThreaded() {
  static const bool once = [] {
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_ != nullptr && !MemoryCapped()) blas_thread_shutdown_();
    return true;
  }();
  (void)once;
}

namespace {
// At load: libopenblas, a dependency, is initialised before this library.
const bool kSingleThreadedAtLoad = (BlasSingleThreaded(), true);
}  // namespace

}  // namespace opscope::dense
#endif
