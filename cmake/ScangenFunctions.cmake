# scangen_add_library(<target> SOURCES <file.scan>... [NAMESPACE <ns>] [OPT_LEVEL 0|2]
#                     [FP_MODE strict|fast] [BACKEND cpu|cuda|cpu,cuda] [THREADS <n>] [INCLUDE_DIRS <dir>...]
#                     [SCANGEN <path or target>])
#
# Compiles each .scan file with `scangen compile` at build time and makes a static library
# <target> of the generated code: link it and include "<stem>.h" (CPU) or "<stem>.cuh" (CUDA) for
# each file's typed API. With an installed scangen, `find_package(scangen CONFIG REQUIRED)`
# defines this function; inside scangen's own tree, include(ScangenFunctions).
#
#   find_package(scangen CONFIG REQUIRED)
#   scangen_add_library(filters SOURCES iir.scan NAMESPACE dsp)
#   target_link_libraries(app PRIVATE filters)     # #include "iir.h", dsp::iir(...)
#
# Arguments:
#   SOURCES       the .scan files (relative to the current source directory, or absolute).
#   NAMESPACE     the C++ namespace of the generated API (default scangen_generated).
#   OPT_LEVEL     0 (no rewrites) or 2 (all rewrites, the default).
#   FP_MODE       strict (the default: results bit for bit those of the interpreter) or fast
#                 (`scangen compile --fp fast`: FMA, reassociated sums, vectorized math functions;
#                 CPU only, so BACKEND cpu). Fast sources are compiled with
#                 SCANGEN_FAST_FP_CXX_FLAGS and the library links glibc's libmvec when it exists.
#   BACKEND       cpu (default), cuda, or cpu,cuda: the backends, as `scangen compile --backend`.
#                 (TARGET, its old spelling, still works.)
#   THREADS       the threads the CPU code runs on, as `scangen compile --threads`: 1 (default),
#                 up to 256, or 0 for every hardware thread; SCANGEN_NUM_THREADS overrides it when
#                 the program runs. Other than 1, the library links Threads::Threads (and
#                 CMake's CMAKE_DL_LIBS: the pool keeps its code loaded with dlopen).
#   INCLUDE_DIRS  directories searched for the C++ headers a .scan file imports (`import "x.h"`),
#                 after the .scan file's own directory (`scangen compile -I`). They, and each
#                 .scan file's directory, are on the library's private include path too,
#                 because the generated sources include the imported headers.
#   SCANGEN       the scangen program: a path or a target (default: the cache variable
#                 SCANGEN_EXECUTABLE when set, e.g. -DSCANGEN_EXECUTABLE=/path/to/scangen; else the
#                 target scangen or scangen::scangen; else `scangen` on the PATH).
#
# The generated sources are regenerated when a .scan file, a header it imports (directly or
# through other headers: scangen writes a depfile) or scangen itself changes. They name the .scan
# file by its path relative to the current source directory, never by an absolute path of the
# build machine.
#
# With cuda, the library holds <stem>.cu, compiled by CMake's CUDA language, which the project
# must enable (project(... LANGUAGES CXX CUDA)); its API is <ns>::cuda::<fn>(device tensors,
# stream), and the library links the CUDA runtime. The architectures are the project's
# (CUDA_ARCHITECTURES):
#
#   project(app LANGUAGES CXX CUDA)
#   set(CMAKE_CUDA_ARCHITECTURES 80 90)
#   scangen_add_library(filters SOURCES iir.scan NAMESPACE dsp BACKEND cpu,cuda)
#   target_link_libraries(app PRIVATE filters)     # "iir.h": dsp::iir, "iir.cuh": dsp::cuda::iir
#
# The generated files go to ${CMAKE_CURRENT_BINARY_DIR}/<target>_scangen/. Both that directory and
# ${CMAKE_CURRENT_BINARY_DIR} are on the library's public include path, so a consumer of several
# libraries compiled from one .scan file (say at two optimization levels, with two namespaces),
# whose headers all have the same name, picks one with its directory:
#
#   scangen_add_library(iir_o2 SOURCES iir.scan NAMESPACE o2)
#   scangen_add_library(iir_o0 SOURCES iir.scan NAMESPACE o0 OPT_LEVEL 0)
#   #include "iir_o2_scangen/iir.h"                 # o2::iir(...)
#
# (The generated header's include guard is named after the .scan file's stem only, so two such
# headers in one translation unit need `#undef SCANGEN_GENERATED_<STEM>_H` between them;
# bench/rewrite_bench.cpp does this.)
# The flags emitted C++ is compiled with, here and by the CPU JIT (runtime/CMakeLists.txt passes
# them on): no FMA contraction, so that results match the reference interpreter bit for bit; and
# integer arithmetic that wraps with plain operators (templates/common/scangen_scalar.h says why).
set(SCANGEN_EMITTED_CXX_FLAGS -ffp-contract=off -fwrapv -DSCANGEN_FWRAPV)
# What fast-mode emitted C++ needs on top (docs/performance.md, "Fast floating-point mode"): its
# reductions are `#pragma omp simd reduction` loops, and math functions that may set errno do not
# vectorize. Its vectorized math functions come from glibc's libmvec: without it, emitted code
# calls the scalar functions (SCANGEN_NO_LIBMVEC).
find_library(SCANGEN_LIBMVEC NAMES mvec libmvec.so.1)
mark_as_advanced(SCANGEN_LIBMVEC)
set(SCANGEN_FAST_FP_CXX_FLAGS -fopenmp-simd -fno-math-errno)
if(SCANGEN_LIBMVEC)
  set(SCANGEN_FAST_FP_LIBS mvec)  # a name (-lmvec), not the path found here: the JIT uses it too
