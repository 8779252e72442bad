# Every PTX kernel opscope ships, run on a real GPU and checked against the
# host (exit 77, skipped, where none answers). It needs the CUDA runtime
# alone, so the full tree and the minimal tree (tests/minimal.cmake) both
# build it, and tests/gpu/run_on_gpu.sh runs it on a GPU machine with
# nothing but the toolkit.
if(OPSCOPE_WITH_CUDA AND CUDAToolkit_FOUND)
  add_executable(ptx_kernels_check ${CMAKE_CURRENT_LIST_DIR}/ptx_kernels_check.cc)
  target_include_directories(ptx_kernels_check PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests
                             ${PROJECT_SOURCE_DIR}/examples/my_ops)
  target_link_libraries(ptx_kernels_check PRIVATE CUDA::cudart)
  add_test(NAME ptx_kernels_check COMMAND ptx_kernels_check)
  set_tests_properties(ptx_kernels_check PROPERTIES SKIP_RETURN_CODE 77)
endif()
