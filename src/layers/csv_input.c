/* kCSVInput (SINGA's CSVInputLayer): one record per line of a text file, the label in the first
 * column and the features after it, `separator` between columns (SINGA's store_conf fields
 * backend "textfile", path, separator, batchsize, shape, shuffle, random_skip, has_label,
 * mean_value and std_value, prefetching).  The file is parsed once at setup by datafile.c (which
 * singa.read_csv shares), and kept as floats, normalised as (x - mean) / std when asked (SINGA's
 * SingleLabelRecordLayer).  The cursor is records.c's, as for kIDXData, so checkpoints continue
 * the same sequence. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layers/ctx.h"
#include "layers/datafile.h"
#include "layers/layers.h"
#include "layers/records.h"

typedef struct csv_state {
    singa_records rec;
    int nfeat;
    bool has_label;
    float *feat, *label; /* count x nfeat, count */
    bool borrowed;       /* feat and label are a pipeline's first copy's (records.h) */
} csv_state;

static const singa_field fields[] = {
    {"path", SINGA_FIELD_STR},       {"separator", SINGA_FIELD_STR}, {"batchsize", SINGA_FIELD_INT},
    {"shuffle", SINGA_FIELD_BOOL},   {"random_skip", SINGA_FIELD_INT}, {"has_label", SINGA_FIELD_BOOL},
    {"backend", SINGA_FIELD_STR},    {"shape", SINGA_FIELD_NUMS},      {"mean_value", SINGA_FIELD_NUM},
    {"std_value", SINGA_FIELD_NUM},  {"prefetching", SINGA_FIELD_BOOL}, {"encoded", SINGA_FIELD_BOOL},
    {"mean_file", SINGA_FIELD_STR},  {"std_file", SINGA_FIELD_STR},     {NULL, 0},
};

/* SINGA's StoreProto fields a text file cannot use, refused with what to do instead. */
static int check_store(singa_layer *l, singa_err *err)
{
    const char *backend = singa_conf_str(l->conf, "backend", "textfile");
    if (strcmp(backend, "textfile") != 0)
        return singa_layer_err(l, err, "backend \"%s\": kCSVInput reads text (\"textfile\"); for a KVFile use "
                                       "kRecordInput", backend);
    if (singa_conf_bool(l->conf, "encoded", false))
        return singa_layer_err(l, err, "encoded = true (JPEG-compressed records) is not for CSV text: remove it");
    if (singa_conf_get(l->conf, "mean_file") || singa_conf_get(l->conf, "std_file"))
        return singa_layer_err(l, err, "field '%s' is not supported for CSV text: give mean_value / std_value, or "
                                       "normalise the file", singa_conf_get(l->conf, "mean_file") ? "mean_file" : "std_file");
    double sd = singa_conf_num(l->conf, "std_value", 1.0);
    if (!(sd != 0) || !isfinite(sd))
        return singa_layer_err(l, err, "field 'std_value' is %g; a standard deviation must be non-zero and finite", sd);
    return 0;
}

/* The batch's shape: batchsize x store_conf's `shape` when given (as many values as a line's
 * features), else batchsize x the features. */
static int batch_shape(singa_layer *l, int shape[SINGA_MAX_DIMS], int *nd, singa_err *err)
{
    const csv_state *s = l->state;
    const singa_conf *c = singa_conf_get(l->conf, "shape");
    size_t n = !c ? 1 : c->kind == SINGA_CONF_LIST ? c->n : 1;
    long count = 1;
    if (n + 1 > SINGA_MAX_DIMS)
        return singa_layer_err(l, err, "field 'shape' has %zu dimensions: at most %d are supported", n, SINGA_MAX_DIMS - 1);
    for (size_t i = 0; i < n; i++) {
        double d = !c ? s->nfeat : c->kind == SINGA_CONF_LIST ? c->items[i]->num : c->num;
        if (!(d >= 1 && d <= (1 << 24) && d == floor(d)))
            return singa_layer_err(l, err, "field 'shape': entry %zu is %g, not a positive integer", i + 1, d);
        shape[i + 1] = (int)d;
        count *= (long)d;
    }
    if (count != s->nfeat)
        return singa_layer_err(l, err, "field 'shape' holds %ld values but the lines of '%s' have %d features",
                               count, singa_conf_str(l->conf, "path", ""), s->nfeat);
    shape[0] = s->rec.batch;
    *nd = (int)n + 1;
    return 0;
}