else()
  list(APPEND SCANGEN_FAST_FP_CXX_FLAGS -DSCANGEN_NO_LIBMVEC)
  set(SCANGEN_FAST_FP_LIBS)
endif()

function(scangen_add_library target)
  cmake_parse_arguments(ARG "" "NAMESPACE;OPT_LEVEL;FP_MODE;SCANGEN;BACKEND;TARGET;THREADS" "SOURCES;INCLUDE_DIRS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "scangen_add_library(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "scangen_add_library(${target}): no SOURCES")
  endif()
  if(NOT ARG_NAMESPACE)
    set(ARG_NAMESPACE scangen_generated)
  endif()
  if(NOT DEFINED ARG_OPT_LEVEL)
    set(ARG_OPT_LEVEL 2)
  endif()
  # TARGET is the old spelling of BACKEND.
  if(ARG_BACKEND AND ARG_TARGET)
    message(FATAL_ERROR "scangen_add_library(${target}): TARGET is the old spelling of BACKEND: give one of them")
  endif()
  if(ARG_TARGET)
    set(ARG_BACKEND ${ARG_TARGET})
  endif()
  if(NOT ARG_BACKEND)
    set(ARG_BACKEND cpu)
  endif()
  if(NOT ARG_FP_MODE)
    set(ARG_FP_MODE strict)
  endif()
  if(NOT ARG_FP_MODE MATCHES "^(strict|fast)$")
    message(FATAL_ERROR "scangen_add_library(${target}): FP_MODE ${ARG_FP_MODE}: expected strict or fast")
  endif()
  if(ARG_FP_MODE STREQUAL "fast" AND NOT ARG_BACKEND STREQUAL "cpu")
    message(FATAL_ERROR "scangen_add_library(${target}): FP_MODE fast is for the CPU backend only "
      "(BACKEND cpu); got BACKEND ${ARG_BACKEND}")
  endif()
  if(NOT DEFINED ARG_THREADS)
    set(ARG_THREADS 1)
  endif()
  if(NOT ARG_THREADS MATCHES "^[0-9]+$" OR ARG_THREADS GREATER 256)
    message(FATAL_ERROR "scangen_add_library(${target}): THREADS ${ARG_THREADS}: the thread count must be "
      "a whole number from 0 (every hardware thread) to 256")
  endif()
  string(REPLACE "," ";" backends "${ARG_BACKEND}")
  foreach(backend IN LISTS backends)
    if(NOT backend MATCHES "^(cpu|cuda)$")
      message(FATAL_ERROR "scangen_add_library(${target}): BACKEND ${ARG_BACKEND}: '${backend}' is not "
        "a backend (cpu, cuda, or both as cpu,cuda)")
    endif()
  endforeach()
  if(NOT ARG_THREADS EQUAL 1 AND NOT "cpu" IN_LIST backends)
    message(FATAL_ERROR "scangen_add_library(${target}): THREADS applies to the CPU code: BACKEND cpu or cpu,cuda")
  endif()
  if("cuda" IN_LIST backends)
    get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT "CUDA" IN_LIST languages)
      message(FATAL_ERROR "scangen_add_library(${target}): BACKEND ${ARG_BACKEND} needs CMake's CUDA "
        "language: project(... LANGUAGES CXX CUDA) or enable_language(CUDA)")
    endif()
    find_package(CUDAToolkit REQUIRED)
  endif()
  # Messages name what the user wrote: the SCANGEN argument or the SCANGEN_EXECUTABLE variable.
  set(scangen_origin "SCANGEN ${ARG_SCANGEN}")
  if(NOT ARG_SCANGEN)
    if(SCANGEN_EXECUTABLE)
      set(ARG_SCANGEN ${SCANGEN_EXECUTABLE})
      set(scangen_origin "SCANGEN_EXECUTABLE ${SCANGEN_EXECUTABLE}")
    elseif(TARGET scangen)
      set(ARG_SCANGEN scangen)
    elseif(TARGET scangen::scangen)
      set(ARG_SCANGEN scangen::scangen)
    else()
      find_program(SCANGEN_EXECUTABLE scangen)
      if(NOT SCANGEN_EXECUTABLE)
        message(FATAL_ERROR "scangen_add_library(${target}): no scangen program: find_package(scangen) "
          "gives it, or set SCANGEN_EXECUTABLE (-DSCANGEN_EXECUTABLE=/path/to/scangen), or pass "
          "SCANGEN <path or target>, or put scangen on the PATH")
      endif()
      set(ARG_SCANGEN ${SCANGEN_EXECUTABLE})
    endif()
  endif()
  # (A bare name is left to the build's PATH, as any command's.)
  if(NOT TARGET ${ARG_SCANGEN} AND IS_ABSOLUTE ${ARG_SCANGEN} AND NOT EXISTS ${ARG_SCANGEN})
    message(FATAL_ERROR "scangen_add_library(${target}): ${scangen_origin}: no such program or target")
  endif()
  if(TARGET ${ARG_SCANGEN})
    # The file too: a target-level dependency alone does not rerun the command for an imported
    # (installed) scangen that changed.
    set(scangen_command $<TARGET_FILE:${ARG_SCANGEN}>)
    set(scangen_depends ${ARG_SCANGEN} $<TARGET_FILE:${ARG_SCANGEN}>)
  else()
    set(scangen_command ${ARG_SCANGEN})
    set(scangen_depends ${ARG_SCANGEN})
  endif()

  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${target}_scangen)
  set(include_args)
  set(header_dirs)
  foreach(dir IN LISTS ARG_INCLUDE_DIRS)
    get_filename_component(dir ${dir} ABSOLUTE)
    list(APPEND include_args -I ${dir})
    list(APPEND header_dirs ${dir})
  endforeach()
  set(generated)
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs ${src} ABSOLUTE)
    get_filename_component(stem ${src} NAME_WE)
    get_filename_component(scan_dir ${abs} DIRECTORY)
    list(APPEND header_dirs ${scan_dir})
    # Named relative to the source directory in what scangen writes (banners, module info).
    file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR} ${abs})
    set(outputs)
    if("cpu" IN_LIST backends)
      list(APPEND outputs ${out_dir}/${stem}.h ${out_dir}/${stem}.cpp)
    endif()
    if("cuda" IN_LIST backends)
      list(APPEND outputs ${out_dir}/${stem}.cuh ${out_dir}/${stem}.cu)
    endif()
    set(depfile ${out_dir}/${stem}.d)
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND ${scangen_command} compile ${rel} -o ${out_dir} --namespace ${ARG_NAMESPACE} -O${ARG_OPT_LEVEL}
              --backend ${ARG_BACKEND} --fp ${ARG_FP_MODE} --threads ${ARG_THREADS} ${include_args} --depfile ${depfile}
      DEPENDS ${abs} ${scangen_depends}
      DEPFILE ${depfile}
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
      COMMENT "scangen: compiling ${src}"
      VERBATIM)
    list(APPEND generated ${outputs})
  endforeach()
  add_library(${target} STATIC ${generated})
  target_include_directories(${target} PUBLIC ${out_dir} ${CMAKE_CURRENT_BINARY_DIR})
  # The generated sources (not their headers) include the imported C++ headers.
  list(REMOVE_DUPLICATES header_dirs)
  target_include_directories(${target} PRIVATE ${header_dirs})
  target_compile_features(${target} PUBLIC cxx_std_17)
  # The generated loops are exact IEEE arithmetic (no FMA contraction) and wrapping integer
  # arithmetic, so that results match the reference interpreter bit for bit.
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:${SCANGEN_EMITTED_CXX_FLAGS}>"
                                           $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>)
  # A project that sets no build type gets no optimization flag from CMake, and loops built at -O0
  # run many times slower: the generated code is optimized then (a build type's flags, -O0 of
  # Debug included, are the project's choice and stay as they are).
  target_compile_options(${target} PRIVATE "$<$<AND:$<STREQUAL:$<CONFIG>,>,$<COMPILE_LANGUAGE:CXX>>:-O2>")
  if(ARG_FP_MODE STREQUAL "fast")
    target_compile_options(${target} PRIVATE ${SCANGEN_FAST_FP_CXX_FLAGS})
    target_link_libraries(${target} PUBLIC ${SCANGEN_FAST_FP_LIBS})
  endif()
  if(NOT ARG_THREADS EQUAL 1)
    find_package(Threads REQUIRED)
    target_link_libraries(${target} PUBLIC Threads::Threads ${CMAKE_DL_LIBS})
  endif()
  if("cuda" IN_LIST backends)
    target_compile_features(${target} PUBLIC cuda_std_17)
    target_link_libraries(${target} PUBLIC CUDA::cudart)
  endif()
endfunction()
