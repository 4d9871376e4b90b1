# cmake -DSCANGEN=... -DNVCC=... -DWORK_DIR=... -DSAMPLES="a.scan|b.scan" -P check_offline.cmake
# `scangen compile --backend cuda` of every sample, and nvcc compiles each .cu (host and device
# code, for sm_80 and sm_90) with -Wall -Wextra and no warning.
string(REPLACE "|" ";" samples "${SAMPLES}")
# In CI, the samples at the top of samples/ and the contract's (every construct of the emitter's
# CUDA: scans of every kind, products, tiles, imports, selection); every sample in the long run
# (SCANGEN_LONG_TESTS, docs/testing.md).
if(NOT "$ENV{SCANGEN_LONG_TESTS}" OR "$ENV{SCANGEN_LONG_TESTS}" STREQUAL "0")
  list(FILTER samples INCLUDE REGEX "/samples/[a-z_]+\\.scan$|/samples/contract/|/samples/imports/")
  # The tagger trains itself: its CUDA is mostly gradient kernels, which NVRTC compiles in every
  # run (cuda.nvrtc_sources) and nvcc in the long run, as for samples/gradients/.
  list(FILTER samples EXCLUDE REGEX "/samples/tagger\\.scan$")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
foreach(sample IN LISTS samples)
  get_filename_component(stem ${sample} NAME_WE)
  # Imported headers are included as the import statements spell them (docs/cli.md).
  get_filename_component(sample_dir ${sample} DIRECTORY)
  execute_process(COMMAND ${SCANGEN} compile --backend cuda ${sample} -o ${WORK_DIR}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "scangen compile --backend cuda ${sample} failed (${rc}):\n${err}")
  endif()
  execute_process(
    COMMAND ${NVCC} -std=c++17 --fmad=false -gencode arch=compute_80,code=sm_80
            -gencode arch=compute_90,code=sm_90 -Xcompiler -Wall,-Wextra -Werror all-warnings
            -I${sample_dir} -c ${WORK_DIR}/${stem}.cu -o ${WORK_DIR}/${stem}.o
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nvcc rejected ${stem}.cu (${rc}):\n${out}${err}")
  endif()
  message(STATUS "nvcc compiled ${stem}.cu")
endforeach()
