# SPDX-License-Identifier: MIT
# Cross build for s390x Linux with Debian's gcc-s390x-linux-gnu (and libc6-dev-s390x-cross);
# tests run through qemu-s390x (qemu-user). The libraries of the s390x architecture
# (dpkg --add-architecture s390x; libcmocka-dev:s390x) live in
# /usr/lib/s390x-linux-gnu and bring the s390x loader, so the test programs
# run without -L, as on AArch64 (cmake/toolchain-aarch64.cmake).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE s390x-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/s390x-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x)
