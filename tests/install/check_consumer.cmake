# cmake -DPREFIX=... -DWORK_DIR=... -DSOURCE_DIR=<scangen's sources> -DGENERATOR=... -P check_consumer.cmake
# A user's project against the installed scangen at PREFIX (see check_install.cmake):
#  1. consumer/: scangen_add_library (with an imported C++ header) + the JIT API, configured,
#     built without a warning, run;
#  2. regeneration: nothing is rebuilt without a change; a file's code is regenerated when the
#     .scan file changes, or a header it imports (or one that header includes);
#  3. samples/host_jit builds alone against the installed package and runs;
#  4. find_package(scangen 0.2) is refused by the version file.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}${err}")
  endif()
  set(step_output "${out}${err}" PARENT_SCOPE)
endfunction()

set(project ${WORK_DIR}/consumer-src)
set(build ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})
file(COPY ${CMAKE_CURRENT_LIST_DIR}/consumer/ DESTINATION ${project})
file(COPY ${SOURCE_DIR}/samples/host_jit/smooth.scan DESTINATION ${project})

run_step("configuring the consumer" ${CMAKE_COMMAND} -S ${project} -B ${build} -G ${GENERATOR}
  -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release)
run_step("building the consumer" ${CMAKE_COMMAND} --build ${build})
if(step_output MATCHES "warning")
  message(FATAL_ERROR "building the consumer warned:\n${step_output}")
endif()
run_step("running the consumer" ${build}/consumer ${project})
message(STATUS "${step_output}")
if(NOT step_output MATCHES "clip: largest \\|y\\| = 0.5\n")
  message(FATAL_ERROR "clip.scan did not clip at consumer_math.h's bound 0.5:\n${step_output}")
endif()

# The generated sources name the .scan file relative to the project, not by this machine's path.
file(READ ${build}/filters_scangen/smooth.cpp generated)
string(FIND "${generated}" "${project}" absolute)
if(NOT absolute EQUAL -1)
  message(FATAL_ERROR "the generated smooth.cpp names the absolute path ${project}")
endif()

run_step("building again" ${CMAKE_COMMAND} --build ${build})
if(step_output MATCHES "scangen: compiling")
  message(FATAL_ERROR "an unchanged project regenerated code:\n${step_output}")
endif()
file(APPEND ${project}/smooth.scan "// changed\n")
run_step("building after a change of smooth.scan" ${CMAKE_COMMAND} --build ${build})
if(NOT step_output MATCHES "scangen: compiling smooth.scan" OR step_output MATCHES "scangen: compiling clip.scan")
  message(FATAL_ERROR "a changed .scan file was not compiled again (or another one was):\n${step_output}")
endif()
# A header that clip.scan's import includes (known from scangen's depfile): a new bound.
file(WRITE ${project}/include/detail/bounds.h "#pragma once\nnamespace consumer {\nconstexpr float kBound = 0.25f;\n}\n")
run_step("building after a change of an imported header" ${CMAKE_COMMAND} --build ${build})
if(NOT step_output MATCHES "scangen: compiling clip.scan" OR step_output MATCHES "scangen: compiling smooth.scan")
  message(FATAL_ERROR "a changed imported header did not regenerate clip.scan's code (alone):\n${step_output}")
endif()
run_step("running the consumer after the header changed" ${build}/consumer ${project})
if(NOT step_output MATCHES "clip: largest \\|y\\| = 0.25\n")
  message(FATAL_ERROR "the new bound of bounds.h did not reach the generated code and the JIT:\n${step_output}")
endif()

# A project that sets no build type (CMake then passes no optimization flag) still gets its
# generated loops optimized; one that sets a build type keeps that type's flags.
run_step("configuring the consumer without a build type" ${CMAKE_COMMAND} -S ${project} -B ${WORK_DIR}/no-build-type
  -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
run_step("configuring the consumer in Debug" ${CMAKE_COMMAND} -S ${project} -B ${WORK_DIR}/debug
  -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
foreach(case IN ITEMS "no-build-type|-O2" "debug|-O0")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 dir)
  list(GET case 1 wanted)
  file(READ ${WORK_DIR}/${dir}/compile_commands.json commands)
  string(REGEX MATCH "\"command\": \"[^\"]*filters_scangen/smooth.cpp[^\"]*\"" command "${commands}")
  if(NOT command)
    message(FATAL_ERROR "no compile command for the generated smooth.cpp in ${dir}:\n${commands}")
  endif()
  if(wanted STREQUAL "-O2" AND NOT command MATCHES " -O2 ")
    message(FATAL_ERROR "without a build type the generated code is not optimized:\n${command}")
  endif()
  if(wanted STREQUAL "-O0" AND command MATCHES " -O2 ")
    message(FATAL_ERROR "a Debug build got scangen's -O2 on top of its own flags:\n${command}")
  endif()
endforeach()

run_step("configuring samples/host_jit" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/samples/host_jit -B ${WORK_DIR}/host_jit
  -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${PREFIX})
run_step("building samples/host_jit" ${CMAKE_COMMAND} --build ${WORK_DIR}/host_jit)
run_step("running samples/host_jit" ${WORK_DIR}/host_jit/host_jit ${SOURCE_DIR}/samples/host_jit/smooth.scan cpu)
message(STATUS "${step_output}")

file(WRITE ${WORK_DIR}/too_new/CMakeLists.txt
  "cmake_minimum_required(VERSION 3.20)\nproject(too_new LANGUAGES CXX)\nfind_package(scangen 0.2 CONFIG REQUIRED)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/too_new -B ${WORK_DIR}/too_new/build -G ${GENERATOR}
  -DCMAKE_PREFIX_PATH=${PREFIX} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "version")
  message(FATAL_ERROR "find_package(scangen 0.2) was not refused by the version file (${rc}):\n${out}${err}")
endif()
message(STATUS "find_package(scangen 0.2) refused, as it should be")
