# cmake -DSCANGEN=... -DNVCC=... -DSOURCE_DIR=... -DWORK_DIR=... -P check_gpu_bench.cmake
# The GPU benchmark programs build without a warning, as bench/gpu/run.sh builds them on a GPU
# machine: bench/gpu/gpu_bench.cu against the kernels of bench/gpu/gpu_bench.scan, and
# bench/gpu/scan_bench.cu against the templates (the associative scan helper, issue 16).
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${SCANGEN} compile --backend cuda ${SOURCE_DIR}/bench/gpu/gpu_bench.scan -o ${WORK_DIR}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "scangen compile --backend cuda gpu_bench.scan failed (${rc}):\n${err}")
endif()
execute_process(
  COMMAND ${NVCC} -std=c++17 -O3 --fmad=false -arch=sm_90 -Xcompiler -Wall,-Wextra -Werror all-warnings
          -I${WORK_DIR} ${SOURCE_DIR}/bench/gpu/gpu_bench.cu ${WORK_DIR}/gpu_bench.cu -o ${WORK_DIR}/gpu_bench
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc rejected bench/gpu/gpu_bench.cu (${rc}):\n${out}${err}")
endif()
message(STATUS "built ${WORK_DIR}/gpu_bench")
execute_process(
  COMMAND ${NVCC} -std=c++17 -O3 --fmad=false -arch=sm_90 -Xcompiler -Wall,-Wextra -Werror all-warnings
          -I${SOURCE_DIR}/templates/common -I${SOURCE_DIR}/templates/cuda ${SOURCE_DIR}/bench/gpu/scan_bench.cu
          -o ${WORK_DIR}/scan_bench
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc rejected bench/gpu/scan_bench.cu (${rc}):\n${out}${err}")
endif()
message(STATUS "built ${WORK_DIR}/scan_bench")
