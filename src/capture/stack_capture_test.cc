#include "capture/stack_capture.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "capture/child_process_test_util.h"

namespace opscope {
namespace {

constexpr int kMaxPcs = 64;
// How far past a small function's entry an address inside it may be, at -O0
// with sanitizers as well as -O2.
constexpr uint64_t kSmallFunctionBytes = 1024;

uint64_t Address(const void* p) { return reinterpret_cast<uint64_t>(p); }

// Each test function records the return address into its caller, which the
// unwinder must report as the frame after it: an exact, independent check.
volatile uint64_t g_return_into_caller = 0;

__attribute__((noinline)) int CaptureFromHere(uint64_t* pcs, int max) {
  g_return_into_caller = Address(__builtin_return_address(0));
  int n = CaptureStackHere(pcs, max);
  asm volatile("" ::: "memory");  // no tail call: this frame must exist
  return n;
}

TEST(StackCaptureTest, CaptureStackHereStartsInTheCaller) {
  uint64_t pcs[kMaxPcs] = {};
  int n = CaptureFromHere(pcs, kMaxPcs);
  ASSERT_GE(n, 3);  // CaptureFromHere, this test, gtest's caller of it...
  // pcs[0]: the return address into CaptureFromHere, after its call.
  const uint64_t entry = Address(reinterpret_cast<const void*>(&CaptureFromHere));
  EXPECT_GT(pcs[0], entry);
  EXPECT_LT(pcs[0], entry + kSmallFunctionBytes);
  EXPECT_EQ(pcs[1], g_return_into_caller);
}

TEST(StackCaptureTest, CaptureStackHereStopsAtMax) {
  uint64_t pcs[4] = {0, 0, 0, 0};
  EXPECT_EQ(CaptureFromHere(pcs, 2), 2);
  EXPECT_NE(pcs[1], 0u);
  EXPECT_EQ(pcs[2], 0u);
  EXPECT_EQ(CaptureStackHere(pcs, 0), 0);
  EXPECT_EQ(CaptureStackHere(nullptr, 4), 0);
  EXPECT_EQ(CaptureStackFromSignal(nullptr, pcs, 4), 0);
}

// What the child's SIGSEGV handler reports.
struct SignalCapture {
  uint64_t interrupted_pc;  // from the ucontext, read directly
  uint64_t return_into_caller;
  int n;
  uint64_t pcs[kMaxPcs];
};

int g_report_fd = -1;

void OnSegv(int, siginfo_t*, void* ucontext) {
  SignalCapture c = {};
  c.interrupted_pc = static_cast<uint64_t>(static_cast<ucontext_t*>(ucontext)->uc_mcontext.gregs[REG_RIP]);
  c.return_into_caller = g_return_into_caller;
  c.n = CaptureStackFromSignal(ucontext, c.pcs, kMaxPcs);
  WriteAll(g_report_fd, &c, sizeof(c));
  _exit(0);
}

__attribute__((noinline)) void WriteToGuardPage(volatile int* p) {
  g_return_into_caller = Address(__builtin_return_address(0));
  *p = 42;  // SIGSEGV: the page is PROT_NONE
}

TEST(StackCaptureTest, CaptureStackFromSignalStartsAtTheFaultingInstruction) {
  ChildProcess child = StartChild([](int fd) {
    g_report_fd = fd;
    void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    // After the sanitizer's own SIGSEGV handler, if any: this one replaces it.
    struct sigaction sa = {};
    sa.sa_sigaction = OnSegv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, nullptr);
    WriteToGuardPage(static_cast<volatile int*>(page));
    _exit(3);  // not reached: the handler exits
  });
  ASSERT_GT(child.pid, 0);
  std::string out = ReadAll(child.fd);
  int status = Reap(child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  ASSERT_EQ(out.size(), sizeof(SignalCapture));
  SignalCapture c;
  std::memcpy(&c, out.data(), sizeof(c));

  ASSERT_GE(c.n, 3);  // WriteToGuardPage, the child's body, what called it...
  EXPECT_EQ(c.pcs[0], c.interrupted_pc) << "the first pc is the faulting instruction, not the handler";
  const uint64_t entry = Address(reinterpret_cast<const void*>(&WriteToGuardPage));
  EXPECT_GE(c.pcs[0], entry);
  EXPECT_LT(c.pcs[0], entry + kSmallFunctionBytes);
  EXPECT_EQ(c.pcs[1], c.return_into_caller);
}

std::string ReadSelfExe() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path));
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "";
}

TEST(StackCaptureTest, SnapshotSelfMapsHoldsTheProcessMappings) {
  static char buf[1 << 20];
  size_t n = SnapshotSelfMaps(buf, sizeof(buf));
  ASSERT_GT(n, 0u);
  ASSERT_LT(n, sizeof(buf));
  EXPECT_EQ(buf[n], '\0');
  EXPECT_EQ(std::strlen(buf), n);
  std::string maps(buf, n);
  EXPECT_NE(maps.find(ReadSelfExe()), std::string::npos) << maps;
  EXPECT_NE(maps.find("libopscope.so"), std::string::npos) << maps;
  EXPECT_NE(maps.find("[stack]"), std::string::npos) << maps;
  // Every line is a mapping: "start-end perms offset dev inode [path]".
  std::istringstream lines(maps);
  for (std::string line; std::getline(lines, line);) {
    unsigned long start = 0, end = 0;
    char perms[5] = {};
    ASSERT_EQ(std::sscanf(line.c_str(), "%lx-%lx %4s", &start, &end, perms), 3) << line;
    EXPECT_LT(start, end) << line;
  }
}

TEST(StackCaptureTest, SnapshotSelfMapsCutsAtTheCapacity) {
  char buf[101];
  std::memset(buf, '#', sizeof(buf));
  EXPECT_EQ(SnapshotSelfMaps(buf, 100), 100u);  // the maps are longer than 100 bytes
  EXPECT_EQ(buf[100], '#') << "wrote past the capacity";
  std::ifstream in("/proc/self/maps");
  std::string first(100, '\0');
  in.read(first.data(), 100);
  EXPECT_EQ(std::string(buf, 100), first);  // the first mapping does not move
  EXPECT_EQ(SnapshotSelfMaps(buf, 0), 0u);
  EXPECT_EQ(SnapshotSelfMaps(nullptr, 100), 0u);
}

}  // namespace
}  // namespace opscope
