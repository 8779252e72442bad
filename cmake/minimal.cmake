# OPSCOPE_MINIMAL: the tree a GPU machine builds with nothing but the CUDA
# toolkit, g++, CMake and ninja (the device machine a task may be lent: none
# of Debian's -dev packages). Included by the top-level CMakeLists.txt in
# place of its find_package calls and subdirectories.
#
# What it holds: core, device (cpu and cuda), ops, capture and analysis in
# libopscope, ops-debug, the example plugins, and the tests of the cuda half
# (the device conformance suite, ptx_assemble_test, ptx_kernels_check).
# What it leaves out, and what answers instead (a *_minimal.cc beside the
# files it replaces, src/CMakeLists.txt):
#   ONNX, protobuf    graph/ and report/, inspector-cli: the model calls of
#                     opscope/model.h answer "not in this build"
#   libclang          ops-debug check says so, exit 2
#   libdw, libunwind  diagnose takes no stacks and says so
#   OpenBLAS          a plain GEMM (ops/builtin/plain_gemm.h); calibrate says so
#   SLEEF             the float32 transcendentals keep their scalar loops
#   zlib              .npz members stored, not deflated (np.savez, not
#                     savez_compressed): a deflated one is refused in one line
#   the Python module, benchmarks, fuzz targets, the web UI tests
#
# Its header-only dependencies come from one folder, OPSCOPE_MINIMAL_DEPS,
# that tests/gpu/gather_deps.sh fills from this machine's packages.

set(OPSCOPE_MINIMAL_DEPS ${PROJECT_SOURCE_DIR}/minimal_deps CACHE PATH
    "the folder tests/gpu/gather_deps.sh fills (fmt, nlohmann/json, CLI11, googletest)")
if(NOT EXISTS ${OPSCOPE_MINIMAL_DEPS}/include/fmt/format.h OR NOT EXISTS ${OPSCOPE_MINIMAL_DEPS}/googletest/CMakeLists.txt)
  message(FATAL_ERROR "OPSCOPE_MINIMAL: ${OPSCOPE_MINIMAL_DEPS} holds no gathered dependencies: "
                      "run tests/gpu/gather_deps.sh on a machine with the packages, or set OPSCOPE_MINIMAL_DEPS")
endif()
if(OPSCOPE_SANITIZE OR OPSCOPE_FUZZ)
  message(FATAL_ERROR "OPSCOPE_MINIMAL is an optimised or -O0 build only: leave OPSCOPE_SANITIZE and OPSCOPE_FUZZ off")
endif()
set(OPSCOPE_BUILD_BENCH OFF)
set(OPSCOPE_BUILD_TOOLS ON)  # ops-debug alone (src/cli/CMakeLists.txt)
# One macro for the few places that answer differently (calibrate's GEMM
# label, diagnose's and profile's pages): every object of the tree sees it.
add_compile_definitions(OPSCOPE_MINIMAL=1)

# The headers a minimal file must never need, each an #error naming what it
# belongs to, searched before the system's: a machine that has the package
# (this one) fails the build as the GPU machine would, instead of passing.
set(left_out_dir ${PROJECT_BINARY_DIR}/left_out_headers)
set(left_out_headers
    "onnx/onnx_pb.h|ONNX" "onnx/defs/schema.h|ONNX" "onnx/shape_inference/implementation.h|ONNX"
    "onnx/checker.h|ONNX" "google/protobuf/message.h|protobuf" "google/protobuf/text_format.h|protobuf"
    "cblas.h|OpenBLAS" "openblas_config.h|OpenBLAS" "sleef.h|SLEEF" "libunwind.h|libunwind"
    "elfutils/libdw.h|libdw" "elfutils/libdwfl.h|libdw" "dwarf.h|libdw" "clang-c/Index.h|libclang"
    "zlib.h|zlib" "benchmark/benchmark.h|Google Benchmark" "pybind11/pybind11.h|pybind11")
foreach(entry IN LISTS left_out_headers)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 header)
  list(GET parts 1 package)
  file(CONFIGURE OUTPUT ${left_out_dir}/${header} CONTENT
       "#error \"<${header}>: ${package} is not in the minimal build (OPSCOPE_MINIMAL, cmake/minimal.cmake): give this file a *_minimal.cc stand-in, or leave it out\"\n")
endforeach()
include_directories(BEFORE SYSTEM ${left_out_dir})
# A symbol of a left-out library that slips through fails the link of
# libopscope.so here, not the loading of it there.
add_link_options($<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,SHARED_LIBRARY>:LINKER:--no-undefined>)

# fmt header-only, nlohmann/json and CLI11: include paths over the gathered folder.
add_library(fmt::fmt INTERFACE IMPORTED)
target_include_directories(fmt::fmt SYSTEM INTERFACE ${OPSCOPE_MINIMAL_DEPS}/include)
target_compile_definitions(fmt::fmt INTERFACE FMT_HEADER_ONLY=1)
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE ${OPSCOPE_MINIMAL_DEPS}/include)
add_library(CLI11::CLI11 INTERFACE IMPORTED)
target_include_directories(CLI11::CLI11 SYSTEM INTERFACE ${OPSCOPE_MINIMAL_DEPS}/include)
# GoogleTest from its sources, compiled as the tests are (-O0), no gmock.
set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
add_subdirectory(${OPSCOPE_MINIMAL_DEPS}/googletest ${PROJECT_BINARY_DIR}/googletest EXCLUDE_FROM_ALL)
foreach(t gtest gtest_main)
  opscope_test_code(${t})
  target_compile_options(${t} PRIVATE -w)  # its warnings are not ours to read
endforeach()

if(OPSCOPE_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
endif()

enable_testing()
include(GNUInstallDirs)
add_subdirectory(src)
add_subdirectory(examples)
add_subdirectory(tests)

include(cmake/unity_batches.cmake)
if(OPSCOPE_UNITY)
  opscope_unity_batches()
endif()
