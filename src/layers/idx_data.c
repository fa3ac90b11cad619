/* kIDXData: MNIST-format IDX files (plain or gzip), read by datafile.c as singa.read_idx reads
 * them.  The whole set stays in memory as bytes and each batch is converted to floats on the way
 * out, so a data set costs its file size, not four times it.  Which record comes next
 * (shuffling, random_skip, the checkpointed cursor) is records.c's.  A pipeline's micro-batch
 * copies read the set their first copy loaded (records.h singa_records_twin). */
#include "layers/ctx.h"
#include "layers/datafile.h"
#include "layers/layers.h"
#include "layers/records.h"
#include "singa/net.h"

typedef struct idx_state {
    singa_records rec;
    singa_idx images, labels;
    bool borrowed; /* images and labels are the first copy's */
} idx_state;
SINGA_RECORDS_FIRST(idx_state);

static const singa_field fields[] = {
    {"images", SINGA_FIELD_STR},  {"labels", SINGA_FIELD_STR},      {"batchsize", SINGA_FIELD_INT},
    {"shuffle", SINGA_FIELD_BOOL}, {"random_skip", SINGA_FIELD_INT}, {NULL, 0},
};

static int idx_load(singa_layer *l, singa_idx *f, const char *field, const char *path, singa_err *err)
{
    int rc = l->ctx->shapes_only ? singa_idx_read_header(f, path, err) : singa_idx_read(f, path, err);
    return rc < 0 ? singa_layer_err(l, err, "%s %s", field, err->msg) : 0;
}

/* The images and labels files, checked (only their headers in a net built for its shapes). */
static int load(singa_layer *l, const char *images, const char *labels, singa_err *err)
{
    idx_state *s = l->state;
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
        for (size_t i = 0; s->labels.bytes && i < s->labels.count; i++)
            if (singa_records_label(&s->rec, l, s->labels.bytes[i], labels, "record", i + 1, err) < 0)
                return -1;
    }
    return 0;
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
    const idx_state *first = singa_records_twin(&s->rec, l);
    if (first) {
        s->images = first->images;
        s->labels = first->labels;
        s->borrowed = true;
    } else if (load(l, images, labels, err) < 0)
        return -1;
    int shape[4] = {s->rec.batch}, nd = s->images.ndim;
    for (int i = 1; i < nd; i++)
        shape[i] = s->images.dims[i];
    if (nd == 1) {
        shape[1] = 1;
        nd = 2;
    }
    if (singa_layer_shape(l, nd, shape, err) < 0)
        return -1;
    if (s->labels.count && singa_tensor_init(&l->aux, 1, shape, err) < 0)
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
    if (!s->borrowed) {
        singa_idx_free(&s->images);
        singa_idx_free(&s->labels);
    }
    singa_records_free(&s->rec);
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
    .get_cursor = singa_records_get_cursor,
    .set_cursor = singa_records_set_cursor,
};
