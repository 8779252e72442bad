#include "analysis/diagnose/symbolize.h"

#include <gtest/gtest.h>

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "capture/child_process_test_util.h"
#include "capture/stack_capture.h"

namespace opscope {
namespace {

constexpr int kMaxPcs = 64;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string SelfExe() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path));
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "";
}

// ---- A child that crashes: its handler reports pcs and maps, the test symbolises.

// The lines the child was on, recorded by the child itself (volatile: stored
// before the fault, in program order), so no line number here is hard-coded.
volatile int g_fault_line = 0;
volatile int g_call_line = 0;
volatile int g_after_call = 0;

__attribute__((noinline)) void WriteToGuardPage(volatile int* p) {
  g_fault_line = __LINE__; *p = 42;  // SIGSEGV: the page is PROT_NONE
}

__attribute__((noinline)) void CrashInChild(volatile int* p) {
  g_call_line = __LINE__; WriteToGuardPage(p);
  // The return address into this function is this next line's code: only
  // looking it up at pc - 1 finds the call's line.
  g_after_call = 1;
}

struct CrashReport {
  int fault_line;
  int call_line;
  int n;
  uint64_t pcs[kMaxPcs];
};

int g_report_fd = -1;
char g_maps[1 << 20];  // static: the handler has neither heap nor much stack

void OnSymbolizeSegv(int, siginfo_t*, void* ucontext) {
  CrashReport r = {};
  r.n = CaptureStackFromSignal(ucontext, r.pcs, kMaxPcs);
  r.fault_line = g_fault_line;
  r.call_line = g_call_line;
  size_t maps_len = SnapshotSelfMaps(g_maps, sizeof(g_maps));
  WriteAll(g_report_fd, &r, sizeof(r));
  WriteAll(g_report_fd, g_maps, maps_len);
  _exit(0);
}

TEST(SymbolizeTest, CrashedChildsStackNamesTheFaultingFunctionFileAndLine) {
  ChildProcess child = StartChild([](int fd) {
    g_report_fd = fd;
    void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct sigaction sa = {};  // replaces ASan's SIGSEGV handler in the ASan build
    sa.sa_sigaction = OnSymbolizeSegv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, nullptr);
    CrashInChild(static_cast<volatile int*>(page));
    _exit(3);  // not reached: the handler exits
  });
  ASSERT_GT(child.pid, 0);
  std::string out = ReadAll(child.fd);
  int status = Reap(child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  ASSERT_GT(out.size(), sizeof(CrashReport));
  CrashReport r;
  std::memcpy(&r, out.data(), sizeof(r));
  ASSERT_GE(r.n, 3);
  ASSERT_GT(r.fault_line, 0);
  std::string maps = out.substr(sizeof(r));

  // The child is gone: only its pcs and maps text are left.
  std::vector<uint64_t> pcs(r.pcs, r.pcs + r.n);
  std::vector<StackFrame> frames = SymbolizeStack(pcs, maps);
  ASSERT_EQ(frames.size(), pcs.size());
  std::string stack;
  for (const StackFrame& f : frames) stack += FormatFrame(f) + "\n";

  const StackFrame& fault = frames[0];
  EXPECT_EQ(fault.pc, pcs[0]);
  EXPECT_NE(fault.function.find("WriteToGuardPage(int volatile*)"), std::string::npos) << stack;
  EXPECT_TRUE(EndsWith(fault.file, "analysis/diagnose/symbolize_test.cc")) << stack;
  EXPECT_EQ(fault.line, r.fault_line) << stack;
  EXPECT_EQ(fault.module, SelfExe()) << stack;
  EXPECT_LT(fault.module_offset, fault.pc);  // a PIE's own address, not the mapped one

  const StackFrame& caller = frames[1];
  EXPECT_NE(caller.function.find("CrashInChild"), std::string::npos) << stack;
  EXPECT_EQ(caller.line, r.call_line) << stack;
  EXPECT_NE(FormatFrame(fault).find("symbolize_test.cc:" + std::to_string(r.fault_line)), std::string::npos)
      << stack;
}

