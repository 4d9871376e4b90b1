# Clang's libTooling (clang-cpp 14), for the code that parses C++ in-process: the C++ header
# imports of the generator (generator/src/imports/cxx_header.cpp) and scangen-codecheck
# (tests/tools). Included by each directory that needs it (find_package's results are per
# directory). Defines:
#   SCANGEN_CLANG_INCLUDE_DIRS   LLVM's and Clang's headers (use them as SYSTEM)
#   SCANGEN_CLANG_DEFINITIONS    LLVM's definitions and SCANGEN_CLANG_RESOURCE_DIR="..."
#   SCANGEN_CLANG_COMPILE_OPTIONS  options for sources that include LLVM's headers
#   SCANGEN_CLANG_RESOURCE_DIR   clang's resource directory (builtin headers such as <stddef.h>)
# and the imported targets clang-cpp and LLVM.
include_guard(DIRECTORY)

find_package(LLVM 14 REQUIRED CONFIG)
# Clang's package has no version file; take the one installed next to the LLVM found above.
find_package(Clang REQUIRED CONFIG HINTS ${LLVM_LIBRARY_DIR}/cmake/clang)

# libTooling derives clang's resource directory from the running executable, which is wrong for
# code built here; ask the clang that matches the libraries instead, and fall back to the layout
# LLVM installs.
find_program(SCANGEN_CLANG_EXECUTABLE NAMES clang-${LLVM_VERSION_MAJOR} clang
  HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
if(SCANGEN_CLANG_EXECUTABLE)
  execute_process(COMMAND ${SCANGEN_CLANG_EXECUTABLE} -print-resource-dir
    OUTPUT_VARIABLE SCANGEN_CLANG_RESOURCE_DIR OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE scangen_clang_status ERROR_QUIET)
endif()
if(NOT SCANGEN_CLANG_EXECUTABLE OR NOT scangen_clang_status EQUAL 0
   OR NOT EXISTS "${SCANGEN_CLANG_RESOURCE_DIR}/include/stddef.h")
  set(SCANGEN_CLANG_RESOURCE_DIR "${LLVM_LIBRARY_DIR}/clang/${LLVM_PACKAGE_VERSION}")
endif()
if(NOT EXISTS "${SCANGEN_CLANG_RESOURCE_DIR}/include/stddef.h")
  message(FATAL_ERROR "clang's resource directory (with include/stddef.h) not found; "
    "looked at ${SCANGEN_CLANG_RESOURCE_DIR}")
endif()
get_property(scangen_clang_reported GLOBAL PROPERTY SCANGEN_CLANG_REPORTED)
if(NOT scangen_clang_reported)
  message(STATUS "clang resource dir ${SCANGEN_CLANG_RESOURCE_DIR}")
  set_property(GLOBAL PROPERTY SCANGEN_CLANG_REPORTED TRUE)
endif()

set(SCANGEN_CLANG_INCLUDE_DIRS ${LLVM_INCLUDE_DIRS} ${CLANG_INCLUDE_DIRS})
separate_arguments(SCANGEN_CLANG_DEFINITIONS NATIVE_COMMAND "${LLVM_DEFINITIONS}")
# Without -D, as the source file property COMPILE_DEFINITIONS wants them.
list(TRANSFORM SCANGEN_CLANG_DEFINITIONS REPLACE "^-D" "")
list(APPEND SCANGEN_CLANG_DEFINITIONS SCANGEN_CLANG_RESOURCE_DIR="${SCANGEN_CLANG_RESOURCE_DIR}")
# No RTTI: upstream LLVM builds without it (Debian's has it); -fno-rtti links against either.
# Even as SYSTEM headers, LLVM 14's headers trip g++ 12's -Wnonnull (found after inlining, so
# -isystem does not hide it), which -Werror would make fatal: keep the warnings, not as errors.
set(SCANGEN_CLANG_COMPILE_OPTIONS -fno-rtti -Wno-nonnull -Wno-error)
