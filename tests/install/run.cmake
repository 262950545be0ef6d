# Installs the build into a fresh prefix and uses it the two ways a consumer
# does: pkg-config and find_package. Also checks what the shared library
# exports (dn_* only) and its SONAME. Run with cmake -P; see tests/CMakeLists.txt.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
file(GLOB_RECURSE libs ${prefix}/*/libdecodenum.so.*.*.*)
list(GET libs 0 lib)
get_filename_component(libdir ${lib} DIRECTORY)

run(readelf -d ${lib})
if(NOT out MATCHES "SONAME[^\n]*\\[libdecodenum\\.so\\.0\\]")
  message(FATAL_ERROR "SONAME is not libdecodenum.so.0:\n${out}")
endif()
run(nm -D --defined-only ${lib})
string(REGEX MATCHALL "[^\n]+" lines "${out}")
set(count 0)
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^.* " "" sym "${line}")
  if(sym MATCHES "^DECODENUM_")
    continue()
  endif()
  if(NOT sym MATCHES "^dn_")
    message(FATAL_ERROR "exported symbol outside dn_*: ${sym}")
  endif()
  math(EXPR count "${count} + 1")
endforeach()
message(STATUS "exports: ${count} symbols, all dn_*; SONAME libdecodenum.so.0")

# pkg-config
set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
run(pkg-config --cflags --libs decodenum)
separate_arguments(flags UNIX_COMMAND "${out}")
run(${C_COMPILER} ${SOURCE_DIR}/tests/install/consumer.c ${flags} -o ${WORK_DIR}/consumer-pkgconfig)
set(ENV{LD_LIBRARY_PATH} ${libdir})
run(${WORK_DIR}/consumer-pkgconfig)
message(STATUS "pkg-config consumer: ${out}")

# find_package
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install -B ${WORK_DIR}/consumer-cmake
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer-cmake)
run(${WORK_DIR}/consumer-cmake/consumer)
message(STATUS "find_package consumer: ${out}")
