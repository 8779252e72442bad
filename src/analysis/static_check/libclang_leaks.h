// File: analysis/static_check/libclang_leaks.h
// LeakSanitizer suppressions for libclang, for the executables that parse
// with it (ops-debug, the unit tests): include this header in exactly one
// file of the executable. libclang 14 leaks a few SmallVector buffers per
// parse (about 200 bytes each) even when the translation unit and the index
// are disposed: a bare parse/dispose loop in C, without opscope, shows the
// same leaks. The stacks stop inside libLLVM (built without frame pointers),
// so the suppression names that one allocation site, llvm's SmallVector
// growth; opscope itself links no LLVM, so it cannot hide a leak of ours.
// The "Suppressions used" table is not printed: a tool's stderr is its own
// (the end-to-end tests read it); LSAN_OPTIONS=print_suppressions=1 brings it back.
// The hooks have to be in the executable: the sanitizer runtime's weak default
// is found before a shared library's.
//
//   #include "analysis/static_check/libclang_leaks.h"  // in main.cc
#pragma once

#include "core/asan.h"

#if defined(OPSCOPE_ASAN)
extern "C" const char* __lsan_default_suppressions() {
  return "leak:llvm::SmallVectorBase<unsigned int>::grow_pod\n";
}
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }
#endif
