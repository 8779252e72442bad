# The minimal build's tests (cmake/minimal.cmake): the cuda half's, which a
# GPU machine with only the toolkit runs (tests/gpu/run_on_gpu.sh). Each case
# of a program is its own ctest test, as in tests/CMakeLists.txt.
include(GoogleTest)
set(minimal_tests device_conformance_test)
find_program(OPSCOPE_PTXAS_PROGRAM ptxas HINTS ${CUDAToolkit_BIN_DIR})
if(OPSCOPE_WITH_CUDA AND CUDAToolkit_FOUND AND OPSCOPE_PTXAS_PROGRAM)
  list(APPEND minimal_tests ptx_assemble_test)
endif()
foreach(name ${minimal_tests})
  add_executable(${name} ${name}.cc)
  opscope_test_code(${name})
  target_link_libraries(${name} PRIVATE opscope_internal GTest::gtest_main)
  target_compile_options(${name} PRIVATE -include ${PROJECT_SOURCE_DIR}/tests/test_dirs.h)
  gtest_discover_tests(${name} TEST_PREFIX "${name}." NO_PRETTY_VALUES DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60)
endforeach()
if(TARGET ptx_assemble_test)
  target_compile_definitions(ptx_assemble_test PRIVATE OPSCOPE_PTXAS="${OPSCOPE_PTXAS_PROGRAM}")
endif()

include(${CMAKE_CURRENT_SOURCE_DIR}/gpu/ptx_kernels_check.cmake)
