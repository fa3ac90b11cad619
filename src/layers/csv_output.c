/* kCSVOutput (SINGA's CSVOutputLayer): in the validation and test phases, one line per instance
 * to the file `path`: each source's row in turn, an input layer's (which has labels) as its label
 * then its features, as SINGA wrote them, so kCSVInput -> kCSVOutput writes back what it read.
 * Values are printed with 9 significant digits, which read back as the same floats.
 *
 * The file is created or truncated when the job builds its nets (every phase's copy opens it, all
 * before anything is written) and opened for appending, so a validation and a test net writing
 * the same file add their batches in the order they run.  Each batch is flushed as a whole, so
 * a reader (or a crash) sees whole lines up to the last finished batch.  A resumed job starts
 * the file afresh.  In the training phase the layer writes nothing. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "layers/layers.h"

typedef struct csv_out_state {
    FILE *f;
    const char *path;
    char sep;
} csv_out_state;

static const singa_field fields[] = {
    {"path", SINGA_FIELD_STR}, {"separator", SINGA_FIELD_STR}, {NULL, 0},
};

static bool has_labels(const singa_layer *src)
{
    return src->aux.data && singa_tensor_rows(&src->aux) == singa_tensor_rows(&src->data);
}

static int setup(singa_layer *l, singa_err *err)
{
    csv_out_state *s = l->state;
    const char *sep = singa_conf_str(l->conf, "separator", ",");
    s->path = singa_conf_str(l->conf, "path", NULL);
    if (!s->path || !*s->path)
        return singa_layer_err(l, err, "field 'path' is required");
    if (strlen(sep) != 1 || strchr("0123456789.+-eE", sep[0]))
        return singa_layer_err(l, err, "field 'separator' must be one character that cannot be part of a number, got \"%s\"", sep);
    s->sep = sep[0];
    if (singa_layer_count_dsts(l) > 0)
        return singa_layer_err(l, err, "writes a file and has no output: no layer may list it in 'srclayer'");
    int rows = singa_tensor_rows(&l->src[0]->data);
    for (int k = 1; k < l->nsrc; k++)
        if (singa_tensor_rows(&l->src[k]->data) != rows)
            return singa_layer_err(l, err, "source '%s' has %d instances but '%s' has %d", l->src[k]->name,
                                   singa_tensor_rows(&l->src[k]->data), l->src[0]->name, rows);
    int fd = open(s->path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
    if (fd < 0 || !(s->f = fdopen(fd, "a"))) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return singa_layer_err(l, err, "cannot write file '%s': %s", s->path, strerror(e));
    }
    return 0;
}

static void put(csv_out_state *s, bool *first, float v)
{
    if (!*first)
        fputc(s->sep, s->f);
    fprintf(s->f, "%.9g", v);
    *first = false;
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    csv_out_state *s = l->state;
    if (phase == SINGA_PHASE_TRAIN)
        return 0;
    int rows = singa_tensor_rows(&l->src[0]->data);
    for (int r = 0; r < rows; r++) {
        bool first = true;
        for (int k = 0; k < l->nsrc; k++) {
            const singa_layer *src = l->src[k];
            const singa_tensor *x = &src->data;
            const float *row = x->data + (size_t)r * (size_t)x->ld;
            if (has_labels(src))
                put(s, &first, src->aux.data[r]);
            for (int c = 0; c < singa_tensor_cols(x); c++)
                put(s, &first, row[c]);
        }
        fputc('\n', s->f);
    }
    if (fflush(s->f) != 0 || ferror(s->f))
        return singa_layer_err(l, err, "writing file '%s': %s", s->path, strerror(errno));
    return 0;
}

static void destroy(singa_layer *l)
{
    csv_out_state *s = l->state;
    if (s->f)
        fclose(s->f);
}

const singa_layer_type singa_csv_output_layer = {
    .name = "kCSVOutput", .flags = SINGA_LAYER_WHOLE_BATCH, .fields = fields, .min_src = 1, .max_src = -1,
    .state_size = sizeof(csv_out_state), .setup = setup, .forward = forward, .destroy = destroy,
};
