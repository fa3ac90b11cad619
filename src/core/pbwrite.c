/* The protobuf wire-format encoder (see pbwrite.h).  A nested message's length is known only
 * once its body is written, so end() moves the body right by the varint's size and writes the
 * length in the gap: one move per nesting level, which for a model file is a few levels over
 * its params. */
#include <stdlib.h>
#include <string.h>

#include "core/pbwrite.h"

void singa_pbw_init(singa_pbw *w) { memset(w, 0, sizeof *w); }

void singa_pbw_free(singa_pbw *w)
{
    free(w->data);
    singa_pbw_init(w);
}

int singa_pbw_ok(const singa_pbw *w) { return w->failed ? -1 : 0; }

/* Room for n more bytes. */
static int reserve(singa_pbw *w, size_t n)
{
    if (w->failed)
        return -1;
    if (w->cap - w->len >= n)
        return 0;
    size_t cap = w->cap ? w->cap : 256;
    while (cap - w->len < n) {
        if (cap > SIZE_MAX / 2) {
            w->failed = true;
            return -1;
        }
        cap *= 2;
    }
    uint8_t *d = realloc(w->data, cap);
    if (!d) {
        w->failed = true;
        return -1;
    }
    w->data = d;
    w->cap = cap;
    return 0;
}

int singa_pbw_raw(singa_pbw *w, const void *p, size_t n)
{
    if (reserve(w, n) < 0)
        return -1;
    if (n)
        memcpy(w->data + w->len, p, n);
    w->len += n;
    return 0;
}

static size_t varint_encode(uint8_t *b, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (uint8_t)v;
    return n;
}

int singa_pbw_varint(singa_pbw *w, uint64_t v)
{
    uint8_t b[10];
    return singa_pbw_raw(w, b, varint_encode(b, v));
}

int singa_pbw_tag(singa_pbw *w, int field, int wire) { return singa_pbw_varint(w, ((uint64_t)field << 3) | (uint64_t)wire); }

int singa_pbw_int(singa_pbw *w, int field, int64_t v)
{
    singa_pbw_tag(w, field, SINGA_PB_VARINT);
    return singa_pbw_varint(w, (uint64_t)v);
}

static void put_f32(uint8_t *b, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(u >> (8 * i));
}

int singa_pbw_float(singa_pbw *w, int field, float v)
{
    uint8_t b[4];
    put_f32(b, v);
    singa_pbw_tag(w, field, SINGA_PB_FIXED32);
    return singa_pbw_raw(w, b, 4);
}

int singa_pbw_bytes(singa_pbw *w, int field, const void *p, size_t n)
{
    singa_pbw_tag(w, field, SINGA_PB_BYTES);
    singa_pbw_varint(w, n);
    return singa_pbw_raw(w, p, n);
}

int singa_pbw_str(singa_pbw *w, int field, const char *s) { return singa_pbw_bytes(w, field, s, strlen(s)); }

int singa_pbw_floats(singa_pbw *w, int field, const float *v, size_t n)
{
    if (n > SIZE_MAX / 4) {
        w->failed = true;
        return -1;
    }
    singa_pbw_tag(w, field, SINGA_PB_BYTES);
    singa_pbw_varint(w, n * 4);
    if (reserve(w, n * 4) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        put_f32(w->data + w->len + 4 * i, v[i]);
    w->len += n * 4;
    return 0;
}

int singa_pbw_ints(singa_pbw *w, int field, const int64_t *v, size_t n)
{
    size_t start = singa_pbw_begin(w, field);
    for (size_t i = 0; i < n; i++)
        singa_pbw_varint(w, (uint64_t)v[i]);
    return singa_pbw_end(w, start);
}

size_t singa_pbw_begin(singa_pbw *w, int field)
{
    singa_pbw_tag(w, field, SINGA_PB_BYTES);
    return w->len;
}

int singa_pbw_end(singa_pbw *w, size_t start)
{
    if (w->failed)
        return -1;
    uint8_t b[10];
    size_t body = w->len - start, n = varint_encode(b, body);
    if (reserve(w, n) < 0)
        return -1;
    memmove(w->data + start + n, w->data + start, body);
    memcpy(w->data + start, b, n);
    w->len += n;
    return 0;
}
