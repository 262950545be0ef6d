/* SPDX-License-Identifier: MIT */
/* The decode engine as a program of its own (`decodenum-decode`), built
   with the examples against an installed libdecodenum; the same command as
   `decodenum decode`. */
#include "decode.h"

int main(int argc, char **argv) { return dd_main(argc - 1, argv + 1); }
