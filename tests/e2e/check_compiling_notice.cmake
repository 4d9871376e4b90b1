# `scangen run` says "compiling ..." on stderr when compiling takes more than a second and stderr
# is a terminal, and not otherwise (docs/cli.md, "The JIT cache"):
#   cmake -DSCANGEN=<scangen> -DCXX=<c++> -DSAMPLE=<power.scan> -DWORK_DIR=<dir> -P check_compiling_notice.cmake
# The C++ compiler is made slow by a wrapper (two seconds a compile); `script` gives the run a
# terminal.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(slow ${WORK_DIR}/slow-c++)
file(WRITE ${slow} "#!/bin/sh\ncase \"$1\" in --version|-v|-dumpfullversion) ;; *) sleep 2 ;; esac\nexec ${CXX} \"$@\"\n")
file(CHMOD ${slow} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
find_program(SCRIPT script REQUIRED)

function(run_on_terminal cache backend out_var)
  execute_process(COMMAND ${SCRIPT} -qec
    "env XDG_CACHE_HOME=${WORK_DIR}/${cache} CXX=${slow} ${SCANGEN} run ${SAMPLE} --backend ${backend} A=[1,2] k=2" /dev/null
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "scangen run on a terminal failed (${rc}):\n${out}${err}")
  endif()
  set(${out_var} "${out}${err}" PARENT_SCOPE)
endfunction()

# A slow first compile on a terminal: the notice, then the result.
run_on_terminal(terminal cpu out)
if(NOT out MATCHES "scangen: compiling .*power.scan for the cpu backend \\(a later run of the same program reuses the compiled code\\) \\.\\.\\.")
  message(FATAL_ERROR "no 'compiling' notice on a terminal:\n${out}")
endif()
if(NOT out MATCHES "\\[\\[1,4\\]\\]")
  message(FATAL_ERROR "no result after the notice:\n${out}")
endif()
# The same program again: found in the cache, no notice.
run_on_terminal(terminal cpu again)
if(again MATCHES "compiling")
  message(FATAL_ERROR "a 'compiling' notice for a program in the cache:\n${again}")
endif()
# The interpreter compiles nothing.
run_on_terminal(interp interp interp)
if(interp MATCHES "compiling")
  message(FATAL_ERROR "a 'compiling' notice for the interpreter:\n${interp}")
endif()
# Not a terminal (a pipe, a build log): no notice, however slow.
execute_process(COMMAND ${CMAKE_COMMAND} -E env XDG_CACHE_HOME=${WORK_DIR}/pipe CXX=${slow}
  ${SCANGEN} run ${SAMPLE} A=[1,2] k=2 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT err STREQUAL "" OR NOT out STREQUAL "[[1,4]]\n")
  message(FATAL_ERROR "without a terminal: exit ${rc}, stdout '${out}', stderr '${err}'")
endif()
