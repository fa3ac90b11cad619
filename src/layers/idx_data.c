/* kIDXData: MNIST-format IDX files (plain or gzip).  The whole set stays in memory as bytes and
 * each batch is converted to floats on the way out, so a data set costs its file size, not four
 * times it.  Which record comes next (shuffling, random_skip, the checkpointed cursor) is
 * records.c's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "layers/layers.h"
#include "layers/records.h"
#include "singa/net.h"

typedef struct idx_file {
    uint8_t *bytes;
    int ndim;
    int dims[4];
    size_t count, record; /* number of records and bytes per record */
} idx_file;

typedef struct idx_state {
    singa_records rec;
    idx_file images, labels;
} idx_state;
SINGA_RECORDS_FIRST(idx_state);

static const singa_field fields[] = {
    {"images", SINGA_FIELD_STR},  {"labels", SINGA_FIELD_STR},      {"batchsize", SINGA_FIELD_INT},
    {"shuffle", SINGA_FIELD_BOOL}, {"random_skip", SINGA_FIELD_INT}, {NULL, 0},
};

static int read_full(gzFile f, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        int r = gzread(f, (char *)buf + got, (unsigned)(n - got > (1u << 30) ? (1u << 30) : n - got));
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got == n ? 0 : -1;
}

static int idx_load(singa_layer *l, idx_file *f, const char *field, const char *path, singa_err *err)
{
    errno = 0;
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return singa_layer_err(l, err, "%s file '%s': %s", field, path, strerror(errno ? errno : ENOENT));
    uint8_t head[4], dimb[16];
    int rc = -1;
    if (read_full(gz, head, 4) < 0 || head[0] || head[1]) {
        singa_layer_err(l, err, "%s file '%s': not an IDX file (bad magic)", field, path);
        goto out;
    }
    if (head[2] != 0x08 || head[3] < 1 || head[3] > 4) {
        singa_layer_err(l, err, "%s file '%s': unsupported IDX element type 0x%02x or %d dimensions (unsigned bytes, 1 to 4 dimensions supported)",
                        field, path, head[2], head[3]);
        goto out;
    }
    f->ndim = head[3];
    if (read_full(gz, dimb, 4u * (unsigned)f->ndim) < 0) {
        singa_layer_err(l, err, "%s file '%s': truncated header", field, path);
        goto out;
    }
    f->record = 1;
    for (int i = 0; i < f->ndim; i++) {
        uint32_t d = (uint32_t)dimb[4 * i] << 24 | (uint32_t)dimb[4 * i + 1] << 16 |
                     (uint32_t)dimb[4 * i + 2] << 8 | dimb[4 * i + 3];
        if (d == 0 || d > (1u << 30)) {
            singa_layer_err(l, err, "%s file '%s': dimension %d is %u", field, path, i, d);
            goto out;
        }
        f->dims[i] = (int)d;
        if (i && (f->record *= d) > (1u << 24)) /* checked each time, so it cannot wrap */
            break;
    }
    f->count = (size_t)f->dims[0];
    if (f->record > (1u << 24) || f->count * f->record > ((size_t)1 << 36)) {
        singa_layer_err(l, err, "%s file '%s': implausible size", field, path);
        goto out;
    }
    size_t bytes = f->count * f->record;
    if (!(f->bytes = malloc(bytes ? bytes : 1))) {
        singa_layer_err(l, err, "%s file '%s': out of memory for %zu bytes", field, path, bytes);
        goto out;
    }
    if (read_full(gz, f->bytes, bytes) < 0) {
        int zerr;
        const char *zmsg = gzerror(gz, &zerr);
        singa_layer_err(l, err, "%s file '%s': %s (expected %zu records of %zu bytes)", field, path,
                        zerr < 0 ? zmsg : "truncated", f->count, f->record);
        goto out;
    }
    rc = 0;
out:
    gzclose(gz);
    return rc;
}

static int setup(singa_layer *l, singa_err *err)
{
    idx_state *s = l->state;
    const char *images = singa_conf_str(l->conf, "images", NULL);
    const char *labels = singa_conf_str(l->conf, "labels", NULL);
    if (!images)
        return singa_layer_err(l, err, "field 'images' is required");
    if (singa_records_conf(&s->rec, l, err) < 0)
        return -1;
    if (idx_load(l, &s->images, "images", images, err) < 0)
        return -1;
    if (labels) {
        if (idx_load(l, &s->labels, "labels", labels, err) < 0)
            return -1;
        if (s->labels.count != s->images.count)
            return singa_layer_err(l, err, "labels file '%s' has %zu records but images file '%s' has %zu",
                                   labels, s->labels.count, images, s->images.count);
        if (s->labels.record != 1)
            return singa_layer_err(l, err, "labels file '%s' must hold one byte per record", labels);
        for (size_t i = 0; i < s->labels.count; i++)
            if (singa_records_label(&s->rec, l, s->labels.bytes[i], labels, "record", i + 1, err) < 0)
                return -1;
    }
    int shape[4] = {s->rec.batch}, nd = s->images.ndim;
    for (int i = 1; i < nd; i++)
        shape[i] = s->images.dims[i];
    if (nd == 1) {
        shape[1] = 1;
        nd = 2;
    }
    if (singa_layer_shape(l, nd, shape, err) < 0)
        return -1;
    if (s->labels.bytes && singa_tensor_init(&l->aux, 1, shape, err) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
    return singa_records_start(&s->rec, l, s->images.count, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    idx_state *s = l->state;
    size_t rec = s->images.record;
    for (int b = 0; b < s->rec.batch; b++) {
        size_t i = singa_records_next(&s->rec, l);
        const uint8_t *px = s->images.bytes + i * rec;
        float *row = l->data.data + (size_t)b * rec;
        for (size_t k = 0; k < rec; k++)
            row[k] = px[k];
        if (s->labels.bytes)
            l->aux.data[b] = s->labels.bytes[i];
    }
    return 0;
}

static void destroy(singa_layer *l)
{
    idx_state *s = l->state;
    free(s->images.bytes);
    free(s->labels.bytes);
    singa_records_free(&s->rec);
}

static void get_cursor(const singa_layer *l, int64_t c[SINGA_CURSOR_LEN])
{
    const idx_state *s = l->state;
    singa_records_get_cursor(&s->rec, c);
}

static int set_cursor(singa_layer *l, const int64_t c[SINGA_CURSOR_LEN], singa_err *err)
{
    idx_state *s = l->state;
    return singa_records_set_cursor(&s->rec, l, c, err);
}

const singa_layer_type singa_idx_data_layer = {
    .name = "kIDXData",
    .fields = fields,
    .min_src = 0,
    .max_src = 0,
    .flags = SINGA_LAYER_INPUT | SINGA_LAYER_SPLITS,
    .state_size = sizeof(idx_state),
    .setup = setup,
    .forward = forward,
    .destroy = destroy,
    .get_cursor = get_cursor,
    .set_cursor = set_cursor,
};
