/* SPDX-License-Identifier: MIT */
/*
 * decode.h: the `decodenum decode` command (the CLI calls it with the
 * arguments after "decode").
 */
#ifndef DECODE_DECODE_H
#define DECODE_DECODE_H

/* Runs the command; its exit status (0 ok, 1 failure, 2 usage). */
int dd_main(int argc, char **argv);

#endif /* DECODE_DECODE_H */
