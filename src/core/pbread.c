/* The protobuf wire format, read side: a message is a sequence of (tag, value) with tag =
 * field number << 3 | wire type; varints are little-endian base-128 of at most 10 bytes,
 * fixed32/fixed64 little-endian, length-delimited values a varint length then the bytes.  A
 * repeated scalar may come one value per field or packed into one length-delimited field, and a
 * reader must accept both (protobuf's own parsers do).  Groups (wire types 3 and 4) were
 * deprecated before SINGA existed and are refused. */
#include <string.h>

#include "core/pbread.h"

void singa_pb_init(singa_pb *r, const uint8_t *p, size_t len, size_t base)
{
    r->p = p;
    r->len = len;
    r->pos = 0;
    r->base = base;
}

int singa_pb_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        if (*pos >= len)
            return -1;
        uint8_t b = p[(*pos)++];
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

int singa_pb_next(singa_pb *r, singa_pb_field *f, singa_err *err)
{
    if (r->pos >= r->len)
        return 0;
    memset(f, 0, sizeof *f);
    f->at = r->base + r->pos;
    uint64_t tag;
    if (singa_pb_varint(r->p, r->len, &r->pos, &tag) < 0)
        return singa_err_set(err, "byte offset %zu: truncated or overlong tag varint", f->at);
    f->num = (uint32_t)(tag >> 3);
    f->wire = (unsigned)(tag & 7);
    if (f->num == 0 || tag >> 32)
        return singa_err_set(err, "byte offset %zu: invalid field number %llu", f->at, (unsigned long long)(tag >> 3));
    size_t left = r->len - r->pos;
    switch (f->wire) {
    case SINGA_PB_VARINT:
        if (singa_pb_varint(r->p, r->len, &r->pos, &f->u) < 0)
            return singa_err_set(err, "byte offset %zu: field %u: truncated or overlong varint", f->at, f->num);
        return 1;
    case SINGA_PB_FIXED64:
    case SINGA_PB_FIXED32: {
        size_t w = f->wire == SINGA_PB_FIXED32 ? 4 : 8;
        if (left < w)
            return singa_err_set(err, "byte offset %zu: field %u: %zu-byte value truncated (%zu bytes left)", f->at,
                                 f->num, w, left);
        for (size_t i = 0; i < w; i++)
            f->u |= (uint64_t)r->p[r->pos + i] << (8 * i);
        r->pos += w;
        return 1;
    }
    case SINGA_PB_BYTES: {
        uint64_t n;
        if (singa_pb_varint(r->p, r->len, &r->pos, &n) < 0)
            return singa_err_set(err, "byte offset %zu: field %u: truncated or overlong length varint", f->at, f->num);
        if (n > r->len - r->pos)
            return singa_err_set(err, "byte offset %zu: field %u: length %llu runs past the message's end (%zu bytes left)",
                                 f->at, f->num, (unsigned long long)n, r->len - r->pos);
        f->bytes = r->p + r->pos;
        f->n = (size_t)n;
        r->pos += (size_t)n;
        return 1;
    }
    default:
        return singa_err_set(err, "byte offset %zu: field %u: unsupported wire type %u", f->at, f->num, f->wire);
    }
}

int singa_pb_varints(const singa_pb_field *f, int (*fn)(void *ud, uint64_t v), void *ud, size_t *count,
                     singa_err *err)
{
    if (f->wire == SINGA_PB_VARINT) {
        ++*count;
        return fn(ud, f->u);
    }
    if (f->wire != SINGA_PB_BYTES)
        return singa_err_set(err, "byte offset %zu: field %u: wire type %u where varints were expected", f->at, f->num,
                             f->wire);
    for (size_t pos = 0; pos < f->n;) {
        uint64_t v;
        if (singa_pb_varint(f->bytes, f->n, &pos, &v) < 0)
            return singa_err_set(err, "byte offset %zu: field %u: truncated varint in a packed run", f->at, f->num);
        ++*count;
        if (fn(ud, v) < 0)
            return -1;
    }
    return 0;
}

long singa_pb_floats_count(const singa_pb_field *f, singa_err *err)
{
    if (f->wire == SINGA_PB_FIXED32)
        return 1;
    if (f->wire == SINGA_PB_BYTES && f->n % 4 == 0)
        return (long)(f->n / 4);
    if (f->wire == SINGA_PB_BYTES)
        return singa_err_set(err, "byte offset %zu: field %u: packed floats of %zu bytes, not a multiple of 4", f->at,
                             f->num, f->n);
    return singa_err_set(err, "byte offset %zu: field %u: wire type %u where floats were expected", f->at, f->num,
                         f->wire);
}

float singa_pb_float(const uint8_t *p)
{
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

size_t singa_pb_floats(const singa_pb_field *f, float *out)
{
    if (f->wire == SINGA_PB_FIXED32) {
        uint32_t u = (uint32_t)f->u;
        memcpy(out, &u, sizeof *out);
        return 1;
    }
    for (size_t i = 0; i < f->n / 4; i++)
        out[i] = singa_pb_float(f->bytes + 4 * i);
    return f->n / 4;
}
