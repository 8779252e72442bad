# The minimal build's libopscope, ops-debug and nothing more (cmake/minimal.cmake
# says what it leaves out and why). Included by src/CMakeLists.txt after the
# layer include folders and opscope_component are set up, in place of the
# full build's library section.

# Folders left out whole: graph/ and report/ need ONNX and protobuf; layout/
# is used by nothing below graph. Only their *_minimal.cc stand-ins build.
set(opscope_minimal_left_out_folders "^(layout|graph/.*|report)$")
# Files that need a left-out package, each with a *_minimal.cc stand-in in its folder.
set(opscope_minimal_left_out_files
    core/gzip.cc                    # zlib (its only caller is the report page)
    core/zip_deflate.cc             # zlib
    ops/builtin/ew_vecmath_avx2.cc  # SLEEF
    capture/stack_capture.cc        # libunwind
    analysis/diagnose/symbolize.cc  # libdw
)
# libclang: every file of the room but the JSON writer of its results.
file(GLOB static_check_files RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/analysis/static_check/*.cc)
list(FILTER static_check_files EXCLUDE REGEX "(_test|_minimal|static_check_json)\\.cc$")
list(APPEND opscope_minimal_left_out_files ${static_check_files})

function(opscope_minimal_sources name srcs_var)
  set(kept "")
  foreach(src IN LISTS ${srcs_var})
    file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${src})
    if(name MATCHES "${opscope_minimal_left_out_folders}" AND NOT rel MATCHES "_minimal\\.cc$")
      continue()
    endif()
    if(rel IN_LIST opscope_minimal_left_out_files)
      continue()
    endif()
    list(APPEND kept ${src})
  endforeach()
  set(${srcs_var} ${kept} PARENT_SCOPE)
endfunction()

set(library_layers ${OPSCOPE_LAYERS})
list(REMOVE_ITEM library_layers cli)
set(below "")
set(opscope_objects)
foreach(c ${library_layers})
  opscope_component(${c} "${below}")
  string(REPLACE "/" "_" id ${c})
  if(TARGET opscope_${id})
    list(APPEND opscope_objects $<TARGET_OBJECTS:opscope_${id}>)
    set(below ${c})
  endif()
endforeach()
# As in the full build: the AVX2 small-k GEMM keeps its own flags and stays out of unity batches.
set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/ops/builtin/dense_smallk_avx2.cc PROPERTIES
                            COMPILE_OPTIONS "-mavx2;-mfma" SKIP_UNITY_BUILD_INCLUSION ON)
target_compile_options(opscope_ops PRIVATE $<$<CXX_COMPILER_ID:GNU>:-ftree-vectorize -fvect-cost-model=dynamic>
                       -fno-math-errno -fno-trapping-math)
target_compile_definitions(opscope_analysis_calibrate PRIVATE OPSCOPE_VERSION="${PROJECT_VERSION}")

add_library(opscope SHARED ${opscope_objects})
add_library(opscope::opscope ALIAS opscope)
if(OPSCOPE_TRACEPOINTS)
  target_compile_definitions(opscope PUBLIC OPSCOPE_ENABLE_TRACEPOINTS)
endif()
target_compile_features(opscope PUBLIC cxx_std_20)
target_include_directories(opscope PUBLIC ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(opscope PUBLIC Threads::Threads ${CMAKE_DL_LIBS} PRIVATE fmt::fmt nlohmann_json::nlohmann_json)

add_library(opscope_internal INTERFACE)
target_include_directories(opscope_internal INTERFACE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(opscope_internal INTERFACE opscope fmt::fmt nlohmann_json::nlohmann_json)

if(OPSCOPE_WITH_CUDA AND CUDAToolkit_FOUND)
  add_subdirectory(device/cuda)
  target_compile_definitions(opscope_device PRIVATE OPSCOPE_CUDA_BACKEND_BUILT=1)
elseif(OPSCOPE_WITH_CUDA)
  message(WARNING "cuda backend not built: no CUDA toolkit found (set CUDAToolkit_ROOT)")
endif()

add_subdirectory(cli)