__attribute__((noinline)) std::vector<StackFrame> SymbolizeHere() {
  uint64_t pcs[kMaxPcs];
  int n = CaptureStackHere(pcs, kMaxPcs);
  std::ifstream in("/proc/self/maps");
  std::string maps((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // CaptureStackHere's pcs are all return addresses.
  return SymbolizeStack(std::vector<uint64_t>(pcs, pcs + n), maps, /*first_return_address=*/0);
}

TEST(SymbolizeTest, OwnStackFromCaptureStackHere) {
  std::vector<StackFrame> frames = SymbolizeHere();
  ASSERT_GE(frames.size(), 2u);
  EXPECT_NE(frames[0].function.find("SymbolizeHere"), std::string::npos) << FormatFrame(frames[0]);
  EXPECT_NE(frames[1].function.find("OwnStackFromCaptureStackHere"), std::string::npos) << FormatFrame(frames[1]);
  EXPECT_TRUE(EndsWith(frames[1].file, "symbolize_test.cc")) << FormatFrame(frames[1]);
}

// ---- A child that hangs: every thread unwound over ptrace while it runs.

volatile bool g_stop = false;

__attribute__((noinline)) void SpinForever(int ready_fd) {
  char ready = 1;
  WriteAll(ready_fd, &ready, 1);
  while (!g_stop) {
  }
}

TEST(SymbolizeTest, HungChildsThreadsAreAllUnwound) {
  ChildProcess child = StartChild([](int fd) {
    pthread_t spinner;
    pthread_create(
        &spinner, nullptr,
        [](void* fd) -> void* {
          SpinForever(static_cast<int>(reinterpret_cast<intptr_t>(fd)));
          return nullptr;
        },
        reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
    for (;;) pause();
  });
  ASSERT_GT(child.pid, 0);
  char ready = 0;
  ASSERT_EQ(read(child.fd, &ready, 1), 1);  // the spinner is in SpinForever

  auto threads = ThreadStacksOfProcess(child.pid);
  kill(child.pid, SIGKILL);
  close(child.fd);
  Reap(child);
  ASSERT_TRUE(threads.ok()) << threads.status().ToString();

  ASSERT_GE(threads->size(), 2u);
  bool found_main = false, found_spinner = false;
  std::string all;
  for (const ThreadStack& t : *threads) {
    all += "thread " + std::to_string(t.tid) + " " + t.name + "\n";
    for (const StackFrame& f : t.frames) all += "  " + FormatFrame(f) + "\n";
    EXPECT_GT(t.tid, 0);
    EXPECT_FALSE(t.name.empty());
    found_main = found_main || t.tid == child.pid;
    for (const StackFrame& f : t.frames) {
      found_spinner = found_spinner || f.function.find("SpinForever") != std::string::npos;
    }
  }
  EXPECT_TRUE(found_main) << all;
  EXPECT_TRUE(found_spinner) << all;
}

// ---- What must fail cleanly.

TEST(SymbolizeTest, ThreadStacksOfAProcessThatCannotBeTracedIsAnError) {
  EXPECT_EQ(ThreadStacksOfProcess(0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ThreadStacksOfProcess(-3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ThreadStacksOfProcess(getpid()).ok());

  int pid_max = 0;
  std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
  ASSERT_GT(pid_max, 0);
  EXPECT_EQ(ThreadStacksOfProcess(pid_max + 1).status().code(), StatusCode::kNotFound);

  // A process some tracer (here: this one, by PTRACE_TRACEME) already traces
  // cannot be attached again.
  ChildProcess traced = StartChild([](int fd) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    char ready = 1;
    WriteAll(fd, &ready, 1);
    for (;;) pause();
  });
  ASSERT_GT(traced.pid, 0);
  char ready = 0;
  ASSERT_EQ(read(traced.fd, &ready, 1), 1);
  auto threads = ThreadStacksOfProcess(traced.pid);
  kill(traced.pid, SIGKILL);
  close(traced.fd);
  Reap(traced);
  EXPECT_FALSE(threads.ok());
}

TEST(SymbolizeTest, UnknownMappingsLeaveFramesUnknown) {
  uint64_t pcs[kMaxPcs];
  int n = CaptureStackHere(pcs, kMaxPcs);
  ASSERT_GT(n, 0);
  std::vector<uint64_t> stack(pcs, pcs + n);
  for (std::string_view maps : {std::string_view(""), std::string_view("not a maps line\n\x01\x02\xff garbage"),
                                std::string_view("zzzz-yyyy r-xp\n")}) {
    std::vector<StackFrame> frames = SymbolizeStack(stack, maps, 0);
    ASSERT_EQ(frames.size(), stack.size());
    for (const StackFrame& f : frames) {
      EXPECT_TRUE(f.function.empty()) << FormatFrame(f);
      EXPECT_TRUE(f.module.empty()) << FormatFrame(f);
      EXPECT_EQ(FormatFrame(f), fmt::format("{:#x}", f.pc));
    }
  }
  // A mapping of a file that is not there: the module is known, nothing else.
  std::vector<StackFrame> frames = SymbolizeStack(
      {0x7f0000000800}, "7f0000000000-7f0000001000 r-xp 00000000 08:01 4242 /nonexistent/libgone.so\n", 0);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].module, "/nonexistent/libgone.so");
  EXPECT_TRUE(frames[0].function.empty());
  EXPECT_TRUE(frames[0].file.empty());
  EXPECT_EQ(SymbolizeStack({}, "", 1).size(), 0u);
}

TEST(SymbolizeTest, FormatFrameLeavesOutWhatIsUnknown) {
  StackFrame f{.pc = 0x7f1234,
               .module = "/work/build/lib/libopscope.so",
               .module_offset = 0x1234,
               .function = "opscope::Foo(int)",
               .file = "src/x.cc",
               .line = 12};
  EXPECT_EQ(FormatFrame(f), "opscope::Foo(int) at src/x.cc:12 (libopscope.so+0x1234)");
  f.file.clear();
  EXPECT_EQ(FormatFrame(f), "opscope::Foo(int) (libopscope.so+0x1234)");
  f.function.clear();
  EXPECT_EQ(FormatFrame(f), "?? (libopscope.so+0x1234)");
  f.module.clear();
  EXPECT_EQ(FormatFrame(f), "0x7f1234");
}

}  // namespace
}  // namespace opscope
