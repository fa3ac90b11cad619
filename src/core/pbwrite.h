/* A small protobuf wire-format encoder (varints, tags, length-delimited fields, packed numbers)
 * on a growable buffer, enough to write messages such as ONNX's ModelProto without a protobuf
 * library.  Every writer returns 0, or -1 once memory ran out; the failure sticks, so a caller
 * may write a whole message and test the result of the last call or singa_pbw_ok. */
#ifndef SINGA_CORE_PBWRITE_H
#define SINGA_CORE_PBWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The wire types of a field's tag. */
enum { SINGA_PB_VARINT = 0, SINGA_PB_FIXED64 = 1, SINGA_PB_BYTES = 2, SINGA_PB_FIXED32 = 5 };

typedef struct singa_pbw {
    uint8_t *data;
    size_t len, cap;
    bool failed; /* out of memory at some point: the bytes are incomplete */
} singa_pbw;

void singa_pbw_init(singa_pbw *w);
void singa_pbw_free(singa_pbw *w);
int singa_pbw_ok(const singa_pbw *w);

int singa_pbw_raw(singa_pbw *w, const void *p, size_t n);
int singa_pbw_varint(singa_pbw *w, uint64_t v);
int singa_pbw_tag(singa_pbw *w, int field, int wire);
/* A varint field: int32/int64/uint64/enum/bool (a negative int as its 64-bit two's complement). */
int singa_pbw_int(singa_pbw *w, int field, int64_t v);
int singa_pbw_float(singa_pbw *w, int field, float v);
int singa_pbw_bytes(singa_pbw *w, int field, const void *p, size_t n);
int singa_pbw_str(singa_pbw *w, int field, const char *s);
/* Packed repeated fields (also the little-endian bytes of float32 raw data). */
int singa_pbw_floats(singa_pbw *w, int field, const float *v, size_t n);
int singa_pbw_ints(singa_pbw *w, int field, const int64_t *v, size_t n);
/* A nested message: begin writes its tag and returns where its body starts; end puts the
 * body's length in front of it. */
size_t singa_pbw_begin(singa_pbw *w, int field);
int singa_pbw_end(singa_pbw *w, size_t start);

#endif
