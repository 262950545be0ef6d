# SPDX-License-Identifier: MIT
# Cross build for i686 Linux with Debian's gcc-i686-linux-gnu (and libc6-dev-i386-cross);
# tests run through qemu-i386 (qemu-user). Programs are linked statically
# (the cross C library's libc.a), so qemu needs no -L: with the cross C library
# as its prefix (qemu-i386 -L /usr/i686-linux-gnu), Debian 12's qemu-user can hang in
# pthread_create. Configure with BUILD_SHARED_LIBS=OFF (tools/build.sh cross).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(CMAKE_C_COMPILER i686-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE i686-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/i686-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-i386)
