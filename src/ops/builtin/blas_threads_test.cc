// OpenBLAS's server threads are gone once libopscope is loaded (blas_threads.cc).
#if !defined(OPSCOPE_MINIMAL)
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "ops/builtin/dense_blas.h"

namespace opscope {
namespace {

// The names of this process's threads other than the calling one.
std::vector<std::string> OtherThreadNames() {
  std::vector<std::string> names;
  const std::string self = std::to_string(gettid());
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return names;
  while (dirent* e = readdir(dir)) {
    const std::string tid = e->d_name;
    if (tid == "." || tid == ".." || tid == self) continue;
    std::ifstream comm("/proc/self/task/" + tid + "/comm");
    std::string name;
    std::getline(comm, name);
    names.push_back(name);
  }
  closedir(dir);
  return names;
}

TEST(BlasThreads, OpenBlasKeepsNoThreadsOfItsOwnAfterAGemm) {
  // OpenBLAS's pthread build starts a server thread per further core as it
  // loads, unnamed (they carry the program's name); every thread of ours is
  // named opscope-*. ctest runs this test in a process of its own.
  std::vector<float> a(64 * 64, 1.0f), b(64 * 64, 1.0f), c(64 * 64, 0.0f);
  dense::Gemm(false, false, 64, 64, 64, 1.0f, a.data(), 64, b.data(), 64, 0.0f, c.data(), 64);
  EXPECT_EQ(c[0], 64.0f);
  for (const std::string& name : OtherThreadNames()) {
    EXPECT_EQ(name.rfind("opscope-", 0), 0u) << "a thread not ours: '" << name << "'";
  }
}

}  // namespace
}  // namespace opscope
#endif
