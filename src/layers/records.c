/* What the input layers that keep a whole data set in memory share: which record comes next.
 * A layer knows only how many records it holds; this walks them in order or, with `shuffle`, in a
 * fresh permutation per epoch drawn from (seed, layer name, epoch), so the cursor (epoch,
 * position) is all a checkpoint needs to continue the same sequence.  `random_skip` starts at a
 * record drawn uniformly from [0, random_skip] (from the seed, so runs repeat).  Reading wraps at
 * the end of the set. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/ctx.h"
#include "layers/datafile.h"
#include "layers/layers.h"
#include "layers/records.h"
#include "singa/net.h"

int singa_records_label(singa_records *r, singa_layer *l, float v, const char *file, const char *unit, size_t n,
                        singa_err *err)
{
    if (!(v >= 0 && v == floorf(v))) /* NaN fails too */
        return singa_layer_err(l, err, "file '%s' %s %zu: label %g is not a class index (a whole number >= 0)", file,
                               unit, n, v);
    if (!r->labelled || v > r->label_max) {
        r->labelled = true;
        r->label_max = v;
        r->label_file = file;
        r->label_unit = unit;
        r->label_n = n;
    }
    return 0;
}

const singa_records *singa_records_of(const singa_layer *l)
{
    bool user = l->type == &singa_idx_data_layer || l->type == &singa_csv_input_layer ||
                l->type == &singa_rgb_image_layer || l->type == &singa_shard_data_layer ||
                l->type == &singa_record_input_layer || l->type == &singa_store_input_layer;
    return user ? l->state : NULL;
}

const char *singa_records_label_where(const singa_records *r, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s %zu of file '%s'", r->label_unit, r->label_n, r->label_file);
    return buf;
}

int singa_records_conf(singa_records *r, singa_layer *l, singa_err *err)
{
    const singa_conf *bs = singa_conf_get(l->conf, "batchsize");
    if (bs && bs->kind == SINGA_CONF_LIST) { /* kRecordInput: v0.3's repeated store_conf.batchsize */
        if (bs->n != 1)
            return singa_layer_err(l, err, "field 'batchsize' lists %zu sizes (SINGA's batch size per worker); give one: "
                                           "the workers of a group split it evenly", bs->n);
        bs = bs->items[0];
    }
    r->batch = bs && bs->kind == SINGA_CONF_NUM && bs->num == floor(bs->num) && fabs(bs->num) < 1e9 ? (int)bs->num : 0;
    r->shuffle = singa_conf_bool(l->conf, "shuffle", false);
    r->skip = singa_conf_int(l->conf, "random_skip", 0);
    if (r->batch <= 0)
        return singa_layer_err(l, err, "field 'batchsize' must be a positive integer");
    if (r->skip < 0)
        return singa_layer_err(l, err, "field 'random_skip' must not be negative, got %d", r->skip);
    /* The net's share of the batch (a worker's), and of that this layer's part on the batch. */
    const singa_net_split *sp = &l->ctx->split;
    int parts = l->part.dim == 0 && l->part.count > 1 ? l->part.count : 1;
    int count = sp->count * parts, index = sp->index * parts + (parts > 1 ? l->part.index : 0);
    if (r->batch % count != 0)
        return singa_layer_err(l, err, "batchsize %d does not split evenly over the %d workers of a group",
                               r->batch, count);
    int part = r->batch / count;
    r->before = index * part;
    r->after = r->batch - r->before - part;
    r->batch = part;
    return 0;
}

const void *singa_records_twin(singa_records *r, const singa_layer *l)
{
    const singa_layer *t = l->ctx->twin ? l->ctx->twin(l) : NULL;
    if (!t || t->type != l->type || !t->state)
        return NULL;
    const singa_records *from = t->state;
    r->labelled = from->labelled;
    r->label_max = from->label_max;
    r->label_file = from->label_file;
    r->label_unit = from->label_unit;
    r->label_n = from->label_n;
    return t->state;
}

static void make_perm(singa_records *r, const singa_layer *l)
{
    size_t n = r->count;
    for (size_t i = 0; i < n; i++)
        r->perm[i] = (uint32_t)i;
    singa_rng g;
    singa_rng_seed(&g, l->ctx->seed, singa_hash_str(singa_conf_str(l->conf, "name", l->name)) + (uint64_t)r->epoch);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = singa_rng_below(&g, i + 1);
        uint32_t t = r->perm[i];
        r->perm[i] = r->perm[j];
        r->perm[j] = t;
    }
}