/* (x - mean_value) / std_value for every feature, once. */
static void normalise(singa_layer *l, size_t rows)
{
    csv_state *s = l->state;
    float mean = (float)singa_conf_num(l->conf, "mean_value", 0.0), sd = (float)singa_conf_num(l->conf, "std_value", 1.0);
    if (mean == 0.0f && sd == 1.0f)
        return;
    for (size_t i = 0; i < rows * (size_t)s->nfeat; i++)
        s->feat[i] = (s->feat[i] - mean) / sd;
}

/* The file parsed, its labels split off and its features normalised; *rows records (the first
 * only in a net built for its shapes). */
static int load(singa_layer *l, const char *path, const char *sep, size_t *nrows, singa_err *err)
{
    csv_state *s = l->state;
    float *vals;
    size_t rows, *lines;
    int ncols;
    size_t **want = s->has_label ? &lines : NULL;
    if ((l->ctx->shapes_only ? singa_csv_read_first(path, sep[0], &vals, &ncols, want, err)
                             : singa_csv_read(path, sep[0], 0, &vals, &rows, &ncols, want, err)) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
    rows = l->ctx->shapes_only ? 1 : rows; /* a net for its shapes needs no more */
    s->nfeat = ncols - (s->has_label ? 1 : 0);
    if (s->nfeat < 1) {
        free(vals);
        if (s->has_label)
            free(lines);
        return singa_layer_err(l, err, "file '%s' has %d column%s: a label and at least one feature are needed "
                                       "(has_label = false reads features only)", path, ncols, ncols == 1 ? "" : "s");
    }
    /* Split the label column off so a batch of features is a plain copy of rows. */
    if (s->has_label) {
        int rc = (s->label = malloc(rows * sizeof *s->label)) ? 0 : singa_layer_err(l, err, "out of memory");
        for (size_t r = 0; rc == 0 && r < rows; r++) {
            s->label[r] = vals[r * (size_t)ncols];
            rc = singa_records_label(&s->rec, l, s->label[r], path, "line", lines[r], err);
            memmove(vals + r * (size_t)s->nfeat, vals + r * (size_t)ncols + 1, (size_t)s->nfeat * sizeof *vals);
        }
        free(lines);
        if (rc < 0) {
            free(vals);
            return -1;
        }
    }
    s->feat = vals;
    normalise(l, rows);
    *nrows = rows;
    return 0;
}

static int setup(singa_layer *l, singa_err *err)
{
    csv_state *s = l->state;
    const char *path = singa_conf_str(l->conf, "path", NULL);
    const char *sep = singa_conf_str(l->conf, "separator", ",");
    s->has_label = singa_conf_bool(l->conf, "has_label", true);
    if (!path)
        return singa_layer_err(l, err, "field 'path' is required");
    if (singa_csv_check_sep(sep, err) < 0)
        return singa_layer_err(l, err, "field %s", err->msg);
    if (check_store(l, err) < 0 || singa_records_conf(&s->rec, l, err) < 0)
        return -1;
    const csv_state *first = singa_records_twin(&s->rec, l);
    size_t rows = first ? first->rec.count : 0;
    if (first) {
        s->nfeat = first->nfeat;
        s->feat = first->feat;
        s->label = first->label;
        s->borrowed = true;
    } else if (load(l, path, sep, &rows, err) < 0)
        return -1;
    int shape[SINGA_MAX_DIMS], nd = 0;
    if (batch_shape(l, shape, &nd, err) < 0 || singa_layer_shape(l, nd, shape, err) < 0)
        return -1;
    if (s->has_label && singa_tensor_init(&l->aux, 1, shape, err) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
    return singa_records_start(&s->rec, l, rows, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    csv_state *s = l->state;
    size_t f = (size_t)s->nfeat;
    for (int b = 0; b < s->rec.batch; b++) {
        size_t i = singa_records_next(&s->rec, l);
        memcpy(l->data.data + (size_t)b * f, s->feat + i * f, f * sizeof(float));
        if (s->label)
            l->aux.data[b] = s->label[i];
    }
    return 0;
}

static void destroy(singa_layer *l)
{
    csv_state *s = l->state;
    if (!s->borrowed) {
        free(s->feat);
        free(s->label);
    }
    singa_records_free(&s->rec);
}

const singa_layer_type singa_csv_input_layer = {
    .name = "kCSVInput", .fields = fields, .min_src = 0, .max_src = 0, .flags = SINGA_LAYER_INPUT | SINGA_LAYER_SPLITS,
    .state_size = sizeof(csv_state), .setup = setup, .forward = forward, .destroy = destroy,
    .get_cursor = singa_records_get_cursor, .set_cursor = singa_records_set_cursor,
};
