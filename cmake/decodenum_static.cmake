# SPDX-License-Identifier: MIT
# DN_STATIC_OBJECT: every object of the library in one relocatable object
# (`cc -r`), then `objcopy --localize-hidden`: the symbols compiled hidden
# (everything but DN_API) become local, so an archive made of it exports the
# public dn_* functions only, and internal names (dn_ref_*, the kernel
# tables) cannot collide with a program's. ctest install_consumers checks
# the installed archive with nm.
set(DN_STATIC_OBJECT ${PROJECT_BINARY_DIR}/decodenum_static/decodenum.o)
if(CMAKE_OBJCOPY)
  set(DN_OBJCOPY ${CMAKE_OBJCOPY}) # the toolchain's (aarch64-linux-gnu-objcopy when crossing)
else()
  find_program(DN_OBJCOPY objcopy REQUIRED)
endif()
# i386 position-independent code calls __x86.get_pc_thunk.<reg>, defined
# hidden in a COMDAT group of every object that uses it: made local here, the
# group would still be the one the final link keeps, and the C library's
# references to the thunk (libc.a, libgcc.a) would find no global definition.
# They stay global (and hidden); elsewhere these names do not exist.
set(DN_STATIC_KEEP_GLOBAL)
foreach(_dn_reg ax bx cx dx si di bp)
  list(APPEND DN_STATIC_KEEP_GLOBAL --globalize-symbol=__x86.get_pc_thunk.${_dn_reg})
endforeach()
add_custom_command(OUTPUT ${DN_STATIC_OBJECT}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/decodenum_static
  COMMAND ${CMAKE_C_COMPILER} -r -nostdlib -o ${DN_STATIC_OBJECT}.partial $<TARGET_OBJECTS:decodenum_objects>
  COMMAND ${DN_OBJCOPY} --localize-hidden ${DN_STATIC_OBJECT}.partial ${DN_STATIC_OBJECT}
  COMMAND ${DN_OBJCOPY} ${DN_STATIC_KEEP_GLOBAL} ${DN_STATIC_OBJECT}
  COMMAND ${CMAKE_COMMAND} -E rm -f ${DN_STATIC_OBJECT}.partial
  DEPENDS decodenum_objects $<TARGET_OBJECTS:decodenum_objects>
  COMMAND_EXPAND_LISTS VERBATIM
  COMMENT "Linking the static library's objects into one, internal symbols local")
set_source_files_properties(${DN_STATIC_OBJECT} PROPERTIES EXTERNAL_OBJECT ON GENERATED ON)
