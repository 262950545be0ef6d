/* SPDX-License-Identifier: MIT */
/*
 * gguf.h: a reader of GGUF files (ggml's model format, versions 2 and 3).
 *
 * A GGUF file is, in order and little-endian: the magic "GGUF", a u32
 * version, a u64 tensor count, a u64 metadata count; the metadata (a key
 * string, a u32 value type, the value; strings are a u64 length and that many
 * bytes, arrays a u32 element type, a u64 count and the elements); the tensor
 * infos (a name, a u32 dimension count 1..4, that many u64 extents, innermost
 * first, a u32 ggml type, a u64 offset into the data section); padding to the
 * alignment (metadata general.alignment, a u32 power of two, else 32); the
 * data section, each tensor at an offset that is a multiple of the alignment.
 *
 * The reader maps the file (or takes a buffer) and indexes it in place: no
 * weight is copied, every string and tensor points into the mapping. Every
 * count, length, extent and offset is checked against the bytes that exist
 * before it is used, so a truncated or corrupt file gives an error message
 * (gf_file.err) and never a read past the mapping.
 */
#ifndef DECODE_GGUF_H
#define DECODE_GGUF_H

#include <stddef.h>
#include <stdint.h>

#define GF_MAX_DIMS 4
#define GF_DEFAULT_ALIGNMENT 32

/* Metadata value types, as the format numbers them. */
typedef enum gf_vtype {
    GF_U8 = 0,
    GF_I8 = 1,
    GF_U16 = 2,
    GF_I16 = 3,
    GF_U32 = 4,
    GF_I32 = 5,
    GF_F32 = 6,
    GF_BOOL = 7,
    GF_STRING = 8,
    GF_ARRAY = 9,
    GF_U64 = 10,
    GF_I64 = 11,
    GF_F64 = 12,
    GF_VTYPE_COUNT = 13
} gf_vtype;

/* A string inside the file: n bytes at p, not NUL-terminated. */
typedef struct gf_str {
    const char *p;
    uint64_t n;
} gf_str;

/* One metadata entry. For a scalar, `value` is its bytes (a string's are
   its length field). For an array, elem_type, count and value (the first
   element). */
typedef struct gf_kv {
    gf_str key;
    uint32_t type;
    uint32_t elem_type;
    uint64_t count;
    const uint8_t *value;
} gf_kv;

/* One tensor: ne[0] is the innermost extent (a row's length). */
typedef struct gf_tensor {
    gf_str name;
    uint32_t n_dims;
    uint32_t type; /* ggml's type id (dn_type) */
    uint64_t ne[GF_MAX_DIMS];
    uint64_t offset; /* in the data section */
    uint64_t bytes;
    const uint8_t *data;
} gf_tensor;

typedef struct gf_file {
    const uint8_t *base;
    size_t size;
    int mapped; /* 1: base is an mmap of `size` bytes (gf_close unmaps) */
    uint32_t version;
    uint64_t n_kv;
    uint64_t n_tensors;
    gf_kv *kv;
    gf_tensor *tensors;
    uint64_t alignment;
    uint64_t data_offset;
    char err[256];
} gf_file;

/* Maps `path` and indexes it. 0 on success; -1 with f->err set otherwise
   (nothing left to free in that case). */
int gf_open(const char *path, gf_file *f);

/* Indexes `size` bytes at `buf` (kept by the caller, alive as long as f). */
int gf_parse(const uint8_t *buf, size_t size, gf_file *f);

/* Frees the index (and unmaps a mapped file). Safe on a zeroed f. */
void gf_close(gf_file *f);

/* The entry of `key`, or NULL. */
const gf_kv *gf_find(const gf_file *f, const char *key);

/* The tensor called `name`, or NULL. */
const gf_tensor *gf_tensor_find(const gf_file *f, const char *name);

/* A scalar integer entry (any integer type, value >= 0) into *out.
   0 on success; -1 when absent, not an integer, negative or past UINT64_MAX. */
int gf_get_uint(const gf_file *f, const char *key, uint64_t *out);

/* The unsigned little-endian integer of `bytes` (1..8) bytes at p, on any host. */
uint64_t gf_load_le(const uint8_t *p, unsigned bytes);

/* A scalar F32 or F64 entry, rounded to float. 0 on success, -1 otherwise. */
int gf_get_float(const gf_file *f, const char *key, float *out);

/* A scalar string entry. 0 on success, -1 otherwise. */
int gf_get_str(const gf_file *f, const char *key, gf_str *out);

/* Whether s equals the NUL-terminated c. */
int gf_str_eq(gf_str s, const char *c);

/* The strings of an array entry of strings into out[0..kv->count) (the
   caller provides count entries). 0 on success, -1 if kv is no such array. */
int gf_array_strings(const gf_file *f, const gf_kv *kv, gf_str *out);

#endif /* DECODE_GGUF_H */
