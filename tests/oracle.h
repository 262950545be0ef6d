/* SPDX-License-Identifier: MIT */
/* Reading ../shared/oracle files: little-endian fields, skip when absent. */
#ifndef DN_TEST_ORACLE_H
#define DN_TEST_ORACLE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h" /* tf */

#ifndef DN_ORACLE_DIR
#define DN_ORACLE_DIR "../shared/oracle"
#endif

typedef struct oracle_file {
    uint8_t *data;
    size_t size, pos;
} oracle_file;

/* Loads DN_ORACLE_DIR/name whole; 0 when it is absent or unreadable. */
static int oracle_open(oracle_file *f, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", DN_ORACLE_DIR, name);
    FILE *fp = fopen(path, "rb");
    if (!fp) return 0;
    fseek(fp, 0, SEEK_END);
    long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    f->data = malloc(len > 0 ? (size_t)len : 1);
    f->size = len > 0 ? (size_t)len : 0;
    f->pos = 0;
    int ok = f->data && fread(f->data, 1, f->size, fp) == f->size;
    fclose(fp);
    return ok;
}

static int oracle_has(const oracle_file *f, size_t bytes) { return f->size - f->pos >= bytes; }

static uint32_t oracle_u32(oracle_file *f)
{
    const uint8_t *p = f->data + f->pos;
    f->pos += 4;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t oracle_u16(oracle_file *f)
{
    const uint8_t *p = f->data + f->pos;
    f->pos += 2;
    return (uint16_t)(p[0] | p[1] << 8);
}

static float oracle_f32(oracle_file *f) { return tf(oracle_u32(f)); }

#endif