int singa_records_start(singa_records *r, singa_layer *l, size_t count, singa_err *err)
{
    if (count == 0)
        return singa_layer_err(l, err, "the data set holds no records");
    if (count > UINT32_MAX)
        return singa_layer_err(l, err, "the data set holds %zu records, more than %u", count, UINT32_MAX);
    r->count = count;
    r->epoch = r->pos = 0;
    if (r->shuffle) {
        if (!(r->perm = malloc(count * sizeof *r->perm)))
            return singa_layer_err(l, err, "out of memory");
        make_perm(r, l);
    }
    int64_t start = 0;
    if (r->skip > 0) {
        singa_rng g;
        singa_rng_seed(&g, l->ctx->seed, singa_hash_str(singa_conf_str(l->conf, "name", l->name)) ^ 0x5eedull);
        start = (int64_t)singa_rng_below(&g, (uint64_t)r->skip + 1);
    }
    const singa_net_split *sp = &l->ctx->split;
    start += (int64_t)(count / (size_t)sp->ngroups) * sp->group;
    r->pos = (int64_t)((uint64_t)start % count);
    return 0;
}

static size_t advance(singa_records *r, const singa_layer *l)
{
    size_t i = r->perm ? r->perm[r->pos] : (size_t)r->pos;
    if ((size_t)++r->pos == r->count) {
        r->pos = 0;
        r->epoch++;
        if (r->perm)
            make_perm(r, l);
    }
    return i;
}

size_t singa_records_next(singa_records *r, const singa_layer *l)
{
    if (r->in_batch == 0)
        for (int k = 0; k < r->before; k++)
            advance(r, l);
    size_t i = advance(r, l);
    if (++r->in_batch == r->batch) {
        for (int k = 0; k < r->after; k++)
            advance(r, l);
        r->in_batch = 0;
    }
    return i;
}

/* Back one whole batch (every worker's rows), between batches. */
static void rewind_batch(singa_records *r, const singa_layer *l)
{
    int64_t back = r->before + r->batch + r->after, epoch = r->epoch;
    r->pos -= back;
    while (r->pos < 0) {
        r->pos += (int64_t)r->count;
        r->epoch--;
    }
    if (r->perm && r->epoch != epoch)
        make_perm(r, l);
}

int singa_records_share(singa_layer *l, int share)
{
    singa_records *r = singa_records_of(l) ? l->state : NULL;
    if (!r || r->in_batch != 0 || share < 0 || share >= l->ctx->split.count)
        return -1;
    int own = l->ctx->split.index;
    int parts = l->part.dim == 0 && l->part.count > 1 ? l->part.count : 1;
    int total = r->before + r->batch + r->after;
    if (share != own)
        rewind_batch(r, l);
    r->before = (share * parts + (parts > 1 ? l->part.index : 0)) * r->batch;
    r->after = total - r->before - r->batch;
    return 0;
}

void singa_records_free(singa_records *r)
{
    free(r->perm);
    r->perm = NULL;
}

void singa_records_get_cursor(const singa_layer *l, int64_t c[SINGA_CURSOR_LEN])
{
    const singa_records *r = l->state;
    c[0] = r->epoch;
    c[1] = r->pos;
    c[2] = (int64_t)r->count;
}

int singa_records_set_cursor(singa_layer *l, const int64_t c[SINGA_CURSOR_LEN], singa_err *err)
{
    singa_records *r = l->state;
    if (c[2] != (int64_t)r->count || c[1] < 0 || c[1] >= c[2] || c[0] < 0)
        return singa_layer_err(l, err, "data cursor (epoch %lld, record %lld of %lld) does not fit a data set of %zu records",
                               (long long)c[0], (long long)c[1], (long long)c[2], r->count);
    r->epoch = c[0];
    r->pos = c[1];
    if (r->perm)
        make_perm(r, l);
    return 0;
}

int singa_records_read_file(singa_layer *l, const char *path, uint8_t **out, size_t *len, singa_err *err)
{
    return singa_file_read(path, out, len, err) < 0 ? singa_layer_err(l, err, "%s", err->msg) : 0;
}
