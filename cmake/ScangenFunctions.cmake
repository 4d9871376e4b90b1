# scangen_add_library(<target> SOURCES <file.scan>... [NAMESPACE <ns>] [OPT_LEVEL 0|2]
#                     [SCANGEN <path or target>])
#
# Compiles each .scan file with `scangen compile` at build time and makes a static library
# <target> of the generated C++: link it and include "<stem>.h" for each file's typed API.
#
#   scangen_add_library(filters SOURCES iir.scan NAMESPACE dsp)
#   target_link_libraries(app PRIVATE filters)     # #include "iir.h", dsp::iir(...)
#
# The generated sources are regenerated when a .scan file or scangen itself changes.
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
function(scangen_add_library target)
  cmake_parse_arguments(ARG "" "NAMESPACE;OPT_LEVEL;SCANGEN" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "scangen_add_library(${target}): no SOURCES")
  endif()
  if(NOT ARG_NAMESPACE)
    set(ARG_NAMESPACE scangen_generated)
  endif()
  if(NOT DEFINED ARG_OPT_LEVEL)
    set(ARG_OPT_LEVEL 2)
  endif()
  if(NOT ARG_SCANGEN)
    if(TARGET scangen)
      set(ARG_SCANGEN scangen)
    elseif(TARGET scangen::scangen)
      set(ARG_SCANGEN scangen::scangen)
    else()
      find_program(ARG_SCANGEN scangen REQUIRED)
    endif()
  endif()
  if(TARGET ${ARG_SCANGEN})
    set(scangen_command $<TARGET_FILE:${ARG_SCANGEN}>)
    set(scangen_depends ${ARG_SCANGEN})
  else()
    set(scangen_command ${ARG_SCANGEN})
    set(scangen_depends ${ARG_SCANGEN})
  endif()

  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${target}_scangen)
  set(generated)
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs ${src} ABSOLUTE)
    get_filename_component(stem ${src} NAME_WE)
    set(header ${out_dir}/${stem}.h)
    set(source ${out_dir}/${stem}.cpp)
    add_custom_command(
      OUTPUT ${header} ${source}
      COMMAND ${scangen_command} compile ${abs} -o ${out_dir} --namespace ${ARG_NAMESPACE} -O${ARG_OPT_LEVEL}
      DEPENDS ${abs} ${scangen_depends}
      COMMENT "scangen: compiling ${src}"
      VERBATIM)
    list(APPEND generated ${header} ${source})
  endforeach()
  add_library(${target} STATIC ${generated})
  target_include_directories(${target} PUBLIC ${out_dir} ${CMAKE_CURRENT_BINARY_DIR})
  target_compile_features(${target} PUBLIC cxx_std_17)
  # The generated loops are exact IEEE arithmetic: no contraction into FMAs, so that results match
  # the reference interpreter bit for bit.
  target_compile_options(${target} PRIVATE -ffp-contract=off)
endfunction()
