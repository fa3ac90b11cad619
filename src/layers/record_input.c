/* Input layers over SINGA's record files, under SINGA's own names and fields (its `*_conf`
 * messages flattened onto the layer):
 *   kShardData   (v0.1, sharddata_conf): path (a DataShard folder), batchsize, random_skip;
 *   kRecordInput (v0.2-v0.3, store_conf): backend "kvfile", path, batchsize, shape, random_skip,
 *                mean_file / mean_value, std_file / std_value, has_label, prefetching;
 *   kStoreInput  the same fields: SINGA's StoreInputLayer, the base kRecordInput parsed through.
 * Each emits the records' values (pixel bytes as 0..255, or float data) as a batch shaped
 * batchsize x the records' shape, and their labels for kLabel, so SINGA's parser layers
 * (kMnist, kLabel, kRGBImage) work on top as they did in SINGA.  v0.3's normalisation is
 * (x - mean) / std, per value, as SingleLabelRecordLayer did it.  The order of records
 * (random_skip, a group's workers' share, the checkpointed cursor) is records.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/layers.h"
#include "layers/records.h"
#include "layers/shard.h"
#include "singa/net.h"

typedef struct record_state {
    singa_records rec;
    singa_shard shard;
    bool labels;
    float *mean, *std; /* one per value, or NULL */
    float *row;        /* a record's values, before normalisation */
    bool borrowed;     /* shard is a pipeline's first copy's (records.h singa_records_twin) */
} record_state;
SINGA_RECORDS_FIRST(record_state);

static const singa_field shard_fields[] = {
    {"path", SINGA_FIELD_STR}, {"batchsize", SINGA_FIELD_INT}, {"random_skip", SINGA_FIELD_INT}, {NULL, 0},
};

static const singa_field store_fields[] = {
    {"backend", SINGA_FIELD_STR},    {"path", SINGA_FIELD_STR},       {"batchsize", SINGA_FIELD_NUMS},
    {"shape", SINGA_FIELD_NUMS},     {"random_skip", SINGA_FIELD_INT}, {"mean_file", SINGA_FIELD_STR},
    {"std_file", SINGA_FIELD_STR},   {"mean_value", SINGA_FIELD_NUM}, {"std_value", SINGA_FIELD_NUM},
    {"has_label", SINGA_FIELD_BOOL}, {"prefetching", SINGA_FIELD_BOOL}, {"encoded", SINGA_FIELD_BOOL},
    {"separator", SINGA_FIELD_STR},  {NULL, 0},
};

/* store_conf's fields that select what this layer cannot do, refused with what to do instead. */
static int check_store(singa_layer *l, singa_err *err)
{
    const char *backend = singa_conf_str(l->conf, "backend", "kvfile");
    if (strcmp(backend, "textfile") == 0)
        return singa_layer_err(l, err, "backend \"textfile\" reads CSV text: use a kCSVInput layer (path, separator, batchsize)");
    if (strcmp(backend, "kvfile") != 0)
        return singa_layer_err(l, err, "backend \"%s\" is not supported: only \"kvfile\" (SINGA's KVFile) is; convert the "
                                       "data to a KVFile", backend);
    if (singa_conf_bool(l->conf, "encoded", false))
        return singa_layer_err(l, err, "encoded = true (JPEG-compressed records) is not supported: write the records "
                                       "with raw `pixel` bytes or float `data` and set encoded = false");
    if (singa_conf_get(l->conf, "separator"))
        return singa_layer_err(l, err, "field 'separator' is for the \"textfile\" backend: remove it (kvfile records "
                                       "have no separator) or use kCSVInput for text");
    if (singa_conf_get(l->conf, "mean_file") && singa_conf_get(l->conf, "mean_value"))
        return singa_layer_err(l, err, "give 'mean_file' or 'mean_value', not both");
    if (singa_conf_get(l->conf, "std_file") && singa_conf_get(l->conf, "std_value"))
        return singa_layer_err(l, err, "give 'std_file' or 'std_value', not both");
    return 0;
}

/* mean_file / mean_value (or std_*) into one value per record value; NULL when neither is set. */
static int load_norm(singa_layer *l, const char *what, float **out, singa_err *err)
{
    char file[16], value[16];
    snprintf(file, sizeof file, "%s_file", what);
    snprintf(value, sizeof value, "%s_value", what);
    const char *path = singa_conf_str(l->conf, file, NULL);
    record_state *s = l->state;
    if (!path && !singa_conf_get(l->conf, value))
        return 0;
    if (!(*out = malloc(s->shard.size * sizeof **out)))
        return singa_layer_err(l, err, "out of memory");
    if (path && singa_shard_mean(path, s->shard.size, *out, err) < 0)
        return singa_layer_err(l, err, "%s: %s", file, err->msg);
    if (!path)
        for (size_t i = 0; i < s->shard.size; i++)
            (*out)[i] = (float)singa_conf_num(l->conf, value, 0.0);
    if (strcmp(what, "std") == 0)
        for (size_t i = 0; i < s->shard.size; i++)
            if (!((*out)[i] != 0) || !isfinite((*out)[i]))
                return singa_layer_err(l, err, "%s: value %zu is %g; a standard deviation must be non-zero and finite",
                                       path ? file : value, i, (*out)[i]);
    return 0;
}

