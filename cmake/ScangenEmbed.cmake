# scangen_embed_files(<target> BASE_DIR <dir> FILES <relative paths...>)
#
# Builds a static library <target> that holds the text of each file (read at build time, so an
# edit of a template rebuilds it) and a lookup function:
#   std::string_view scangen::embedded::file(std::string_view relative_path);
# Emitted code is assembled from these texts: fixed text lives in real files, not in strings.
set(_SCANGEN_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_files.cmake)

function(scangen_embed_files target)
  cmake_parse_arguments(ARG "" "BASE_DIR" "FILES" ${ARGN})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded.cpp)
  set(abs_files)
  foreach(f IN LISTS ARG_FILES)
    list(APPEND abs_files ${ARG_BASE_DIR}/${f})
  endforeach()
  string(REPLACE ";" "|" files_arg "${ARG_FILES}")
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DBASE_DIR=${ARG_BASE_DIR} "-DFILES=${files_arg}" -DOUTPUT=${out}
            -P ${_SCANGEN_EMBED_SCRIPT}
    DEPENDS ${abs_files} ${_SCANGEN_EMBED_SCRIPT}
    COMMENT "Embedding ${target}"
    VERBATIM)
  add_library(${target} STATIC ${out})
  target_compile_features(${target} PUBLIC cxx_std_17)
endfunction()
