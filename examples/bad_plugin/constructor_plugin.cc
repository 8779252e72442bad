// A library that acts the moment it is loaded, as a hostile one would: its
// constructor writes the file OPSCOPE_TEST_LOADED_MARKER names. The tests of
// someone else's run folder (tests/foreign_folder_test.cc) name it in a
// capture.json and check that no reading command ever loads it.
#include <cstdio>
#include <cstdlib>

__attribute__((constructor)) static void MarkLoaded() {
  const char* marker = std::getenv("OPSCOPE_TEST_LOADED_MARKER");
  if (marker == nullptr) return;
  if (std::FILE* f = std::fopen(marker, "w")) {
    std::fputs("loaded\n", f);
    std::fclose(f);
  }
}
