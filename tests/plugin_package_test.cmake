# plugin_package_test: a plugin built outside this tree, against the installed
# package, with include/opscope/ alone. Installs libopscope into a temporary
# prefix, configures and builds examples/my_ops as its own CMake project with
# find_package(opscope), and runs one of its ops through the real ops-debug.
# CXX is the compiler that built the package: clang 14 and g++ 12 over one
# libstdc++ disagree on what Status's source location is (clang 14 has no
# std::source_location), so a plugin is built by the library's compiler.
#   cmake -DBIN=<build dir> -DSRC=<source dir> -DWORK=<scratch dir> -DCXX=<c++ compiler> -P plugin_package_test.cmake
foreach(v BIN SRC WORK CXX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "plugin_package_test: pass -D${v}=...")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "plugin_package_test: ${what} failed (${rc}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step("install" ${CMAKE_COMMAND} --install ${BIN} --prefix ${WORK}/prefix)
# The package holds the public headers only: no private header of src/ leaks out.
file(GLOB_RECURSE installed_headers RELATIVE ${WORK}/prefix ${WORK}/prefix/*.h)
foreach(h ${installed_headers})
  if(NOT h MATCHES "^include/opscope/[a-z_]+\\.h$")
    message(FATAL_ERROR "plugin_package_test: the package installs ${h}, outside include/opscope/")
  endif()
endforeach()

set(launcher)
find_program(CCACHE ccache)
if(CCACHE)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CCACHE})
endif()
step("configuring examples/my_ops against the package"
     ${CMAKE_COMMAND} -S ${SRC}/examples/my_ops -B ${WORK}/my_ops -G Ninja -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_CXX_COMPILER=${CXX} ${launcher})
step("building examples/my_ops against the package" ${CMAKE_COMMAND} --build ${WORK}/my_ops)
set(plugin ${WORK}/my_ops/lib/libmy_ops.so)
if(NOT EXISTS ${plugin})
  message(FATAL_ERROR "plugin_package_test: the build made no ${plugin}")
endif()
# The tools are installed too, and run from the prefix (the library beside them).
foreach(tool ops-debug inspector-cli)
  if(NOT EXISTS ${WORK}/prefix/bin/${tool})
    message(FATAL_ERROR "plugin_package_test: cmake --install made no ${WORK}/prefix/bin/${tool}")
  endif()
endforeach()
step("the installed ops-debug with the outside-built plugin"
     ${WORK}/prefix/bin/ops-debug run --plugin ${plugin} --op my_norm --input-shapes [4,64] --seed 1)
if(NOT step_output MATCHES "my_norm")
  message(FATAL_ERROR "plugin_package_test: ops-debug did not report my_norm:\n${step_output}")
endif()
message(STATUS "plugin_package_test: my_ops built against ${WORK}/prefix and ran:\n${step_output}")

# The build tree is a package as well: -DCMAKE_PREFIX_PATH=<build dir>.
step("configuring examples/my_ops against the build tree"
     ${CMAKE_COMMAND} -S ${SRC}/examples/my_ops -B ${WORK}/my_ops_tree -G Ninja -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_PREFIX_PATH=${BIN} -DCMAKE_CXX_COMPILER=${CXX} ${launcher})
step("building examples/my_ops against the build tree" ${CMAKE_COMMAND} --build ${WORK}/my_ops_tree)
step("ops-debug with the plugin built against the build tree"
     ${BIN}/bin/ops-debug run --plugin ${WORK}/my_ops_tree/lib/libmy_ops.so --op my_norm --input-shapes [4,64] --seed 1)
if(NOT step_output MATCHES "PASSED")
  message(FATAL_ERROR "plugin_package_test: the plugin built against the build tree did not pass:\n${step_output}")
endif()
