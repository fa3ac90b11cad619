/* kCharRNN: a text file as character sequences for recurrent nets (SINGA's CharRNNInputLayer).
 * Each step gives batchsize rows of unroll_len + 1 character indices: row i reads the text from
 * offset i * len / batchsize onwards, unroll_len characters further each step, wrapping at the
 * end; the extra index is the label of the last position.  The vocabulary is the set of bytes
 * in the text, in byte order, or the bytes of vocab_path when that file exists (when it does
 * not, the vocabulary is written there, so a sampling job reads the same one). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/layers.h"

typedef struct char_rnn_state {
    unsigned char *text;
    size_t len;
    int index[256]; /* byte -> vocabulary index, -1 when absent */
    int vocab, batch, steps;
    int64_t pos; /* characters consumed by each row so far */
} char_rnn_state;

static const singa_field fields[] = {
    {"path", SINGA_FIELD_STR},      {"vocab_path", SINGA_FIELD_STR},
    {"batchsize", SINGA_FIELD_INT}, {NULL, 0},
};

static int read_all(singa_layer *l, const char *field, const char *path, unsigned char **buf,
                    size_t *len, singa_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return singa_layer_err(l, err, "%s '%s': %s", field, path, strerror(errno));
    size_t cap = 1 << 16;
    *len = 0;
    *buf = malloc(cap);
    for (size_t got; *buf && (got = fread(*buf + *len, 1, cap - *len, f)) > 0;) {
        *len += got;
        unsigned char *grown = *len == cap ? realloc(*buf, cap *= 2) : *buf;
        if (!grown)
            free(*buf);
        *buf = grown;
    }
    int bad = ferror(f) || !*buf;
    fclose(f);
    if (bad)
        return singa_layer_err(l, err, "%s '%s': read error or out of memory", field, path);
    return 0;
}

static int vocabulary(singa_layer *l, char_rnn_state *s, singa_err *err)
{
    const char *vpath = singa_conf_str(l->conf, "vocab_path", NULL);
    unsigned char *chars = NULL;
    size_t n = 0;
    memset(s->index, -1, sizeof s->index);
    FILE *probe = vpath ? fopen(vpath, "rb") : NULL;
    if (probe) {
        fclose(probe);
        if (read_all(l, "vocab_path", vpath, &chars, &n, err) < 0)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (s->index[chars[i]] < 0)
                s->index[chars[i]] = s->vocab++;
        free(chars);
        for (size_t i = 0; i < s->len; i++)
            if (s->index[s->text[i]] < 0)
                return singa_layer_err(l, err, "the text has byte 0x%02x at offset %zu, which is not in vocab_path '%s'",
                                       s->text[i], i, vpath);
        return 0;
    }
    bool seen[256] = {false};
    for (size_t i = 0; i < s->len; i++)
        seen[s->text[i]] = true;
    unsigned char order[256];
    for (int c = 0; c < 256; c++)
        if (seen[c]) {
            order[s->vocab] = (unsigned char)c;
            s->index[c] = s->vocab++;
        }
    if (vpath) {
        FILE *f = fopen(vpath, "wb");
        if (!f || fwrite(order, 1, (size_t)s->vocab, f) != (size_t)s->vocab || fclose(f) != 0)
            return singa_layer_err(l, err, "vocab_path '%s': cannot write: %s", vpath, strerror(errno));
    }
    return 0;
}

static int setup(singa_layer *l, singa_err *err)
{
    char_rnn_state *s = l->state;
    const char *path = singa_conf_str(l->conf, "path", NULL);
    s->batch = singa_conf_int(l->conf, "batchsize", 0);
    s->steps = singa_conf_int(l->conf, "unroll_len", 50);
    if (!path)
        return singa_layer_err(l, err, "field 'path' (the text file) is required");
    if (s->batch <= 0 || s->steps <= 0)
        return singa_layer_err(l, err, "fields 'batchsize' and 'unroll_len' must be positive");
    if (read_all(l, "path", path, &s->text, &s->len, err) < 0 || vocabulary(l, s, err) < 0)
        return -1;
    if (s->len < (size_t)s->steps + 1)
        return singa_layer_err(l, err, "path '%s' holds %zu bytes, fewer than unroll_len + 1 = %d", path, s->len, s->steps + 1);
    int shape[2] = {s->batch, s->steps + 1};
    return singa_layer_shape(l, 2, shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    char_rnn_state *s = l->state;
    for (int i = 0; i < s->batch; i++) {
        size_t start = (size_t)i * s->len / (size_t)s->batch + (size_t)s->pos;
        float *row = l->data.data + (size_t)i * (size_t)(s->steps + 1);
        for (int t = 0; t <= s->steps; t++)
            row[t] = (float)s->index[s->text[(start + (size_t)t) % s->len]];
    }
    s->pos = (s->pos + s->steps) % (int64_t)s->len;
    return 0;
}

static void destroy(singa_layer *l)
{
    char_rnn_state *s = l->state;
    free(s->text);
}

static void get_cursor(const singa_layer *l, int64_t c[SINGA_CURSOR_LEN])
{
    const char_rnn_state *s = l->state;
    c[0] = 0;
    c[1] = s->pos;
    c[2] = (int64_t)s->len;
}

static int set_cursor(singa_layer *l, const int64_t c[SINGA_CURSOR_LEN], singa_err *err)
{
    char_rnn_state *s = l->state;
    if (c[2] != (int64_t)s->len || c[1] < 0 || c[1] >= c[2])
        return singa_layer_err(l, err, "text cursor %lld of %lld does not fit a text of %zu bytes",
                               (long long)c[1], (long long)c[2], s->len);
    s->pos = c[1];
    return 0;
}

const singa_layer_type singa_char_rnn_layer = {
    .name = "kCharRNN", .fields = fields, .min_src = 0, .max_src = 0,
    .flags = SINGA_LAYER_INPUT, .state_size = sizeof(char_rnn_state),
    .setup = setup, .forward = forward, .destroy = destroy,
    .get_cursor = get_cursor, .set_cursor = set_cursor,
};
