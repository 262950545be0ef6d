# SPDX-License-Identifier: MIT
# Cross build for armv7l Linux with Debian's gcc-arm-linux-gnueabihf (and libc6-dev-armhf-cross);
# tests run through qemu-arm (qemu-user). Programs are linked statically
# (the cross C library's libc.a), so qemu needs no -L: with the cross C library
# as its prefix (qemu-arm -L /usr/arm-linux-gnueabihf), Debian 12's qemu-user can hang in
# pthread_create. Configure with BUILD_SHARED_LIBS=OFF (tools/build.sh cross).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm)
