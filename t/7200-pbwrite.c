/* The protobuf encoder (src/core/pbwrite.c): every kind of field against bytes worked out by
 * hand from the protobuf encoding rules, nesting with one- and two-byte lengths, and a failure
 * that sticks. */
#include <stdint.h>
#include <string.h>

#include "core/pbwrite.h"
#include "tap.h"

static int same(const singa_pbw *w, const uint8_t *want, size_t n)
{
    if (w->len != n || memcmp(w->data, want, n) != 0) {
        printf("# got %zu bytes:", w->len);
        for (size_t i = 0; i < w->len && i < 40; i++)
            printf(" %02x", w->data[i]);
        printf("\n");
        return 0;
    }
    return 1;
}

int main(void)
{
    singa_pbw w;

    singa_pbw_init(&w);
    singa_pbw_varint(&w, 1);
    singa_pbw_varint(&w, 300);
    singa_pbw_varint(&w, UINT64_MAX);
    static const uint8_t v[] = {0x01, 0xac, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    ok(same(&w, v, sizeof v), "varints: 1, 300 and 2^64-1 in 1, 2 and 10 bytes");
    singa_pbw_free(&w);

    singa_pbw_init(&w);
    singa_pbw_int(&w, 1, 150);
    singa_pbw_int(&w, 2, -1);
    singa_pbw_int(&w, 16, 0);
    static const uint8_t t[] = {0x08, 0x96, 0x01, 0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x80, 0x01, 0x00};
    ok(same(&w, t, sizeof t), "int fields: tag (field << 3 | 0), a negative int as 10 bytes, field 16's two-byte tag");
    singa_pbw_free(&w);

    singa_pbw_init(&w);
    singa_pbw_float(&w, 2, 1.0f);
    singa_pbw_str(&w, 3, "ab");
    singa_pbw_bytes(&w, 4, "", 0);
    static const uint8_t f[] = {0x15, 0x00, 0x00, 0x80, 0x3f, 0x1a, 0x02, 'a', 'b', 0x22, 0x00};
    ok(same(&w, f, sizeof f), "a float (fixed32, little-endian), a string, empty bytes");
    singa_pbw_free(&w);

    singa_pbw_init(&w);
    const float fl[] = {1.0f, -2.0f};
    const int64_t in[] = {3, 270, -1};
    singa_pbw_floats(&w, 4, fl, 2);
    singa_pbw_ints(&w, 7, in, 3);
    static const uint8_t p[] = {0x22, 0x08, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0, 0x3a, 0x0d, 0x03, 0x8e,
                                0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    ok(same(&w, p, sizeof p), "packed floats (their raw bytes) and packed varints");
    singa_pbw_free(&w);

    singa_pbw_init(&w);
    size_t outer = singa_pbw_begin(&w, 7);
    singa_pbw_int(&w, 1, 5);
    size_t inner = singa_pbw_begin(&w, 2);
    singa_pbw_str(&w, 1, "x");
    singa_pbw_end(&w, inner);
    singa_pbw_end(&w, outer);
    static const uint8_t n[] = {0x3a, 0x07, 0x08, 0x05, 0x12, 0x03, 0x0a, 0x01, 'x'};
    ok(same(&w, n, sizeof n), "nested messages: each length in front of its body");
    singa_pbw_free(&w);

    singa_pbw_init(&w);
    char big[200];
    memset(big, 'q', sizeof big);
    outer = singa_pbw_begin(&w, 1);
    singa_pbw_bytes(&w, 2, big, sizeof big);
    singa_pbw_int(&w, 3, 1);
    singa_pbw_end(&w, outer);
    /* body: 0x12, 200 as c8 01, 200 bytes, 0x18 0x01 = 205 bytes, whose length is cd 01 */
    ok(w.len == 208 && w.data[0] == 0x0a && w.data[1] == 0xcd && w.data[2] == 0x01 && w.data[3] == 0x12 &&
           w.data[4] == 0xc8 && w.data[5] == 0x01 && w.data[6] == 'q' && w.data[205] == 'q' && w.data[206] == 0x18 &&
           w.data[207] == 0x01,
       "a nested message over 127 bytes gets a two-byte length, its body moved intact");
    singa_pbw_free(&w);

    singa_pbw_init(&w);
    singa_pbw_int(&w, 1, 1);
    int rc = singa_pbw_floats(&w, 4, fl, SIZE_MAX / 2);
    ok(rc < 0 && singa_pbw_ok(&w) < 0 && singa_pbw_str(&w, 1, "x") < 0 && singa_pbw_end(&w, 0) < 0,
       "a buffer that cannot grow fails, and the failure sticks");
    singa_pbw_free(&w);
    ok(w.data == NULL && w.len == 0 && singa_pbw_ok(&w) == 0, "free leaves an empty, usable writer");
    return done_testing();
}
