# SPDX-License-Identifier: MIT
# What the target needs for the library's bits to be the definition's
# (docs/numerics.md, "Every architecture"): included before any target, so
# the options reach the library, its tests, the CLI and the benchmarks.
#
# 1. Binary32 expressions evaluated in binary32 (FLT_EVAL_METHOD 0; src/bits.h
#    stops the build otherwise). The first of these that gives 0 is used:
#      - nothing: x86-64, AArch64, ppc64el, armhf, armel;
#      - -fexcess-precision=fast: s390x, where GCC in ISO C mode (-std=c11)
#        reports 1 to agree with glibc's float_t and evaluates float
#        expressions in double (double rounding); in "fast" mode it uses the
#        machine's binary32 instructions and reports 0;
#      - -msse2 -mfpmath=sse: i386, whose default x87 arithmetic is extended
#        precision with an extended exponent range (FLT_EVAL_METHOD 2). The
#        library then needs an SSE2 CPU (every x86 since the Pentium 4 and the
#        Athlon 64), a requirement a package declares (Debian: sse2-support).
#    Any other target whose compiler reports neither stops here with a message.
# 2. Wide integers: unsigned __int128 where the compiler has it, two 64-bit
#    limbs elsewhere (src/wide128.h); DECODENUM_PORTABLE_WIDE selects the limbs
#    everywhere.
include(CheckCSourceCompiles)
include(CMakePushCheckState)

option(DECODENUM_PORTABLE_WIDE
  "Compute the 128-bit quotients with 64-bit limbs even where the compiler has __int128 (same bits)" OFF)

set(DN_EVAL_FLAGS "")
set(_dn_found FALSE)
set(_dn_i 0)
foreach(_dn_cand "" "-fexcess-precision=fast" "-msse2 -mfpmath=sse")
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_FLAGS "${_dn_cand}")
  set(CMAKE_REQUIRED_QUIET ON)
  check_c_source_compiles([=[
#include <float.h>
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "FLT_EVAL_METHOD is not 0"
#endif
int main(void) { return 0; }
]=] DN_EVAL_BINARY32_${_dn_i})
  cmake_pop_check_state()
  if(DN_EVAL_BINARY32_${_dn_i})
    set(DN_EVAL_FLAGS "${_dn_cand}")
    set(_dn_found TRUE)
    break()
  endif()
  math(EXPR _dn_i "${_dn_i} + 1")
endforeach()
if(NOT _dn_found)
  message(FATAL_ERROR "libdecodenum needs binary32 expressions evaluated in binary32 "
    "(FLT_EVAL_METHOD 0); ${CMAKE_C_COMPILER} reports otherwise for ${CMAKE_SYSTEM_PROCESSOR} "
    "even with -fexcess-precision=fast or -msse2 -mfpmath=sse (docs/numerics.md)")
endif()
if(DN_EVAL_FLAGS)
  message(STATUS "binary32 evaluation (FLT_EVAL_METHOD 0) with: ${DN_EVAL_FLAGS}")
  separate_arguments(_dn_eval UNIX_COMMAND "${DN_EVAL_FLAGS}")
  add_compile_options(${_dn_eval})
endif()

check_c_source_compiles([=[
#if !defined(__SIZEOF_INT128__)
#error "no __int128"
#endif
int main(void) { return 0; }
]=] DN_HAVE_INT128)
if(DECODENUM_PORTABLE_WIDE)
  add_compile_definitions(DN_PORTABLE_WIDE=1)
endif()
