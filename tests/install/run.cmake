# SPDX-License-Identifier: MIT
# Installs the build into a fresh prefix and uses it the ways a consumer
# does: pkg-config, find_package with the shared library and with the static
# one, examples/ as a standalone project, and the installed decodenum
# program. Checks what the libraries export (the public dn_* functions only,
# each under a DECODENUM_0.x version; every DN_API function of the installed
# headers), the SONAME, and the install components. Run with cmake -P; see tests/CMakeLists.txt.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# nm output -> the sorted list of defined global symbol names (versions cut)
function(symbols var)
  string(REGEX MATCHALL "[^\n]+" lines "${out}")
  set(names)
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-fA-F]* *[A-Z] ([^ @]+)")
      list(APPEND names ${CMAKE_MATCH_1})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES names)
  list(SORT names)
  set(${var} ${names} PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
file(GLOB_RECURSE libs ${prefix}/*/libdecodenum.so.*.*.*)
list(GET libs 0 lib)
get_filename_component(libdir ${lib} DIRECTORY)

run(readelf -d ${lib})
if(NOT out MATCHES "SONAME[^\n]*\\[libdecodenum\\.so\\.0\\]")
  message(FATAL_ERROR "SONAME is not libdecodenum.so.0:\n${out}")
endif()

# The public functions: every DN_API declaration of the installed headers.
file(GLOB_RECURSE headers ${prefix}/include/*.h)
set(public)
foreach(h IN LISTS headers)
  file(READ ${h} text)
  string(REGEX MATCHALL "DN_API[^;{(]*[ *](dn_[a-z0-9_]+) *\\(" decls "${text}")
  foreach(d IN LISTS decls)
    string(REGEX REPLACE ".*[ *](dn_[a-z0-9_]+) *\\($" "\\1" name "${d}")
    list(APPEND public ${name})
  endforeach()
endforeach()
list(REMOVE_DUPLICATES public)
list(SORT public)

run(nm -D --defined-only ${lib})
set(nm_shared "${out}")
symbols(shared)
list(REMOVE_ITEM shared DECODENUM_0.1 DECODENUM_0.2 DECODENUM_0.3 DECODENUM_0.4)
string(REGEX MATCHALL "dn_[a-z0-9_]+@@?[A-Z0-9_.]+" versioned "${nm_shared}")
foreach(v IN LISTS versioned)
  if(NOT v MATCHES "@@?DECODENUM_0\\.[0-9]+$")
    message(FATAL_ERROR "exported without a DECODENUM_0.x version: ${v}")
  endif()
endforeach()
if(NOT shared STREQUAL public)
  set(missing ${public})
  list(REMOVE_ITEM missing ${shared})
  set(extra ${shared})
  list(REMOVE_ITEM extra ${public})
  message(FATAL_ERROR "the shared library's exports differ from the headers' DN_API functions:\n"
    "  declared but not exported (add them to cmake/libdecodenum.map): ${missing}\n"
    "  exported but not declared: ${extra}")
endif()
list(LENGTH shared count)
message(STATUS "shared: ${count} symbols, the headers' DN_API functions, all under DECODENUM_0.x; SONAME libdecodenum.so.0")

# The static archive beside it: the same public symbols, nothing else global.
set(archive ${libdir}/libdecodenum.a)
if(EXISTS ${archive})
  run(nm -g --defined-only ${archive})
  symbols(static)
  if(NOT static STREQUAL public)
    set(extra ${static})
    list(REMOVE_ITEM extra ${public})
    message(FATAL_ERROR "libdecodenum.a's global symbols are not the public dn_* functions; extra: ${extra}")
  endif()
  message(STATUS "static: ${count} global symbols, the same public functions")
endif()

# pkg-config: the .pc names its install prefix; a relocated tree redefines it.
set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
run(pkg-config --define-variable=prefix=${prefix} --cflags --libs decodenum)
separate_arguments(flags UNIX_COMMAND "${out}")
run(${C_COMPILER} ${SOURCE_DIR}/tests/install/consumer.c ${flags} -o ${WORK_DIR}/consumer-pkgconfig)
set(ENV{LD_LIBRARY_PATH} ${libdir})
run(${WORK_DIR}/consumer-pkgconfig)
message(STATUS "pkg-config consumer: ${out}")

# find_package: the shared library (the default), then the static one.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install -B ${WORK_DIR}/consumer-cmake
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-cmake)
run(readelf -d ${WORK_DIR}/consumer-cmake/consumer)
if(NOT out MATCHES "NEEDED[^\n]*libdecodenum\\.so\\.0")
  message(FATAL_ERROR "the find_package consumer does not link libdecodenum.so.0:\n${out}")
endif()
run(${WORK_DIR}/consumer-cmake/consumer)
message(STATUS "find_package consumer (shared): ${out}")
if(EXISTS ${archive})
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install -B ${WORK_DIR}/consumer-cmake-static
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER} -DDECODENUM_USE_STATIC=ON)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-cmake-static)
  run(readelf -d ${WORK_DIR}/consumer-cmake-static/consumer)
  if(out MATCHES "libdecodenum")
    message(FATAL_ERROR "the static find_package consumer needs the shared library:\n${out}")
  endif()
  run(${WORK_DIR}/consumer-cmake-static/consumer)
  message(STATUS "find_package consumer (static): ${out}")
endif()

# examples/ as a standalone project against the installed tree, with the
# shared and with the static library.
foreach(kind shared static)
  if(kind STREQUAL "static" AND NOT EXISTS ${archive})
    continue()
  endif()
  set(use_static OFF)
  if(kind STREQUAL "static")
    set(use_static ON)
  endif()
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples -B ${WORK_DIR}/examples-${kind}
      -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER} -DDECODENUM_USE_STATIC=${use_static})
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/examples-${kind})
  run(${WORK_DIR}/examples-${kind}/decodenum_usage)
  if(NOT out MATCHES "dot 0x1p-2 .* argmax 2 .* code 6 ")
    message(FATAL_ERROR "examples (${kind}) printed: ${out}")
  endif()
  message(STATUS "examples/ against the install (${kind}): ${out}")
endforeach()

# The installed program tests the installed library.
if(EXISTS ${prefix}/bin/decodenum)
  run(${prefix}/bin/decodenum selftest)
  if(NOT out MATCHES "\nPASS: ")
    message(FATAL_ERROR "installed decodenum selftest:\n${out}")
  endif()
  run(ldd ${prefix}/bin/decodenum)
  if(NOT out MATCHES "libdecodenum\\.so\\.0 => ${libdir}/")
    message(FATAL_ERROR "the installed decodenum does not use the installed library:\n${out}")
  endif()
  message(STATUS "installed decodenum selftest: PASS, on ${libdir}/libdecodenum.so.0")
endif()

# The Runtime component alone: the versioned library and the program.
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/runtime --component Runtime)
file(GLOB_RECURSE runtime RELATIVE ${WORK_DIR}/runtime ${WORK_DIR}/runtime/*)
foreach(f IN LISTS runtime)
  if(NOT f MATCHES "(libdecodenum\\.so\\.0[.0-9]*|bin/decodenum)$")
    message(FATAL_ERROR "the Runtime component installs ${f}")
  endif()
endforeach()
message(STATUS "Runtime component: ${runtime}")
