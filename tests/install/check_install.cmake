# cmake -DBUILD_DIR=... -DPREFIX=... -DFORBIDDEN="<dir>|<dir>" -P check_install.cmake
# Installs scangen from BUILD_DIR into a staging directory, moves it to PREFIX (the installed tree
# must not depend on where it was installed), and checks that no installed file names a path of
# the source or build tree (FORBIDDEN): not in CMake files, banners, RPATHs or debug information.
get_filename_component(staging "${PREFIX}-staging" ABSOLUTE)
file(REMOVE_RECURSE ${staging} ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${staging}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${out}${err}")
endif()
file(RENAME ${staging} ${PREFIX})

foreach(expected IN ITEMS bin/scangen include/scangen/scangen.h include/scangen/runtime/tensor.h
        include/scangen/abi/scangen_abi.h lib/cmake/scangen/scangenConfig.cmake
        lib/cmake/scangen/scangenConfigVersion.cmake lib/cmake/scangen/scangenTargets.cmake
        lib/cmake/scangen/ScangenFunctions.cmake)
  if(NOT EXISTS ${PREFIX}/${expected})
    message(FATAL_ERROR "the installed tree has no ${expected}")
  endif()
endforeach()

# Installed without debug information (SCANGEN_INSTALL_DEBUG_INFO is off): the whole tree is a
# few megabytes, not a hundred.
file(GLOB libraries ${PREFIX}/lib/libscangen_compiler.so.*.*.*)
foreach(binary IN LISTS libraries ITEMS ${PREFIX}/bin/scangen)
  file(STRINGS ${binary} debug_sections REGEX "\\.debug_info" LIMIT_COUNT 1)
  file(SIZE ${binary} size)
  if(debug_sections OR size GREATER 20000000)
    message(FATAL_ERROR "${binary} is installed with its debug information (${size} bytes)")
  endif()
endforeach()

string(REPLACE "|" ";" forbidden "${FORBIDDEN}")
file(GLOB_RECURSE installed LIST_DIRECTORIES false ${PREFIX}/*)
set(offenders "")
foreach(file IN LISTS installed)
  foreach(dir IN LISTS forbidden)
    file(STRINGS ${file} hits REGEX "${dir}" LIMIT_COUNT 1)
    if(hits)
      list(APPEND offenders "${file} names ${dir}: ${hits}")
    endif()
  endforeach()
endforeach()
if(offenders)
  string(REPLACE ";" "\n" offenders "${offenders}")
  message(FATAL_ERROR "installed files point back into the build machine's trees:\n${offenders}")
endif()
list(LENGTH installed count)
message(STATUS "installed ${count} files to ${PREFIX}; none names ${FORBIDDEN}")

# The installed program runs from its new place (it finds its libraries through $ORIGIN).
execute_process(COMMAND ${PREFIX}/bin/scangen --version RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^scangen [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "the installed scangen does not run (${rc}):\n${out}${err}")
endif()
