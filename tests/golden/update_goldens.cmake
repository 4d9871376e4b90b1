# cmake -DSCANGEN=... -DSAMPLES="a.scan|b.scan" -DGOLDEN_DIR=... -P update_goldens.cmake
string(REPLACE "|" ";" samples "${SAMPLES}")
foreach(sample IN LISTS samples)
  execute_process(COMMAND ${SCANGEN} compile --backend cpu,cuda ${sample} -o ${GOLDEN_DIR} RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "scangen compile ${sample} failed (${rc}):\n${err}")
  endif()
  message(STATUS "updated golden output of ${sample}")
endforeach()
