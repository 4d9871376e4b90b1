# `cmake --install <build> --prefix P`: the scangen program, the shared libraries of the JIT API
# and the runtime, their public headers, and a relocatable CMake package (scangenConfig.cmake,
# its version file, the exported targets and ScangenFunctions.cmake). The libraries and the
# program find each other through $ORIGIN, so the installed tree works wherever it is moved.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SCANGEN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/scangen)

set_target_properties(scangen PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
set_target_properties(scangen_generator scangen_runtime PROPERTIES INSTALL_RPATH "$ORIGIN")

install(TARGETS scangen scangen_generator scangen_runtime scangen_abi
  EXPORT scangenTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The installed program and libraries carry no debug information (the JIT API's library is 4 MB
# instead of 90): it stays in the build tree, for scangen's developers, unless
# SCANGEN_INSTALL_DEBUG_INFO asks for it to be installed too.
option(SCANGEN_INSTALL_DEBUG_INFO "Install scangen's program and libraries with their debug information" OFF)
if(NOT SCANGEN_INSTALL_DEBUG_INFO AND CMAKE_STRIP)
  foreach(installed IN ITEMS "${CMAKE_INSTALL_BINDIR}/$<TARGET_FILE_NAME:scangen>"
          "${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:scangen_generator>"
          "${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:scangen_runtime>")
    install(CODE "execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug
                    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${installed}\" RESULT_VARIABLE rc)
                  if(NOT rc EQUAL 0)
                    message(FATAL_ERROR \"cannot strip the debug information of ${installed}\")
                  endif()")
  endforeach()
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/scangen ${PROJECT_SOURCE_DIR}/generator/include/scangen
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The C ABI between the runtime and emitted code, which the runtime's headers include.
install(FILES ${PROJECT_SOURCE_DIR}/templates/common/scangen_abi.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/scangen/abi)

install(EXPORT scangenTargets NAMESPACE scangen:: DESTINATION ${SCANGEN_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/scangenConfig.cmake.in
  ${PROJECT_BINARY_DIR}/scangenConfig.cmake INSTALL_DESTINATION ${SCANGEN_INSTALL_CMAKEDIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/scangenConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/scangenConfig.cmake ${PROJECT_BINARY_DIR}/scangenConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/ScangenFunctions.cmake
  DESTINATION ${SCANGEN_INSTALL_CMAKEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# A Debian package of the same tree: `cpack -G DEB --config <build>/CPackConfig.cmake`.
set(CPACK_PACKAGE_NAME scangen)
set(CPACK_PACKAGE_VENDOR "scangen")
set(CPACK_PACKAGE_CONTACT "scangen developers <scangen@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
# The JIT compiles emitted C++ with the system's compiler; imports parse C++ headers with Clang 14
# (its libraries and builtin headers).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "g++ (>= 12), libc6, libstdc++6, libclang-cpp14, libllvm14, libclang-common-14-dev")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)
