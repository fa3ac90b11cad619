/* kRGBImage: the CIFAR-10 binary format (records of 1 label byte and 3 x 32 x 32 pixel bytes,
 * channel-major, as in data_batch_1.bin ... test_batch.bin), one file or a list, plain or gzip.
 * SINGA read such records through a data layer and parsed them with RGBImageLayer; here one
 * input layer does both, keeping the records as bytes (as kIDXData does) and converting each
 * batch to an N x 3 x S x S blob with labels:
 *   v = (pixel - mean) * scale, mean being the number `mean` or, from `meanfile`, one per pixel;
 *   with `cropsize` S < 32 an S x S window: at a random offset in kTrain, centred otherwise;
 *   with `mirror`, in kTrain, flipped left-right with probability 1/2.
 * As in SINGA the mean is subtracted before cropping and the scale applied last.  The random
 * choices come from the job's generator, so a run repeats and resumes exactly.  `meanfile` holds
 * the 3 x 32 x 32 means in the record's pixel order, either as 3072 bytes or as 3072 floats in
 * host byte order (12288 bytes). */
#include <stdlib.h>
#include <string.h>

#include "layers/layers.h"
#include "layers/records.h"
#include "singa/net.h"

#define SIDE 32
#define PIXELS (3 * SIDE * SIDE)
#define RECORD (1 + PIXELS)

typedef struct rgb_state {
    singa_records rec;
    uint8_t *bytes; /* count records of RECORD bytes */
    int crop;       /* output side */
    bool mirror;
    float scale;
    float mean[PIXELS];
} rgb_state;
SINGA_RECORDS_FIRST(rgb_state);

static const singa_field fields[] = {
    {"path", SINGA_FIELD_STRS},      {"batchsize", SINGA_FIELD_INT}, {"shuffle", SINGA_FIELD_BOOL},
    {"random_skip", SINGA_FIELD_INT}, {"scale", SINGA_FIELD_NUM},    {"cropsize", SINGA_FIELD_INT},
    {"mirror", SINGA_FIELD_BOOL},    {"mean", SINGA_FIELD_NUM},      {"meanfile", SINGA_FIELD_STR},
    {NULL, 0},
};

static int load_mean(singa_layer *l, rgb_state *s, const char *path, singa_err *err)
{
    uint8_t *b;
    size_t len;
    if (singa_records_read_file(l, path, &b, &len, err) < 0)
        return singa_err_prefix(err, "meanfile: ");
    if (len == PIXELS) {
        for (int i = 0; i < PIXELS; i++)
            s->mean[i] = b[i];
    } else if (len == PIXELS * sizeof(float)) {
        memcpy(s->mean, b, sizeof s->mean);
    } else {
        free(b);
        return singa_layer_err(l, err, "meanfile '%s' has %zu bytes; want %d (one byte per pixel) or %zu (one float per pixel)",
                               path, len, PIXELS, PIXELS * sizeof(float));
    }
    free(b);
    return 0;
}

/* Appends the records of one file to s->bytes (count records so far). */
static int load_records(singa_layer *l, rgb_state *s, const char *path, size_t *count, singa_err *err)
{
    uint8_t *b;
    size_t len;
    if (singa_records_read_file(l, path, &b, &len, err) < 0)
        return -1;
    if (len == 0 || len % RECORD != 0) {
        free(b);
        return singa_layer_err(l, err, "file '%s' has %zu bytes, not a positive multiple of %d (CIFAR-10 binary records: 1 label byte and 3x32x32 pixel bytes)",
                               path, len, RECORD);
    }
    if (*count == 0) {
        s->bytes = b;
    } else {
        uint8_t *all = realloc(s->bytes, *count * RECORD + len);
        if (!all) {
            free(b);
            return singa_layer_err(l, err, "out of memory reading '%s'", path);
        }
        memcpy(all + *count * RECORD, b, len);
        s->bytes = all;
        free(b);
    }
    for (size_t i = 0; i < len / RECORD; i++)
        if (singa_records_label(&s->rec, l, s->bytes[(*count + i) * RECORD], path, "record", i + 1, err) < 0)
            return -1;
    *count += len / RECORD;
    return 0;
}

