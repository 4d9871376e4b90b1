# A command line that scangen must refuse: `cmake "-DCOMMAND=<args separated by blanks>"
# -DSTATUS=<exit status> "-DEXPECT=<regex>" -P check_usage_error.cmake` runs it and checks the
# exit status and that stdout + stderr match the regex.
separate_arguments(COMMAND UNIX_COMMAND "${COMMAND}")
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL STATUS)
  message(FATAL_ERROR "exit status ${rc}, expected ${STATUS}:\n${out}${err}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}':\n${out}${err}")
endif()
