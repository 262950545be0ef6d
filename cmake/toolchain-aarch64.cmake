# SPDX-License-Identifier: MIT
# Cross build for AArch64 Linux with Debian's gcc-aarch64-linux-gnu; tests
# run through qemu-aarch64 (qemu-user). Libraries of the arm64 architecture
# (dpkg --add-architecture arm64; libcmocka-dev:arm64) live in
# /usr/lib/aarch64-linux-gnu, the cross C library in /usr/aarch64-linux-gnu.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Tests run on the arm64 C library of the multiarch packages (libc6:arm64,
# which libcmocka-dev:arm64 brings), found by its own loader path. With the
# cross C library instead (qemu-aarch64 -L /usr/aarch64-linux-gnu), Debian 12's
# qemu-user hangs in pthread_create, so no -L here.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