static int setup(singa_layer *l, singa_err *err)
{
    rgb_state *s = l->state;
    size_t npaths = singa_conf_strs_len(l->conf, "path"), count = 0;
    const char *meanfile = singa_conf_str(l->conf, "meanfile", NULL);
    double scale = singa_conf_num(l->conf, "scale", 1.0);
    s->crop = singa_conf_int(l->conf, "cropsize", 0);
    s->mirror = singa_conf_bool(l->conf, "mirror", false);
    if (npaths == 0)
        return singa_layer_err(l, err, "field 'path' is required (a CIFAR-10 .bin file or a list of them)");
    if (scale == 0)
        return singa_layer_err(l, err, "field 'scale' must not be 0");
    if (s->crop < 0 || s->crop > SIDE)
        return singa_layer_err(l, err, "field 'cropsize' must be in 0..%d (0: no cropping), got %d", SIDE, s->crop);
    if (meanfile && singa_conf_get(l->conf, "mean"))
        return singa_layer_err(l, err, "give 'mean' or 'meanfile', not both");
    s->scale = (float)scale;
    s->crop = s->crop ? s->crop : SIDE;
    if (singa_records_conf(&s->rec, l, err) < 0)
        return -1;
    float mean = (float)singa_conf_num(l->conf, "mean", 0.0);
    for (int i = 0; i < PIXELS; i++)
        s->mean[i] = mean;
    if (meanfile && load_mean(l, s, meanfile, err) < 0)
        return -1;
    for (size_t i = 0; i < npaths; i++)
        if (load_records(l, s, singa_conf_strs_at(l->conf, "path", i), &count, err) < 0)
            return -1;
    int shape[4] = {s->rec.batch, 3, s->crop, s->crop};
    if (singa_layer_shape(l, 4, shape, err) < 0)
        return -1;
    if (singa_tensor_init(&l->aux, 1, shape, err) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
    return singa_records_start(&s->rec, l, count, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    rgb_state *s = l->state;
    bool train = phase == SINGA_PHASE_TRAIN;
    int S = s->crop, margin = SIDE - S;
    for (int b = 0; b < s->rec.batch; b++) {
        const uint8_t *r = s->bytes + singa_records_next(&s->rec, l) * RECORD;
        int y0 = margin / 2, x0 = margin / 2;
        bool flip = false;
        if (train && margin > 0) {
            y0 = (int)singa_rng_below(l->net->rng, (uint64_t)margin + 1);
            x0 = (int)singa_rng_below(l->net->rng, (uint64_t)margin + 1);
        }
        if (train && s->mirror)
            flip = singa_rng_below(l->net->rng, 2) == 1;
        l->aux.data[b] = r[0];
        const uint8_t *px = r + 1;
        float *out = l->data.data + (size_t)b * (size_t)(3 * S * S);
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < S; y++) {
                int at = (c * SIDE + y0 + y) * SIDE + x0;
                float *o = out + (c * S + y) * S;
                for (int x = 0; x < S; x++) {
                    int k = at + (flip ? S - 1 - x : x);
                    o[x] = ((float)px[k] - s->mean[k]) * s->scale;
                }
            }
    }
    return 0;
}

static void destroy(singa_layer *l)
{
    rgb_state *s = l->state;
    free(s->bytes);
    singa_records_free(&s->rec);
}

static void get_cursor(const singa_layer *l, int64_t c[SINGA_CURSOR_LEN])
{
    const rgb_state *s = l->state;
    singa_records_get_cursor(&s->rec, c);
}

static int set_cursor(singa_layer *l, const int64_t c[SINGA_CURSOR_LEN], singa_err *err)
{
    rgb_state *s = l->state;
    return singa_records_set_cursor(&s->rec, l, c, err);
}

const singa_layer_type singa_rgb_image_layer = {
    .name = "kRGBImage", .fields = fields, .min_src = 0, .max_src = 0, .flags = SINGA_LAYER_INPUT | SINGA_LAYER_SPLITS,
    .state_size = sizeof(rgb_state), .setup = setup, .forward = forward, .destroy = destroy,
    .get_cursor = get_cursor, .set_cursor = set_cursor,
};
