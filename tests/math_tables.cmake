# SPDX-License-Identifier: MIT
# Reruns tools/gen_math_tables.py into the build tree and compares the result
# with the checked-in src/math_tables.c byte for byte.
execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/tools/gen_math_tables.py ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tools/gen_math_tables.py failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${SOURCE_DIR}/src/math_tables.c RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "src/math_tables.c differs from what tools/gen_math_tables.py writes")
endif()
message(STATUS "src/math_tables.c reproduced byte for byte")
