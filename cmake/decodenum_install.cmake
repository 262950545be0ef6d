# SPDX-License-Identifier: MIT
# What `cmake --install` puts where, in two components:
#   Runtime      libdecodenum.so.MAJOR(.MINOR.PATCH), the decodenum program
#   Development  headers, the libdecodenum.so link, libdecodenum.a, the
#                CMake package, decodenum.pc
# The shared and the static library have their own export sets and target
# files, so they install side by side: find_package(decodenum) gives
# decodenum::shared and/or decodenum::static, and decodenum::decodenum, the
# shared one unless the consumer asks for static (decodenumConfig.cmake.in).

# One release number: project(VERSION) and the header's DN_VERSION_STRING
# (tools/release.sh writes both).
file(STRINGS ${PROJECT_SOURCE_DIR}/include/decodenum/common.h _dn_vs REGEX "^#define DN_VERSION_STRING ")
if(NOT _dn_vs MATCHES "\"${PROJECT_VERSION}\"")
  message(FATAL_ERROR "project(VERSION ${PROJECT_VERSION}) differs from include/decodenum/common.h: ${_dn_vs}")
endif()

if(BUILD_SHARED_LIBS AND DECODENUM_BUILD_STATIC)
  add_library(decodenum_static STATIC ${DN_STATIC_OBJECT})
  target_include_directories(decodenum_static PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(decodenum_static PRIVATE Threads::Threads m)
  set_target_properties(decodenum_static PROPERTIES OUTPUT_NAME decodenum EXPORT_NAME static LINKER_LANGUAGE C)
  set(DN_STATIC_TARGET decodenum_static)
elseif(NOT BUILD_SHARED_LIBS)
  set_target_properties(decodenum PROPERTIES EXPORT_NAME static)
  set(DN_STATIC_TARGET decodenum)
else()
  set(DN_STATIC_TARGET "")
endif()
set(DN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/decodenum)

if(BUILD_SHARED_LIBS)
  set_target_properties(decodenum PROPERTIES EXPORT_NAME shared)
  install(TARGETS decodenum EXPORT decodenumSharedTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Runtime NAMELINK_COMPONENT Development
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT Runtime
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT decodenumSharedTargets NAMESPACE decodenum:: FILE decodenum-shared-targets.cmake
    DESTINATION ${DN_CMAKE_DIR} COMPONENT Development)
endif()
if(DN_STATIC_TARGET)
  install(TARGETS ${DN_STATIC_TARGET} EXPORT decodenumStaticTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT Development
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT decodenumStaticTargets NAMESPACE decodenum:: FILE decodenum-static-targets.cmake
    DESTINATION ${DN_CMAKE_DIR} COMPONENT Development)
endif()

install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT Development
  FILES_MATCHING PATTERN "*.h")
configure_package_config_file(cmake/decodenumConfig.cmake.in
  ${PROJECT_BINARY_DIR}/decodenumConfig.cmake INSTALL_DESTINATION ${DN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/decodenumConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/decodenumConfig.cmake ${PROJECT_BINARY_DIR}/decodenumConfigVersion.cmake
  DESTINATION ${DN_CMAKE_DIR} COMPONENT Development)

# decodenum.pc names the install prefix literally (pkgconf then filters
# its system directories out of --cflags and --libs); a relocated tree is
# used with `pkg-config --define-variable=prefix=<dir>`.
set(DN_PC_LIBS_PRIVATE "-lm -pthread")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(DN_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(DN_PC_LIBDIR "\${exec_prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(DN_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(DN_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(cmake/decodenum.pc.in ${PROJECT_BINARY_DIR}/decodenum.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/decodenum.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT Development)
