/* kCSVInput (SINGA's CSVInputLayer): one record per line of a text file, the label in the first
 * column and the features after it, `separator` between columns (SINGA's store_conf fields
 * path, separator, batchsize, shuffle, random_skip and has_label).  The file is parsed once at
 * setup by datafile.c (which singa.read_csv shares), and kept as floats.  The cursor is records.c's, as
 * for kIDXData, so checkpoints continue the same sequence. */
#include <stdlib.h>
#include <string.h>

#include "layers/datafile.h"
#include "layers/layers.h"
#include "layers/records.h"

typedef struct csv_state {
    singa_records rec;
    int nfeat;
    bool has_label;
    float *feat, *label; /* count x nfeat, count */
} csv_state;

static const singa_field fields[] = {
    {"path", SINGA_FIELD_STR},       {"separator", SINGA_FIELD_STR}, {"batchsize", SINGA_FIELD_INT},
    {"shuffle", SINGA_FIELD_BOOL},   {"random_skip", SINGA_FIELD_INT}, {"has_label", SINGA_FIELD_BOOL},
    {NULL, 0},
};

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
    if (singa_records_conf(&s->rec, l, err) < 0)
        return -1;
    float *vals;
    size_t rows, *lines;
    int ncols;
    if (singa_csv_read(path, sep[0], 0, &vals, &rows, &ncols, s->has_label ? &lines : NULL, err) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
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
    int shape[2] = {s->rec.batch, s->nfeat};
    if (singa_layer_shape(l, 2, shape, err) < 0)
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
    free(s->feat);
    free(s->label);
    singa_records_free(&s->rec);
}

const singa_layer_type singa_csv_input_layer = {
    .name = "kCSVInput", .fields = fields, .min_src = 0, .max_src = 0, .flags = SINGA_LAYER_INPUT | SINGA_LAYER_SPLITS,
    .state_size = sizeof(csv_state), .setup = setup, .forward = forward, .destroy = destroy,
    .get_cursor = singa_records_get_cursor, .set_cursor = singa_records_set_cursor,
};
