# -DSCANGEN_SANITIZE=address,undefined builds everything under those sanitizers (any list that the
# compiler's -fsanitize= takes), and the CPU JIT compiles emitted code with the same flags, so the
# code scangen generates is checked at run time too (runtime/CMakeLists.txt passes them on).
# A report is fatal (-fno-sanitize-recover): a sanitized test run passes only when clean.
#
# With clang, the libFuzzer targets of tests/fuzz are built as well (SCANGEN_FUZZ): everything is
# then compiled with coverage instrumentation for them (-fsanitize=fuzzer-no-link).
set(SCANGEN_SANITIZE "" CACHE STRING
  "Sanitizers for scangen and the code its JIT compiles (e.g. address,undefined); empty: none")

set(SCANGEN_SANITIZE_FLAGS "")
if(SCANGEN_SANITIZE)
  set(SCANGEN_SANITIZE_FLAGS -fsanitize=${SCANGEN_SANITIZE} -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  add_compile_options(${SCANGEN_SANITIZE_FLAGS})
  add_link_options(-fsanitize=${SCANGEN_SANITIZE})
endif()

if(SCANGEN_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(SCANGEN_FUZZ_DEFAULT ON)
else()
  set(SCANGEN_FUZZ_DEFAULT OFF)
endif()
option(SCANGEN_FUZZ "Build the libFuzzer targets (clang with SCANGEN_SANITIZE)" ${SCANGEN_FUZZ_DEFAULT})
if(SCANGEN_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "SCANGEN_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
