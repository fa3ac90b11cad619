/* Reading the protobuf wire format (pbread.c): enough to decode messages whose schema the caller
 * knows (SINGA's records), without protobuf itself.  Every read is bounds-checked against the
 * buffer; a malformed message is an error naming the byte offset, counted from `base` so that a
 * message inside a file is reported at its place in the file. */
#ifndef SINGA_CORE_PBREAD_H
#define SINGA_CORE_PBREAD_H

#include <stddef.h>
#include <stdint.h>

#include "singa/error.h"

enum { SINGA_PB_VARINT = 0, SINGA_PB_FIXED64 = 1, SINGA_PB_BYTES = 2, SINGA_PB_FIXED32 = 5 };

typedef struct singa_pb {
    const uint8_t *p;
    size_t len, pos;
    size_t base; /* offset of p[0] in its file */
} singa_pb;

typedef struct singa_pb_field {
    uint32_t num;
    unsigned wire;
    uint64_t u;           /* a varint's, fixed32's or fixed64's value */
    const uint8_t *bytes; /* a length-delimited field's bytes (n of them) */
    size_t n;
    size_t at; /* offset of the field's tag, from base */
} singa_pb_field;

void singa_pb_init(singa_pb *r, const uint8_t *p, size_t len, size_t base);
/* The next field into *f: 1; the end of the message: 0; malformed: -1 with err naming the offset
 * (a truncated varint or value, a wire type 3, 4, 6 or 7, field number 0). */
int singa_pb_next(singa_pb *r, singa_pb_field *f, singa_err *err);
/* A varint at p[*pos] (below len): 0 and *pos past it, or -1 when truncated or longer than 10
 * bytes. */
int singa_pb_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v);
/* A repeated varint field (int32, int64, bool, enum), packed or not: the values f carries, each
 * passed to fn; -1 with err naming the offset of a malformed packed run.  *count gains their
 * number. */
int singa_pb_varints(const singa_pb_field *f, int (*fn)(void *ud, uint64_t v), void *ud, size_t *count,
                     singa_err *err);
/* A repeated float field, packed (wire type 2, a multiple of 4 bytes) or not (wire type 5): how
 * many floats f carries, or -1 with err naming its offset. */
long singa_pb_floats_count(const singa_pb_field *f, singa_err *err);
/* Copies the floats of f (checked by singa_pb_floats_count) to out; returns how many. */
size_t singa_pb_floats(const singa_pb_field *f, float *out);
/* A little-endian float at p. */
float singa_pb_float(const uint8_t *p);

#endif
