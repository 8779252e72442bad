#include "device/cpu/checked_allocator.h"

#include <signal.h>
#include <ucontext.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

namespace opscope {
namespace {

// The table the fault handler scans. Fixed-size and lock-free to read; each
// checked allocation also costs three kernel mappings, so the process's map
// limit (65530 by default) is reached long before this many are live.
constexpr int kMaxLive = 32768;

struct Slot {
  std::atomic<bool> live{false};
  AllocationInfo info;
};

Slot g_slots[kMaxLive];
std::atomic<int64_t> g_live{0};

struct Index {
  std::mutex mu;
  std::unordered_map<uintptr_t, int> slot_of;  // begin -> slot
  int next_free_hint = 0;
};

Index& TheIndex() {
  static Index* index = new Index();  // never destroyed: frees may run during exit
  return *index;
}

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Async-signal-safe formatting helpers.
struct Writer {
  char* buf;
  size_t cap;
  size_t len = 0;
  void Put(const char* s) {
    while (*s && len + 1 < cap) buf[len++] = *s++;
    if (cap) buf[len] = '\0';
  }
  void PutDec(uint64_t v) {
    char tmp[24];
    int n = 0;
    do { tmp[n++] = static_cast<char>('0' + v % 10); v /= 10; } while (v);
    char out[24];
    for (int i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    Put(out);
  }
  void PutHex(uint64_t v) {
    char tmp[20];
    int n = 0;
    do { tmp[n++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v);
    char out[24] = {'0', 'x'};
    for (int i = 0; i < n; ++i) out[2 + i] = tmp[n - 1 - i];
    out[2 + n] = '\0';
    Put(out);
  }
};

struct sigaction g_previous_segv, g_previous_bus;
std::atomic<bool> g_handler_installed{false};

// Guard recovery: the pages opened and the first access to each, written by
// the fault handler (lock-free: a slot is claimed with fetch_add).
constexpr int kMaxOpenedPages = 64;
std::atomic<bool> g_recovering{false};
std::atomic<int> g_opened{0};
struct OpenedPage {
  std::atomic<uintptr_t> page{0};
  uintptr_t address = 0;
  AllocationInfo allocation;
  bool write = false;
};
OpenedPage g_pages[kMaxOpenedPages];

bool IsWriteFault(void* context) {
#if defined(__x86_64__)
  const auto* uc = static_cast<const ucontext_t*>(context);
  return (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;  // the page-fault error code's W/R bit
#else
  (void)context;
  return false;
#endif
}

// Opens the guard page under a fault at a checked allocation; false when it
// is not one (or the table is full), and the fault goes on as before.
bool RecoverFromGuardFault(siginfo_t* info, void* context) {
  if (!g_recovering.load(std::memory_order_acquire) || info->si_code <= 0) return false;
  const std::optional<AllocationInfo> a = FindAllocationNear(info->si_addr);
  if (!a) return false;
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  const uintptr_t page = addr & ~(static_cast<uintptr_t>(PageSize()) - 1);
  const int slot = g_opened.fetch_add(1, std::memory_order_acq_rel);
  if (slot >= kMaxOpenedPages) return false;
  if (mprotect(reinterpret_cast<void*>(page), PageSize(), PROT_READ | PROT_WRITE) != 0) return false;
  g_pages[slot].address = addr;
  g_pages[slot].allocation = *a;
  g_pages[slot].write = IsWriteFault(context);
  g_pages[slot].page.store(page, std::memory_order_release);
  return true;  // the access runs again, now on an open page
}

void OnFault(int sig, siginfo_t* info, void* context) {
  if (RecoverFromGuardFault(info, context)) return;
  char line[512];
  size_t n = FormatOutOfBoundsReport(info->si_addr, line, sizeof(line) - 1);
  line[n++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, n);
  (void)ignored;
  // Hand the fault on. Returning re-runs the faulting access, which now goes to
  // the previous handler or the default action; a fault sent by kill() would not
  // recur, so that one is raised again.
  const struct sigaction& previous = sig == SIGBUS ? g_previous_bus : g_previous_segv;
  if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction != nullptr) {
    sigaction(sig, &previous, nullptr);
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    sigaction(sig, &previous, nullptr);
    previous.sa_handler(sig);
    return;
  }
  signal(sig, SIG_DFL);
  if (info->si_code <= 0) raise(sig);
}

}  // namespace

StatusOr<void*> CheckedAllocate(size_t bytes) {
  const size_t page = PageSize();
  const size_t data = std::max<size_t>((bytes + page - 1) / page, 1) * page;
  const size_t total = data + 2 * page;
  void* map = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    return InternalError("checked cpu allocation of " + std::to_string(bytes) + " bytes: mmap failed: " +
                         std::strerror(errno));
  }
  auto base = reinterpret_cast<uintptr_t>(map);
  if (mprotect(reinterpret_cast<void*>(base + page), data, PROT_READ | PROT_WRITE) != 0) {
    int err = errno;
    munmap(map, total);
    return InternalError("checked cpu allocation of " + std::to_string(bytes) + " bytes: mprotect failed: " +
                         std::strerror(err));
  }
  const uintptr_t end = base + page + data;  // first byte of the trailing guard
  AllocationInfo info;
  info.begin = end - bytes;
  info.bytes = bytes;
  info.mapping_begin = base;
  info.mapping_end = base + total;

