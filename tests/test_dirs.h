// The source and build folders of the running test program, found at run
// time. Force-included (-include) into every test and fuzz program, it defines
// OPSCOPE_SOURCE_DIR and OPSCOPE_BINARY_DIR as expressions of type
// std::string.
//
// Why not -DOPSCOPE_SOURCE_DIR="/abs/path" on the command line: an absolute
// path in a define reaches the preprocessed text, so every test object missed
// ccache in every fresh clone (CI builds one per run), and the tests are most
// of what is compiled. Found here instead, the objects are the same in every
// clone.
//
// Both are read from the CMakeCache.txt of the build folder the program runs
// from: the one above bin/.
#ifndef OPSCOPE_TESTS_TEST_DIRS_H_
#define OPSCOPE_TESTS_TEST_DIRS_H_

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace opscope_test_dirs {

[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "test_dirs.h: %s\n", what.c_str());
  std::abort();
}

inline std::string ParentOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos || slash == 0 ? std::string("/") : path.substr(0, slash);
}

// The folder above bin/, where CMake puts every program (CMAKE_RUNTIME_OUTPUT_DIRECTORY).
inline std::string BuildFolderOfThisProgram() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) Fail("cannot read /proc/self/exe: expected a test program under <build>/bin");
  const std::string bin = ParentOf(std::string(buf, static_cast<size_t>(n)));
  if (bin.size() < 4 || bin.compare(bin.size() - 4, 4, "/bin") != 0) {
    Fail("this program is in " + bin + ": expected a test program under <build>/bin");
  }
  return ParentOf(bin);
}

// A value of that build folder's CMakeCache.txt: the folders as CMake spelled
// them when it configured (the same strings the old defines held, links kept).
inline std::string CacheValue(const std::string& key) {
  const std::string cache = BuildFolderOfThisProgram() + "/CMakeCache.txt";
  std::ifstream in(cache);
  const std::string prefix = key + ":INTERNAL=";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  Fail(cache + ": expected a CMake cache naming " + key);
}

inline const std::string& BinaryDir() {
  static const std::string dir = CacheValue("CMAKE_CACHEFILE_DIR");
  return dir;
}

inline const std::string& SourceDir() {
  static const std::string dir = CacheValue("CMAKE_HOME_DIRECTORY");
  return dir;
}

}  // namespace opscope_test_dirs

#define OPSCOPE_SOURCE_DIR (::opscope_test_dirs::SourceDir())
#define OPSCOPE_BINARY_DIR (::opscope_test_dirs::BinaryDir())

#endif  // OPSCOPE_TESTS_TEST_DIRS_H_
