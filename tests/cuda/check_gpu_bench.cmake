# cmake -DSCANGEN=... -DNVCC=... -DSOURCE_DIR=... -DWORK_DIR=... -P check_gpu_bench.cmake
# The GPU benchmark program (bench/gpu/gpu_bench.cu) builds against the kernels of
# bench/gpu/gpu_bench.scan without a warning, as bench/gpu/run.sh builds it on a GPU machine.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${SCANGEN} compile --target cuda ${SOURCE_DIR}/bench/gpu/gpu_bench.scan -o ${WORK_DIR}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "scangen compile --target cuda gpu_bench.scan failed (${rc}):\n${err}")
endif()
execute_process(
  COMMAND ${NVCC} -std=c++17 -O3 --fmad=false -arch=sm_90 -Xcompiler -Wall,-Wextra -Werror all-warnings
          -I${WORK_DIR} ${SOURCE_DIR}/bench/gpu/gpu_bench.cu ${WORK_DIR}/gpu_bench.cu -o ${WORK_DIR}/gpu_bench
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc rejected bench/gpu/gpu_bench.cu (${rc}):\n${out}${err}")
endif()
message(STATUS "built ${WORK_DIR}/gpu_bench")