  Index& index = TheIndex();
  std::lock_guard<std::mutex> lock(index.mu);
  int slot = -1;
  for (int k = 0; k < kMaxLive; ++k) {
    int i = (index.next_free_hint + k) % kMaxLive;
    if (!g_slots[i].live.load(std::memory_order_relaxed)) {
      slot = i;
      break;
    }
  }
  if (slot < 0) {
    munmap(map, total);
    return OutOfRangeError("checked cpu allocation: more than " + std::to_string(kMaxLive) +
                           " live checked buffers");
  }
  index.next_free_hint = (slot + 1) % kMaxLive;
  g_slots[slot].info = info;
  g_slots[slot].live.store(true, std::memory_order_release);
  index.slot_of[info.begin] = slot;
  g_live.fetch_add(1, std::memory_order_relaxed);
  return reinterpret_cast<void*>(info.begin);
}

bool CheckedFree(void* ptr) {
  if (ptr == nullptr) return false;
  AllocationInfo info;
  {
    Index& index = TheIndex();
    std::lock_guard<std::mutex> lock(index.mu);
    auto it = index.slot_of.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == index.slot_of.end()) return false;
    Slot& slot = g_slots[it->second];
    info = slot.info;
    slot.live.store(false, std::memory_order_release);
    index.slot_of.erase(it);
    g_live.fetch_sub(1, std::memory_order_relaxed);
  }
  munmap(reinterpret_cast<void*>(info.mapping_begin), info.mapping_end - info.mapping_begin);
  return true;
}

int64_t LiveCheckedAllocations() { return g_live.load(std::memory_order_relaxed); }

Status LabelCheckedAllocation(const void* ptr, std::string_view label) {
  Index& index = TheIndex();
  std::lock_guard<std::mutex> lock(index.mu);
  auto it = index.slot_of.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == index.slot_of.end()) return NotFoundError("no live checked cpu allocation starts at this address");
  char* dst = g_slots[it->second].info.label;
  size_t n = std::min(label.size(), AllocationInfo::kLabelSize - 1);
  std::memcpy(dst, label.data(), n);
  dst[n] = '\0';
  return Status::Ok();
}

std::optional<AllocationInfo> FindAllocationNear(const void* addr) {
  if (g_live.load(std::memory_order_relaxed) == 0) return std::nullopt;
  auto a = reinterpret_cast<uintptr_t>(addr);
  for (int i = 0; i < kMaxLive; ++i) {
    if (!g_slots[i].live.load(std::memory_order_acquire)) continue;
    const AllocationInfo& info = g_slots[i].info;
    if (a >= info.mapping_begin && a < info.mapping_end) return info;
  }
  return std::nullopt;
}

size_t FormatOutOfBoundsReport(const void* addr, char* buf, size_t cap) {
  Writer w{buf, cap};
  auto a = reinterpret_cast<uintptr_t>(addr);
  std::optional<AllocationInfo> found = FindAllocationNear(addr);
  if (!found) {
    w.Put("opscope: memory fault at ");
    w.PutHex(a);
    w.Put(" (not near any checked cpu allocation)");
    return w.len;
  }
  const AllocationInfo& info = *found;
  const uintptr_t end = info.begin + info.bytes;
  w.Put("opscope: out-of-bounds access at ");
  w.PutHex(a);
  w.Put(" : ");
  // Counted from 1, as elements are ("y[n]: 1 element past the end" is
  // "byte 1 past the end" here): the byte at `end` is the first one past it.
  if (a >= end) {
    w.Put("byte ");
    w.PutDec(a - end + 1);
    w.Put(" past the end of a ");
  } else if (a < info.begin) {
    w.Put("byte ");
    w.PutDec(info.begin - a);
    w.Put(" before the start of a ");
  } else {
    w.Put("inside (a protection fault in) a ");
  }
  w.PutDec(info.bytes);
  w.Put("-byte cpu allocation ");
  w.PutHex(info.begin);
  if (info.label[0] != '\0') {
    w.Put(" (");
    w.Put(info.label);
    w.Put(")");
  }
  return w.len;
}

void SetGuardRecovery(bool on) {
  if (on) {
    InstallOutOfBoundsHandler();
    g_opened.store(0, std::memory_order_release);
  }
  g_recovering.store(on, std::memory_order_release);
}

std::vector<GuardAccess> TakeGuardAccesses() {
  std::vector<GuardAccess> out;
  const int n = std::min(g_opened.load(std::memory_order_acquire), kMaxOpenedPages);
  for (int i = 0; i < n; ++i) {
    const uintptr_t page = g_pages[i].page.load(std::memory_order_acquire);
    if (page == 0 || !FindAllocationNear(reinterpret_cast<const void*>(page))) continue;  // freed since
    bool seen = false;  // two threads may have opened the same page
    for (const GuardAccess& g : out) seen = seen || (g.address & ~(static_cast<uintptr_t>(PageSize()) - 1)) == page;
    GuardAccess g{.address = g_pages[i].address, .allocation = g_pages[i].allocation, .write = g_pages[i].write};
    const uintptr_t end = g.allocation.begin + g.allocation.bytes;
    if (page >= end) {  // the trailing guard: what was written past the end
      const auto* bytes = reinterpret_cast<const unsigned char*>(page);
      g.past_end.assign(bytes, bytes + PageSize());
    }
    if (!seen) out.push_back(g);
    std::memset(reinterpret_cast<void*>(page), 0, PageSize());
    mprotect(reinterpret_cast<void*>(page), PageSize(), PROT_NONE);
    g_pages[i].page.store(0, std::memory_order_release);
  }
  g_opened.store(0, std::memory_order_release);
  return out;
}

void InstallOutOfBoundsHandler() {
  if (g_handler_installed.exchange(true)) return;
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_sigaction = OnFault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &g_previous_segv);
  sigaction(SIGBUS, &action, &g_previous_bus);
}

}  // namespace opscope
