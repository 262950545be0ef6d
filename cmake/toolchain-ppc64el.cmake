# SPDX-License-Identifier: MIT
# Cross build for ppc64le Linux with Debian's gcc-powerpc64le-linux-gnu (and libc6-dev-ppc64el-cross);
# tests run through qemu-ppc64le (qemu-user). Programs are linked statically
# (the cross C library's libc.a), so qemu needs no -L: with the cross C library
# as its prefix (qemu-ppc64le -L /usr/powerpc64le-linux-gnu), Debian 12's qemu-user can hang in
# pthread_create. Configure with BUILD_SHARED_LIBS=OFF (tools/build.sh cross).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ppc64le)
set(CMAKE_C_COMPILER powerpc64le-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE powerpc64le-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/powerpc64le-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-ppc64le)
