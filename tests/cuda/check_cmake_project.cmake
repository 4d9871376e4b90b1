# cmake -DSOURCE_DIR=... -DBINARY_DIR=... -DGENERATOR=... -DNVCC=... -DPREFIX=... -DSCANGEN_SAMPLES=...
#       -P check_cmake_project.cmake
# Configures and builds the user project of cmake_project/ from scratch against the scangen
# installed at PREFIX: scangen_add_library with BACKEND cpu,cuda, built by CMake's CUDA language
# (nvcc) without a warning.
file(REMOVE_RECURSE ${BINARY_DIR})
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G ${GENERATOR} -DCMAKE_CUDA_COMPILER=${NVCC}
          -DCMAKE_PREFIX_PATH=${PREFIX} -DSCANGEN_SAMPLES=${SCANGEN_SAMPLES}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the CUDA user project failed (${rc}):\n${out}${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR out MATCHES "warning" OR err MATCHES "warning")
  message(FATAL_ERROR "building the CUDA user project failed (${rc}) or warned:\n${out}${err}")
endif()
message(STATUS "built ${BINARY_DIR}/consumer")
