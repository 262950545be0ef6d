# SPDX-License-Identifier: MIT
# The library's optimisation does not follow the build type: its sources
# (references, entry points and kernels) are compiled at DECODENUM_OPT_FLAGS,
# after the build type's flags, so CMAKE_BUILD_TYPE=None with a distribution's
# -O2 (dpkg-buildflags) gives the Release build's code and speed. The bits do
# not depend on it either way (-ffp-contract=off -fno-fast-math; no excess
# precision on x86-64 or AArch64). A Debug build keeps its -O0.
set(DECODENUM_OPT_FLAGS "-O3" CACHE STRING
  "Optimisation of the library's sources in every build type but Debug")
if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug" AND DECODENUM_OPT_FLAGS)
  separate_arguments(_dn_opt UNIX_COMMAND "${DECODENUM_OPT_FLAGS}")
  target_compile_options(decodenum_objects PRIVATE ${_dn_opt})
endif()
