/* kRGBImage, in two roles:
 * - an input layer over the CIFAR-10 binary format (records of 1 label byte and 3 x 32 x 32 pixel
 *   bytes, channel-major, as in data_batch_1.bin ... test_batch.bin), one file or a list, plain or
 *   gzip, keeping the records as bytes (as kIDXData does) and converting each batch to an
 *   N x 3 x S x S blob with labels;
 * - with a source layer (kShardData, kRecordInput), SINGA's parser: the source's N x C x H x W
 *   values to N x C x S x S, its labels left to kLabel.
 * Either way, as SINGA's RGBImageLayer:
 *   v = (pixel - mean) * scale, mean being the number `mean` or, from `meanfile`, one per pixel;
 *   with `cropsize` S an S x S window: at a random offset in kTrain, centred otherwise;
 *   with `mirror`, in kTrain, flipped left-right with probability 1/2 (image.c).
 * The random choices come from the job's generator, so a run repeats and resumes exactly.
 * `meanfile` holds the means in the image's pixel order: one byte or one float (host byte order)
 * per pixel, or CIFAR's image_mean.bin of either SINGA version (shard.c).
 * With a source the layer is no input layer of its own: setup gives it the parser's type, which
 * has no cursor and is not fed by singa.predict. */
#include <stdlib.h>
#include <string.h>

#include "layers/image.h"
#include "layers/layers.h"
#include "layers/records.h"
#include "layers/shard.h"
#include "singa/net.h"

#define SIDE 32
#define PIXELS (3 * SIDE * SIDE)
#define RECORD (1 + PIXELS)

typedef struct rgb_state {
    singa_records rec;
    uint8_t *bytes; /* count records of RECORD bytes */
    singa_image_parse img;
    float *pixels; /* an input record's pixels as floats */
    bool borrowed; /* bytes are a pipeline's first copy's (records.h singa_records_twin) */
} rgb_state;
SINGA_RECORDS_FIRST(rgb_state);

static const singa_field fields[] = {
    {"path", SINGA_FIELD_STRS},      {"batchsize", SINGA_FIELD_INT}, {"shuffle", SINGA_FIELD_BOOL},
    {"random_skip", SINGA_FIELD_INT}, {"scale", SINGA_FIELD_NUM},    {"cropsize", SINGA_FIELD_INT},
    {"mirror", SINGA_FIELD_BOOL},    {"mean", SINGA_FIELD_NUM},      {"meanfile", SINGA_FIELD_STR},
    {NULL, 0},
};

