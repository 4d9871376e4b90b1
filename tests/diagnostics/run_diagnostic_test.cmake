# Runs `scangen check` on one .scan file and compares its diagnostics with the file's
# expectations (see README.md):
#   cmake -DSCANGEN=<path to scangen> -DFILE=<file.scan> -P run_diagnostic_test.cmake
# Fails unless scangen exits 1 (0 for `// expect: ok`) and the set of printed
# `FILE:LINE:COL: severity: message` lines equals the set of expectations.
cmake_minimum_required(VERSION 3.20)

if(NOT SCANGEN OR NOT FILE)
  message(FATAL_ERROR "usage: cmake -DSCANGEN=<scangen> -DFILE=<file.scan> -P run_diagnostic_test.cmake")
endif()
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "no such file: ${FILE}")
endif()

# CMake lists split at ';' and do not split inside '[...]': both occur in messages, so they are
# replaced by placeholders before text is cut into lines, and put back only for printing.
function(split_lines text out)
  string(REPLACE "\r" "" text "${text}")
  string(REPLACE "\\" "<bs>" text "${text}")
  string(REPLACE ";" "<sc>" text "${text}")
  string(REPLACE "[" "<lb>" text "${text}")
  string(REPLACE "]" "<rb>" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(readable line out)
  string(REPLACE "<sc>" ";" line "${line}")
  string(REPLACE "<lb>" "[" line "${line}")
  string(REPLACE "<rb>" "]" line "${line}")
  string(REPLACE "<bs>" "\\" line "${line}")
  set(${out} "${line}" PARENT_SCOPE)
endfunction()

# ---- expectations
get_filename_component(dir "${FILE}" DIRECTORY)
file(READ "${FILE}" source)
split_lines("${source}" source_lines)
set(expected "")
set(expect_ok FALSE)
set(check_args "")
set(headers "")
foreach(line IN LISTS source_lines)
  if(line MATCHES "//[ \t]*check-args:[ \t]*(.*)$")
    # Options for `scangen check` (e.g. --cuda).
    string(STRIP "${CMAKE_MATCH_1}" a)
    separate_arguments(a UNIX_COMMAND "${a}")
    list(APPEND check_args ${a})
  elseif(line MATCHES "//[ \t]*expect-in[ \t]+([^ \t:]+):[ \t]*(.*)$")
    # A diagnostic located in another file (an imported header), named relative to this one's
    # directory: `// expect-in headers/bad.h: 3:5: error: ...`.
    string(STRIP "${CMAKE_MATCH_2}" e)
    list(APPEND headers "${CMAKE_MATCH_1}")
    list(APPEND expected "${CMAKE_MATCH_1}:${e}")
  elseif(line MATCHES "//[ \t]*expect:[ \t]*(.*)$")
    string(STRIP "${CMAKE_MATCH_1}" e)
    if(e STREQUAL "ok")
      set(expect_ok TRUE)
    elseif(e MATCHES "^[0-9]+:[0-9]+: (error|warning|note): .")
      # <dir> stands for this file's directory (in messages that name files).
      string(REPLACE "<dir>" "${dir}" e "${e}")
      list(APPEND expected "${e}")
    else()
      readable("${line}" shown)
      message(FATAL_ERROR "${FILE}: malformed expectation: ${shown}")
    endif()
  endif()
endforeach()
list(LENGTH expected expected_count)
if(expect_ok AND expected_count GREATER 0)
  message(FATAL_ERROR "${FILE}: '// expect: ok' together with expected diagnostics")
endif()
if(NOT expect_ok AND expected_count EQUAL 0)
  message(FATAL_ERROR "${FILE}: no '// expect:' line")
endif()

# ---- run
execute_process(COMMAND "${SCANGEN}" check ${check_args} "${FILE}"
  RESULT_VARIABLE status
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  TIMEOUT 60)

set(failures "")
if(status STREQUAL "70")
  string(APPEND failures "scangen reported an internal error (exit status 70)\n")
elseif(NOT status MATCHES "^[0-9]+$")
  string(APPEND failures "scangen did not exit normally: ${status}\n")
elseif(expect_ok AND NOT status EQUAL 0)
  string(APPEND failures "expected exit status 0, got ${status}\n")
elseif(NOT expect_ok AND NOT status EQUAL 1)
  string(APPEND failures "expected exit status 1, got ${status}\n")
endif()

# The diagnostic lines: "FILE:LINE:COL: severity: message"; one without a location
# ("scangen: severity: message") is kept as "0:0: severity: message", which no test expects.
split_lines("${err}" err_lines)
set(actual "")
string(LENGTH "${FILE}:" prefix_length)
foreach(line IN LISTS err_lines)
  string(FIND "${line}" "${FILE}:" at)
  if(at EQUAL 0)
    string(SUBSTRING "${line}" ${prefix_length} -1 rest)
    if(rest MATCHES "^[0-9]+:[0-9]+: (error|warning|note): ")
      list(APPEND actual "${rest}")
    endif()
  elseif(line MATCHES "^(/[^:]+):([0-9]+:[0-9]+: (error|warning|note): .*)$")
    # Located in another file (by its absolute path): kept as its path relative to this file's
    # directory.
    set(location_rest "${CMAKE_MATCH_2}")
    file(RELATIVE_PATH shown_path "${dir}" "${CMAKE_MATCH_1}")
    list(APPEND actual "${shown_path}:${location_rest}")
  elseif(line MATCHES "^scangen: (error|warning|note): (.*)$")
    list(APPEND actual "0:0: ${CMAKE_MATCH_1}: ${CMAKE_MATCH_2}")
  endif()
endforeach()

foreach(e IN LISTS expected)
  list(FIND actual "${e}" found)
  if(found EQUAL -1)
    readable("${e}" shown)
    string(APPEND failures "missing:    ${shown}\n")
  endif()
endforeach()
foreach(a IN LISTS actual)
  list(FIND expected "${a}" found)
  if(found EQUAL -1)
    readable("${a}" shown)
    string(APPEND failures "unexpected: ${shown}\n")
  endif()
endforeach()

if(failures)
  message(FATAL_ERROR "${FILE}:\n${failures}--- scangen check output (exit status ${status}):\n${err}")
endif()
