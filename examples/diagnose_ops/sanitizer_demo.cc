// sanitizer_demo: a kernel test of one's own, built with AddressSanitizer and
// UndefinedBehaviorSanitizer, as kernels under development often are. The
// sanitizer finds the bug before any signal does; ops-debug diagnose reads its
// report from the program's stderr and names the kind and the line.
//
//   ops-debug diagnose -- build/bin/sanitizer_demo heap      # heap-buffer-overflow: the row loop reads one past the end
//   ops-debug diagnose -- build/bin/sanitizer_demo overflow  # signed integer overflow in a flattened index
//   ops-debug diagnose -- build/bin/sanitizer_demo           # clean
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

// Row sums of a [rows, cols] matrix; `inclusive_end` is the classic slip of
// a loop bound written `<=`.
__attribute__((noinline)) float RowSum(const float* x, int cols, int row, bool inclusive_end) {
  float s = 0;
  const int end = inclusive_end ? cols : cols - 1;
  for (int c = 0; c <= end; ++c) s += x[row * cols + c];
  return s;
}

// The offset of element (b, i) in a batch of `per_batch` elements, computed
// in int as kernels often do: past 2^31 elements it overflows.
__attribute__((noinline)) int FlatIndex(int b, int per_batch, int i) { return b * per_batch + i; }

}  // namespace

int main(int argc, char** argv) {
  const char* kind = argc > 1 ? argv[1] : "none";
  const int rows = 4, cols = 64;
  auto* x = new float[rows * cols];
  for (int i = 0; i < rows * cols; ++i) x[i] = 1.0f;
  float total = 0;
  for (int r = 0; r < rows; ++r) total += RowSum(x, cols, r, std::strcmp(kind, "heap") == 0);
  delete[] x;
  // 3 batches of 2^30 elements: batch 2 starts at 2^31, past int.
  const volatile int per_batch = std::strcmp(kind, "overflow") == 0 ? 1 << 30 : 1 << 20;
  const long offset = FlatIndex(2, per_batch, 0);
  std::printf("sum %g, offset of batch 2: %ld\n", total, offset);
  return 0;
}