static int load_mean(singa_layer *l, rgb_state *s, const char *path, size_t n, singa_err *err)
{
    uint8_t *b;
    size_t len;
    if (singa_records_read_file(l, path, &b, &len, err) < 0)
        return singa_err_prefix(err, "meanfile: ");
    if (len == n) {
        for (size_t i = 0; i < n; i++)
            s->img.mean[i] = b[i];
    } else if (len == n * sizeof(float)) {
        memcpy(s->img.mean, b, n * sizeof(float));
    } else if (singa_shard_mean(path, n, s->img.mean, err) < 0) {
        free(b);
        return singa_layer_err(l, err, "meanfile '%s' has %zu bytes: not %zu (one byte per pixel) nor %zu (one float per "
                                       "pixel), and as SINGA's image_mean.bin: %s", path, len, n, n * sizeof(float), err->msg);
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

/* scale, cropsize (against an h x w image), mirror, and the mean (n pixels) from `mean` or
 * `meanfile`: what both roles read. */
static int setup_transform(singa_layer *l, rgb_state *s, int h, int w, size_t n, singa_err *err)
{
    const char *meanfile = singa_conf_str(l->conf, "meanfile", NULL);
    double scale = singa_conf_num(l->conf, "scale", 1.0);
    int side = h < w ? h : w;
    s->img.crop = singa_conf_int(l->conf, "cropsize", 0);
    s->img.mirror = singa_conf_bool(l->conf, "mirror", false);
    if (scale == 0)
        return singa_layer_err(l, err, "field 'scale' must not be 0");
    if (s->img.crop < 0 || s->img.crop > side)
        return singa_layer_err(l, err, "field 'cropsize' must be in 0..%d (0: no cropping), got %d", side, s->img.crop);
    if (s->img.crop == 0 && h != w)
        return singa_layer_err(l, err, "the images are %d x %d: set 'cropsize' to cut a square from them", h, w);
    if (meanfile && singa_conf_get(l->conf, "mean"))
        return singa_layer_err(l, err, "give 'mean' or 'meanfile', not both");
    s->img.scale = (float)scale;
    s->img.crop = s->img.crop ? s->img.crop : side;
    if (!(s->img.mean = malloc(n * sizeof *s->img.mean)))
        return singa_layer_err(l, err, "out of memory");
    float mean = (float)singa_conf_num(l->conf, "mean", 0.0);
    for (size_t i = 0; i < n; i++)
        s->img.mean[i] = mean;
    return meanfile ? load_mean(l, s, meanfile, n, err) : 0;
}

static const singa_layer_type parser_type;

/* The parser: the source's images; its batch size and records are the source's. */
static int setup_parser(singa_layer *l, rgb_state *s, singa_err *err)
{
    static const char *const input_only[] = {"path", "batchsize", "shuffle", "random_skip"};
    for (size_t i = 0; i < sizeof input_only / sizeof input_only[0]; i++)
        if (singa_conf_get(l->conf, input_only[i]))
            return singa_layer_err(l, err, "field '%s' belongs to the source layer '%s' when kRGBImage parses its "
                                           "records: remove it here", input_only[i], l->src[0]->name);
    const singa_tensor *in = &l->src[0]->data;
    if (in->ndim != 4)
        return singa_layer_err(l, err, "source layer '%s' gives %d-dimensional records; kRGBImage parses images of "
                                       "shape C x H x W (records of shape [3, 32, 32] for CIFAR-10)",
                               l->src[0]->name, in->ndim - 1);
    l->type = &parser_type;
    size_t n = (size_t)in->shape[1] * (size_t)in->shape[2] * (size_t)in->shape[3];
    if (setup_transform(l, s, in->shape[2], in->shape[3], n, err) < 0)
        return -1;
    int shape[4] = {in->shape[0], in->shape[1], s->img.crop, s->img.crop};
    return singa_layer_shape(l, 4, shape, err);
}

static int setup(singa_layer *l, singa_err *err)
{
    rgb_state *s = l->state;
    if (l->nsrc > 0)
        return setup_parser(l, s, err);
    size_t npaths = singa_conf_strs_len(l->conf, "path"), count = 0;
    if (npaths == 0)
        return singa_layer_err(l, err, "field 'path' is required (a CIFAR-10 .bin file or a list of them), or a source "
                                       "layer (kShardData, kRecordInput) whose records it parses");
    if (setup_transform(l, s, SIDE, SIDE, PIXELS, err) < 0 || singa_records_conf(&s->rec, l, err) < 0)
        return -1;
    if (!(s->pixels = malloc(PIXELS * sizeof *s->pixels)))
        return singa_layer_err(l, err, "out of memory");
    const rgb_state *first = singa_records_twin(&s->rec, l);
    if (first) {
        s->bytes = first->bytes;
        count = first->rec.count;
        s->borrowed = true;
    }
    for (size_t i = 0; i < npaths && !first; i++)
        if (load_records(l, s, singa_conf_strs_at(l->conf, "path", i), &count, err) < 0)
            return -1;
    int shape[4] = {s->rec.batch, 3, s->img.crop, s->img.crop};
    if (singa_layer_shape(l, 4, shape, err) < 0)
        return -1;
    if (singa_tensor_init(&l->aux, 1, shape, err) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
    return singa_records_start(&s->rec, l, count, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    rgb_state *s = l->state;
    size_t out = (size_t)(3 * s->img.crop * s->img.crop);
    for (int b = 0; b < s->rec.batch; b++) {
        const uint8_t *r = s->bytes + singa_records_next(&s->rec, l) * RECORD;
        singa_crop k = singa_image_crop_pick(l, phase, SIDE, SIDE, s->img.crop, s->img.mirror);
        l->aux.data[b] = r[0];
        for (int i = 0; i < PIXELS; i++)
            s->pixels[i] = r[1 + i];
        singa_image_crop(s->pixels, s->img.mean, 3, SIDE, SIDE, s->img.crop, k, s->img.scale,
                         l->data.data + (size_t)b * out);
    }
    return 0;
}

static int forward_parser(singa_layer *l, singa_phase phase, singa_err *err)
{
    rgb_state *s = l->state;
    singa_image_parse_batch(l, phase, &s->img);
    return 0;
}

static void destroy(singa_layer *l)
{
    rgb_state *s = l->state;
    if (!s->borrowed)
        free(s->bytes);
    free(s->img.mean);
    free(s->pixels);
    singa_records_free(&s->rec);
}

static const singa_layer_type parser_type = {
    .name = "kRGBImage", .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(rgb_state), .setup = setup, .forward = forward_parser, .destroy = destroy,
    .export_onnx = singa_image_export_onnx,
};

const singa_image_parse *singa_rgb_image_parse(const singa_layer *l)
{
    return l->type == &parser_type ? &((const rgb_state *)l->state)->img : NULL;
}

const singa_layer_type singa_rgb_image_layer = {
    .name = "kRGBImage", .fields = fields, .min_src = 0, .max_src = 1, .flags = SINGA_LAYER_INPUT | SINGA_LAYER_SPLITS,
    .state_size = sizeof(rgb_state), .setup = setup, .forward = forward, .destroy = destroy,
    .get_cursor = singa_records_get_cursor, .set_cursor = singa_records_set_cursor,
};