/* The batch's shape: the records' own, or store_conf's `shape` when given (same size). */
static int batch_shape(singa_layer *l, int shape[SINGA_MAX_DIMS], int *nd, singa_err *err)
{
    record_state *s = l->state;
    const singa_image_record *r = &s->shard.first;
    const singa_conf *c = singa_conf_get(l->conf, "shape");
    size_t n = c ? (c->kind == SINGA_CONF_LIST ? c->n : 1) : (size_t)r->ndim, count = 1;
    if (n + 1 > SINGA_MAX_DIMS)
        return singa_layer_err(l, err, "records of %zu dimensions: at most %d are supported", n, SINGA_MAX_DIMS - 1);
    for (size_t i = 0; i < n; i++) {
        double d = !c ? r->shape[i] : c->kind == SINGA_CONF_LIST ? c->items[i]->num : c->num;
        if (!(d >= 1 && d <= (1 << 24) && d == floor(d)))
            return singa_layer_err(l, err, "field 'shape': entry %zu is %g, not a positive integer", i + 1, d);
        shape[i + 1] = (int)d;
        count *= (size_t)d;
    }
    if (count != s->shard.size) {
        char key[80];
        return singa_layer_err(l, err, "field 'shape' holds %zu values but the records of '%s' (the first has key '%s') "
                                       "hold %zu", count, s->shard.file.path,
                               singa_kvfile_key(&s->shard.file, 0, key, sizeof key), s->shard.size);
    }
    shape[0] = s->rec.batch;
    *nd = (int)n + 1;
    return 0;
}

static int setup_records(singa_layer *l, bool store, singa_err *err)
{
    record_state *s = l->state;
    const char *path = singa_conf_str(l->conf, "path", NULL);
    if (!path)
        return singa_layer_err(l, err, "field 'path' is required (a %s)",
                               store ? "KVFile, or a folder holding shard.dat" : "DataShard folder holding shard.dat");
    if ((store && check_store(l, err) < 0) || singa_records_conf(&s->rec, l, err) < 0)
        return -1;
    const record_state *first = singa_records_twin(&s->rec, l);
    if (first) {
        s->shard = first->shard;
        s->borrowed = true;
    } else if (singa_shard_load(&s->shard, path, !store, err) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
    s->labels = !store || singa_conf_bool(l->conf, "has_label", true);
    for (size_t i = 0; s->labels && !first && i < s->shard.file.count; i++) {
        singa_image_record r;
        singa_shard_record(&s->shard, i, &r);
        if (singa_records_label(&s->rec, l, (float)r.label, s->shard.file.path, "record", i + 1, err) < 0)
            return -1;
    }
    if (store && (load_norm(l, "mean", &s->mean, err) < 0 || load_norm(l, "std", &s->std, err) < 0))
        return -1;
    if (!(s->row = malloc(s->shard.size * sizeof *s->row)))
        return singa_layer_err(l, err, "out of memory");
    int shape[SINGA_MAX_DIMS], nd = 0;
    if (batch_shape(l, shape, &nd, err) < 0 || singa_layer_shape(l, nd, shape, err) < 0)
        return -1;
    if (s->labels && singa_tensor_init(&l->aux, 1, shape, err) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
    return singa_records_start(&s->rec, l, s->shard.file.count, err);
}

static int setup_shard(singa_layer *l, singa_err *err) { return setup_records(l, false, err); }
static int setup_store(singa_layer *l, singa_err *err) { return setup_records(l, true, err); }

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    record_state *s = l->state;
    size_t n = s->shard.size;
    for (int b = 0; b < s->rec.batch; b++) {
        singa_image_record r;
        singa_shard_record(&s->shard, singa_records_next(&s->rec, l), &r);
        singa_image_record_values(&r, s->row);
        float *y = l->data.data + (size_t)b * n;
        for (size_t k = 0; k < n; k++) {
            float v = s->row[k] - (s->mean ? s->mean[k] : 0.0f);
            y[k] = s->std ? v / s->std[k] : v;
        }
        if (s->labels)
            l->aux.data[b] = (float)r.label;
    }
    return 0;
}

static void destroy(singa_layer *l)
{
    record_state *s = l->state;
    if (!s->borrowed)
        singa_shard_free(&s->shard);
    singa_records_free(&s->rec);
    free(s->mean);
    free(s->std);
    free(s->row);
}

#define RECORD_INPUT(NAME, FIELDS, SETUP)                                                                  \
    {                                                                                                      \
        .name = NAME, .fields = FIELDS, .min_src = 0, .max_src = 0, .flags = SINGA_LAYER_INPUT | SINGA_LAYER_SPLITS, \
        .state_size = sizeof(record_state), .setup = SETUP, .forward = forward, .destroy = destroy,       \
        .get_cursor = singa_records_get_cursor, .set_cursor = singa_records_set_cursor,                                              \
    }

const singa_layer_type singa_shard_data_layer = RECORD_INPUT("kShardData", shard_fields, setup_shard);
const singa_layer_type singa_record_input_layer = RECORD_INPUT("kRecordInput", store_fields, setup_store);
const singa_layer_type singa_store_input_layer = RECORD_INPUT("kStoreInput", store_fields, setup_store);
