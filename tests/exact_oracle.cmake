# SPDX-License-Identifier: MIT
# exact_oracle.cmake: test_exact_oracle, which holds dn_exact_sum,
# dn_scaled_to_f32, dn_rne_div and dn_rne bit for bit to an independent exact
# computation in GMP and MPFR (10^6 random cases each).
#
# Included from tests/CMakeLists.txt, which defines CMOCKA_LIBRARIES and
# CMOCKA_INCLUDE_DIRS. GMP and MPFR are needed for the target (a cross build
# needs the target's libraries, e.g. libgmp-dev:arm64 libmpfr-dev:arm64);
# without them the test is left out with a message.
#
# At run time, DECODENUM_TEST_SCALE=<factor> scales the case counts and
# DECODENUM_TEST_SEED=<number> changes the seed (both optional).

find_path(GMP_INCLUDE_DIR gmp.h)
find_path(MPFR_INCLUDE_DIR mpfr.h)
find_library(GMP_LIB gmp)
find_library(MPFR_LIB mpfr)

set(DN_ORACLE_OK FALSE)
if(GMP_INCLUDE_DIR AND MPFR_INCLUDE_DIR AND GMP_LIB AND MPFR_LIB)
  # Found is not enough in a cross build: make sure they link for the target.
  include(CheckCSourceCompiles)
  include(CMakePushCheckState)
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_INCLUDES ${GMP_INCLUDE_DIR} ${MPFR_INCLUDE_DIR})
  set(CMAKE_REQUIRED_LIBRARIES ${MPFR_LIB} ${GMP_LIB})
  set(CMAKE_REQUIRED_QUIET ON)
  check_c_source_compiles([=[
#include <gmp.h>
#include <mpfr.h>
int main(void)
{
    mpz_t z;
    mpfr_t f;
    mpz_init_set_ui(z, 3);
    mpfr_init2(f, 24);
    mpfr_set_z_2exp(f, z, -1, MPFR_RNDN);
    int r = (int)mpfr_get_flt(f, MPFR_RNDN);
    mpfr_clear(f);
    mpz_clear(z);
    return r;
}
]=] DN_GMP_MPFR_LINKS)
  cmake_pop_check_state()
  if(DN_GMP_MPFR_LINKS)
    set(DN_ORACLE_OK TRUE)
  else()
    message(STATUS "exact_oracle: GMP/MPFR found (${GMP_LIB}, ${MPFR_LIB}) but a test program "
                   "does not link for this target; test_exact_oracle is not built")
  endif()
else()
  message(STATUS "exact_oracle: GMP and MPFR not found (gmp.h: ${GMP_INCLUDE_DIR}, mpfr.h: "
                 "${MPFR_INCLUDE_DIR}, libgmp: ${GMP_LIB}, libmpfr: ${MPFR_LIB}); "
                 "test_exact_oracle is not built (install libgmp-dev and libmpfr-dev)")
endif()

# A suite held to GMP and MPFR: test_<name> from test_<name>.c, ctest <name>.
function(dn_exact_suite name)
  add_executable(test_${name} ${CMAKE_CURRENT_LIST_DIR}/test_${name}.c)
  target_include_directories(test_${name} PRIVATE
    ${CMOCKA_INCLUDE_DIRS} ${GMP_INCLUDE_DIR} ${MPFR_INCLUDE_DIR})
  target_link_libraries(test_${name} PRIVATE
    decodenum_internal ${CMOCKA_LIBRARIES} ${MPFR_LIB} ${GMP_LIB})
  add_test(NAME ${name} COMMAND test_${name})
endfunction()

if(DN_ORACLE_OK)
  # dn_exact_sum and dn_scaled_to_f32; dn_rne_div and dn_rne (exact_cases.h
  # is what both share). About 5 s natively and 30 s under qemu-aarch64 at
  # the default scale, each.
  dn_exact_suite(exact_oracle)
  dn_exact_suite(exact_rne)
  set_tests_properties(exact_oracle exact_rne PROPERTIES TIMEOUT 900)
endif()

# test_dot holds the engine's dot product to the same exact model.
if(DN_ORACLE_OK)
  add_executable(test_dot ${CMAKE_CURRENT_LIST_DIR}/test_dot.c)
  target_include_directories(test_dot PRIVATE
    ${CMOCKA_INCLUDE_DIRS} ${GMP_INCLUDE_DIR} ${MPFR_INCLUDE_DIR} ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(test_dot PRIVATE
    decodenum_internal ${CMOCKA_LIBRARIES} ${MPFR_LIB} ${GMP_LIB})
  add_test(NAME dot COMMAND test_dot)
  set_tests_properties(dot PROPERTIES TIMEOUT 900)
endif()
