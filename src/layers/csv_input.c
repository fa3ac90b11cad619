/* kCSVInput (SINGA's CSVInputLayer): one record per line of a text file, the label in the first
 * column and the features after it, `separator` between columns (SINGA's store_conf fields
 * path, separator, batchsize, shuffle, random_skip and has_label).  The file is parsed once at
 * setup, every row checked (same number of columns, finite numbers, errors naming the file,
 * line and column), and kept as floats; blank lines are skipped.  The cursor is records.c's, as
 * for kIDXData, so checkpoints continue the same sequence. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layers/layers.h"
#include "layers/records.h"

typedef struct csv_state {
    singa_records rec;
    int nfeat;
    bool has_label;
    float *feat, *label; /* count x nfeat, count */
} csv_state;
SINGA_RECORDS_FIRST(csv_state);

static const singa_field fields[] = {
    {"path", SINGA_FIELD_STR},       {"separator", SINGA_FIELD_STR}, {"batchsize", SINGA_FIELD_INT},
    {"shuffle", SINGA_FIELD_BOOL},   {"random_skip", SINGA_FIELD_INT}, {"has_label", SINGA_FIELD_BOOL},
    {NULL, 0},
};

/* Appends value to a growing float array. */
static int push(float **v, size_t *n, size_t *cap, float x)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        float *g = realloc(*v, c * sizeof *g);
        if (!g)
            return -1;
        *v = g;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

/* Parses the text (NUL-terminated, len bytes) into rows of `ncols` numbers; with `labels`, each
 * row's first number is a label, taken with the line it is on. */
static int parse(singa_layer *l, const char *path, char *text, size_t len, char sep, singa_records *labels,
                 float **vals, size_t *rows, int *ncols, singa_err *err)
{
    size_t n = 0, cap = 0, line = 0;
    long first_line = 0;
    *ncols = 0;
    *rows = 0;
    for (char *p = text, *end = text + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *eol = nl ? nl : end;
        line++;
        if (eol > p && eol[-1] == '\r')
            eol[-1] = '\0';
        *eol = '\0';
        char *s = p;
        p = eol + 1;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            continue; /* a blank line */
        int cols = 0;
        for (char *field = s;; cols++) {
            char *stop = strchr(field, sep);
            if (stop)
                *stop = '\0';
            char *num_end;
            float v = strtof(field, &num_end);
            while (*num_end == ' ' || *num_end == '\t')
                num_end++;
            if (num_end == field || *num_end || !isfinite(v)) {
                while (*field == ' ' || *field == '\t')
                    field++;
                free(*vals);
                *vals = NULL;
                if (!*field)
                    return singa_layer_err(l, err, "file '%s' line %zu, column %d: empty field", path, line, cols + 1);
                return singa_layer_err(l, err, "file '%s' line %zu, column %d: '%.40s' is not a finite number", path,
                                       line, cols + 1, field);
            }
            if (labels && cols == 0 && singa_records_label(labels, l, v, path, "line", line, err) < 0) {
                free(*vals);
                *vals = NULL;
                return -1;
            }
            if (push(vals, &n, &cap, v) < 0) {
                free(*vals);
                *vals = NULL;
                return singa_layer_err(l, err, "file '%s': out of memory at line %zu", path, line);
            }
            if (!stop) {
                cols++;
                break;
            }
            field = stop + 1;
        }
        if (*ncols == 0) {
            *ncols = cols;
            first_line = (long)line;
        } else if (cols != *ncols) {
            free(*vals);
            *vals = NULL;
            return singa_layer_err(l, err, "file '%s' line %zu has %d columns but line %ld has %d", path, line, cols,
                                   first_line, *ncols);
        }
        (*rows)++;
    }
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
    if (strlen(sep) != 1 || strchr("0123456789.+-eE", sep[0]))
        return singa_layer_err(l, err, "field 'separator' must be one character that cannot be part of a number, got \"%s\"", sep);
    if (singa_records_conf(&s->rec, l, err) < 0)
        return -1;
    uint8_t *bytes;
    size_t len, rows;
    if (singa_records_read_file(l, path, &bytes, &len, err) < 0)
        return -1;
    char *text = realloc(bytes, len + 1); /* room for the terminating NUL */
    if (!text) {
        free(bytes);
        return singa_layer_err(l, err, "out of memory");
    }
    text[len] = '\0';
    if (memchr(text, '\0', len)) {
        free(text);
        return singa_layer_err(l, err, "file '%s' is not a text file (it holds a NUL byte)", path);
    }
    float *vals = NULL;
    int ncols;
    int rc = parse(l, path, text, len, sep[0], s->has_label ? &s->rec : NULL, &vals, &rows, &ncols, err);
    free(text);
    if (rc < 0)
        return -1;
    if (rows == 0) {
        free(vals);
        return singa_layer_err(l, err, "file '%s' holds no records (it is empty or blank)", path);
    }
    s->nfeat = ncols - (s->has_label ? 1 : 0);
    if (s->nfeat < 1) {
        free(vals);
        return singa_layer_err(l, err, "file '%s' has %d column%s: a label and at least one feature are needed "
                                       "(has_label = false reads features only)", path, ncols, ncols == 1 ? "" : "s");
    }
    /* Split the label column off so a batch of features is a plain copy of rows. */
    if (s->has_label) {
        if (!(s->label = malloc(rows * sizeof *s->label))) {
            free(vals);
            return singa_layer_err(l, err, "out of memory");
        }
        for (size_t r = 0; r < rows; r++) {
            s->label[r] = vals[r * (size_t)ncols];
            memmove(vals + r * (size_t)s->nfeat, vals + r * (size_t)ncols + 1, (size_t)s->nfeat * sizeof *vals);
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

static void get_cursor(const singa_layer *l, int64_t c[SINGA_CURSOR_LEN])
{
    const csv_state *s = l->state;
    singa_records_get_cursor(&s->rec, c);
}

static int set_cursor(singa_layer *l, const int64_t c[SINGA_CURSOR_LEN], singa_err *err)
{
    csv_state *s = l->state;
    return singa_records_set_cursor(&s->rec, l, c, err);
}

const singa_layer_type singa_csv_input_layer = {
    .name = "kCSVInput", .fields = fields, .min_src = 0, .max_src = 0, .flags = SINGA_LAYER_INPUT | SINGA_LAYER_SPLITS,
    .state_size = sizeof(csv_state), .setup = setup, .forward = forward, .destroy = destroy,
    .get_cursor = get_cursor, .set_cursor = set_cursor,
};
