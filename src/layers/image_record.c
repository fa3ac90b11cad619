/* One place decodes SINGA's image records, whichever version wrote them.  A v0.1 Record is told
 * from a v0.3 RecordProto by its field 5 (the image), which RecordProto lacks.  Fields a reader
 * does not know are skipped, as protobuf does; a known field with the wrong wire type is an
 * error.  The values are not copied here: `pixel` points into the file, and the data floats
 * (packed or not, possibly in several runs) are gathered when a batch needs them. */
#include <stdio.h>
#include <string.h>

#include "layers/image_record.h"

static int push_dim(void *ud, uint64_t v)
{
    singa_image_record *r = ud;
    if (r->ndim < SINGA_RECORD_MAXDIM)
        r->shape[r->ndim] = (int)(int32_t)(uint32_t)v;
    r->ndim++;
    return 0;
}

static int decode_image(singa_image_record *r, singa_pb *m, singa_err *err)
{
    singa_pb_field f;
    int rc;
    size_t ndim = 0;
    bool has_data = false;
    while ((rc = singa_pb_next(m, &f, err)) == 1) {
        switch (f.num) {
        case 1:
            if (singa_pb_varints(&f, push_dim, r, &ndim, err) < 0)
                return singa_err_prefix(err, "shape: ");
            break;
        case 2:
            if (f.wire != SINGA_PB_VARINT)
                return singa_err_set(err, "byte offset %zu: label has wire type %u, not a varint", f.at, f.wire);
            r->label = (int32_t)(uint32_t)f.u;
            break;
        case 3:
            if (f.wire != SINGA_PB_BYTES)
                return singa_err_set(err, "byte offset %zu: pixel has wire type %u, not bytes", f.at, f.wire);
            r->pixel = f.bytes;
            r->npixel = f.n;
            break;
        case 4: {
            long n = singa_pb_floats_count(&f, err);
            if (n < 0)
                return singa_err_prefix(err, "data: ");
            r->ndata += (size_t)n;
            has_data = true;
            break;
        }
        default:
            break;
        }
    }
    if (rc < 0)
        return -1;
    size_t at = m->base;
    if (r->ndim > SINGA_RECORD_MAXDIM)
        return singa_err_set(err, "byte offset %zu: shape has %d dimensions, more than %d", at, r->ndim,
                             SINGA_RECORD_MAXDIM);
    size_t count = 1;
    for (int i = 0; i < r->ndim; i++) {
        if (r->shape[i] <= 0 || r->shape[i] > (1 << 24) || (count *= (size_t)r->shape[i]) > ((size_t)1 << 31))
            return singa_err_set(err, "byte offset %zu: implausible shape (dimension %d is %d)", at, i, r->shape[i]);
    }
    if (r->pixel && has_data)
        return singa_err_set(err, "byte offset %zu: the record holds both pixel bytes and float data", at);
    if (!r->pixel && !has_data)
        return singa_err_set(err, "byte offset %zu: the record holds neither pixel bytes nor float data", at);
    size_t n = singa_image_record_size(r);
    if (r->ndim == 0) { /* no shape: a vector */
        if (n > (1u << 30))
            return singa_err_set(err, "byte offset %zu: implausible record of %zu values", at, n);
        r->ndim = 1;
        r->shape[0] = (int)n;
    } else if (count != n) {
        char s[96];
        return singa_err_set(err, "byte offset %zu: shape %s holds %zu values but the record has %zu %s", at,
                             singa_image_record_shape_str(r, s, sizeof s), count, n,
                             r->pixel ? "pixel bytes" : "data floats");
    }
    return 0;
}

int singa_image_record_decode(singa_image_record *r, const uint8_t *p, size_t len, size_t base, singa_err *err)
{
    memset(r, 0, sizeof *r);
    singa_pb m, top;
    singa_pb_field f;
    singa_pb_init(&top, p, len, base);
    singa_pb_init(&m, p, len, base);
    int rc;
    while ((rc = singa_pb_next(&top, &f, err)) == 1)
        if (f.num == 5 && f.wire == SINGA_PB_BYTES) /* a v0.1 Record: the last image wins, as in protobuf */
            singa_pb_init(&m, f.bytes, f.n, base + (size_t)(f.bytes - p));
    if (rc < 0)
        return -1;
    r->msg = m;
    return decode_image(r, &m, err);
}

size_t singa_image_record_size(const singa_image_record *r) { return r->pixel ? r->npixel : r->ndata; }

void singa_image_record_values(const singa_image_record *r, float *out)
{
    if (r->pixel) {
        for (size_t i = 0; i < r->npixel; i++)
            out[i] = r->pixel[i];
        return;
    }
    singa_pb m = r->msg;
    singa_pb_field f;
    m.pos = 0;
    while (singa_pb_next(&m, &f, NULL) == 1) /* checked by decode */
        if (f.num == 4)
            out += singa_pb_floats(&f, out);
}

const char *singa_image_record_shape_str(const singa_image_record *r, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int i = 0; i < r->ndim && i < SINGA_RECORD_MAXDIM; i++)
        singa_appendf(buf, cap, i ? "x%d" : "%d", r->shape[i]);
    return buf;
}
