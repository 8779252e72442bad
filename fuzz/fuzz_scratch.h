// File: fuzz/fuzz_scratch.h
// A folder of the fuzzer process's own for the parsers that read files by
// path (.npz, session and run folders, serve's folder): each input is written
// there, then read back through the same call the tools make. Under /dev/shm
// when it exists, so an execution costs no disk write.
//
//   static const std::string dir = opscope::fuzz::ScratchDir();
//   opscope::fuzz::WriteScratchFile(dir + "/session.json", data, size);
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace opscope::fuzz {

// Made once per process and removed at exit; aborts when it cannot be made,
// as no input could be tried.
inline std::string ScratchDir() {
  std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
  std::string tmpl = base + "/opscope-fuzz-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("opscope fuzz: mkdtemp");
    std::abort();
  }
  static std::string removed_at_exit;
  removed_at_exit = tmpl;
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(removed_at_exit, ec);
  });
  return tmpl;
}

inline void WriteScratchFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::perror(("opscope fuzz: writing " + path).c_str());
    std::abort();
  }
}

inline void RemoveScratchFile(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

// The file the seed script leaves beside the targets, read at startup
// (a run folder's fixed files); empty when it is not there.
inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace opscope::fuzz
