// File: core/asan.h
// OPSCOPE_ASAN is defined where this file is compiled under AddressSanitizer:
// g++ says so with __SANITIZE_ADDRESS__, clang only through __has_feature.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define OPSCOPE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPSCOPE_ASAN 1
#endif
#endif
