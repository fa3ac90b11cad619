/* Reading a checkpoint of any topology into one model (see include/singa/ckpt_set.h).
 *
 * A distributed step is whole when every server of every server group wrote its shard and
 * every worker group's worker 0 its state (a cut group's other workers write only when they
 * live in another process, which the files cannot tell), but the groups its files record as lost
 * (an asynchronous job that went on without them; never server group 0), every file verifies
 * and says the same step and topology.  Server group 0's slices make the model: they are sorted by offset and must
 * tile each param with neither gap nor overlap; the param's shape is its "shape/<name>" entry. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "singa/ckpt_set.h"

void singa_ckpt_set_free(singa_ckpt_set *s)
{
    singa_ckpt_free(&s->model, 1);
    for (size_t i = 0; i < s->nworkers; i++)
        singa_ckpt_free(&s->workers[i].state, 1);
    for (size_t i = 0; i < s->nslices; i++)
        free(s->slices[i].param);
    free(s->workers);
    free(s->slices);
    free(s->lost);
    free(s->files);
    memset(s, 0, sizeof *s);
}

void singa_ckpt_topology_describe(const int64_t *t, char *buf, size_t len)
{
    if (!t[0]) {
        snprintf(buf, len, "plain (one worker, one server)");
        return;
    }
    snprintf(buf, len, "%lld worker group%s of %lld worker%s and %lld server group%s of %lld server%s (%lld values in "
             "%lld slices)", (long long)t[1], t[1] == 1 ? "" : "s", (long long)t[2], t[2] == 1 ? "" : "s",
             (long long)t[3], t[3] == 1 ? "" : "s", (long long)t[4], t[4] == 1 ? "" : "s", (long long)t[6],
             (long long)t[5]);
}

/* Moves entry e (its name and data) to the end of c. */
static int move_entry(singa_ckpt *c, singa_ckpt_entry *e, singa_err *err)
{
    int dims[4];
    for (int d = 0; d < e->ndim; d++)
        dims[d] = (int)e->dims[d];
    if (singa_ckpt_add(c, e->name, e->dtype, e->ndim, dims, e->data, err) < 0)
        return -1;
    free(e->name);
    e->name = NULL;
    e->data = NULL;
    return 0;
}

static bool is_model_entry(const char *name)
{
    return strncmp(name, "param/", 6) == 0 || strncmp(name, "updater/", 8) == 0 || strncmp(name, "outer/", 6) == 0;
}

static int add_file(singa_ckpt_set *s, const char *path, int kind, int group, int id, singa_err *err)
{
    singa_ckpt_set_file *f = realloc(s->files, (s->nfiles + 1) * sizeof *f);
    if (!f)
        return singa_err_set(err, "out of memory");
    s->files = f;
    f += s->nfiles++;
    snprintf(f->path, sizeof f->path, "%s", path);
    f->kind = kind;
    f->group = group;
    f->id = id;
    return 0;
}

static singa_ckpt_set_worker *add_worker(singa_ckpt_set *s, int group, int id, singa_err *err)
{
    singa_ckpt_set_worker *w = realloc(s->workers, (s->nworkers + 1) * sizeof *w);
    if (!w) {
        singa_err_set(err, "out of memory");
        return NULL;
    }
    s->workers = w;
    w += s->nworkers++;
    w->group = group;
    w->id = id;
    singa_ckpt_init(&w->state, s->step);
    return w;
}

/* A plain checkpoint file: its params and updater slots are the model, the rest worker 0.0's. */
static int read_plain(singa_ckpt_set *s, const char *path, singa_err *err)
{
    singa_ckpt ck;
    if (singa_ckpt_read(&ck, path, err) < 0)
        return -1;
    snprintf(s->where, sizeof s->where, "%s", path);
    s->step = ck.step;
    singa_ckpt_init(&s->model, ck.step);
    int rc = add_file(s, path, SINGA_CKPT_LOCAL, 0, 0, err);
    singa_ckpt_set_worker *w = rc == 0 ? add_worker(s, 0, 0, err) : NULL;
    if (!w)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < ck.n; i++) {
        if (strcmp(ck.entries[i].name, "topology") == 0)
            rc = singa_err_set(err, "checkpoint '%s' is a file of a distributed checkpoint renamed as a plain one", path);
        else
            rc = move_entry(is_model_entry(ck.entries[i].name) ? &s->model : &w->state, &ck.entries[i], err);
    }
    singa_ckpt_free(&ck, 1);
    return rc;
}

/* ---- a distributed step ---- */

typedef struct piece {
    char *param;   /* its param's name */
    const char *sname; /* its name in the shard ("<param>" or "<param>@<offset>") */
    size_t file;   /* index in the shards read */
    int64_t where[4];
} piece;

static int cmp_piece(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    int c = strcmp(x->param, y->param);
    return c ? c : x->where[1] < y->where[1] ? -1 : x->where[1] > y->where[1];
}

/* Checks a file of step `step` read from `path`: its header's step, its topology (the first
 * file's, copied to s) and whose it is. */
static int check_part(singa_ckpt_set *s, const singa_ckpt *ck, const singa_ckpt_file *f, const char *path, bool first,
                      singa_err *err)
{
    const singa_ckpt_entry *t = singa_ckpt_find(ck, "topology");
    const singa_ckpt_entry *who = singa_ckpt_find(ck, f->kind == SINGA_CKPT_SERVER ? "shard" : "worker");
    if (ck->step != f->step)
        return singa_err_set(err, "checkpoint '%s' holds step %llu, not %llu (a file of another step)", path,
                             (unsigned long long)ck->step, (unsigned long long)f->step);
    if (!t || t->dtype != SINGA_CKPT_I64 || t->ndim != 1 || t->dims[0] != SINGA_CKPT_TOPOLOGY_LEN ||
        ((const int64_t *)t->data)[0] == 0)
        return singa_err_set(err, "checkpoint '%s': no topology (not a file of a distributed checkpoint)", path);
    if (first)
        memcpy(s->topology, t->data, sizeof s->topology);
    else if (memcmp(t->data, s->topology, sizeof s->topology) != 0) {
        char a[200], b[200];
        singa_ckpt_topology_describe(t->data, a, sizeof a);
        singa_ckpt_topology_describe(s->topology, b, sizeof b);
        return singa_err_set(err, "checkpoint '%s' was written by another topology (%s) than '%s' (%s): files of two "
                                  "runs are mixed", path, a, s->files[0].path, b);
    }
    const int64_t *id = who ? who->data : NULL;
    if (!who || who->dtype != SINGA_CKPT_I64 || who->ndim != 1 || who->dims[0] != 2 || id[0] != f->group ||
        id[1] != f->id)
        return singa_err_set(err, "checkpoint '%s': it does not say it is the file of %s %d.%d", path,
                             f->kind == SINGA_CKPT_SERVER ? "server" : "worker", f->group, f->id);
    return 0;
}

/* Whether files[0, n) hold the file (kind, group, id). */
static bool has_file(const singa_ckpt_file *files, size_t n, int kind, int group, int id)
{
    for (size_t i = 0; i < n; i++)
        if (files[i].kind == kind && files[i].group == group && files[i].id == id)
            return true;
    return false;
}

/* Whether files[0, n) hold a file of some worker of group g: a group that shrank (cluster.replicas)
 * writes the files of the workers left, which need not be worker 0 (its process lost). */
static bool has_worker(const singa_ckpt_file *files, size_t n, int g)
{
    for (size_t i = 0; i < n; i++)
        if (files[i].kind == SINGA_CKPT_WORKER && files[i].group == g)
            return true;
    return false;
}

/* A file's "lost": per worker group, then per server group, 1 where its writer knew the group's
 * process lost, so the step deliberately lacks that group's files; s->lost gathers every file's. */
static int note_lost(singa_ckpt_set *s, const singa_ckpt *ck, const char *path, singa_err *err)
{
    const singa_ckpt_entry *e = singa_ckpt_find(ck, "lost");
    int64_t n = s->topology[1] + s->topology[3];
    if (!e)
        return 0;
    if (e->dtype != SINGA_CKPT_I64 || e->ndim != 1 || (int64_t)e->dims[0] != n)
        return singa_err_set(err, "checkpoint '%s': tensor 'lost' is not one flag per worker and server group", path);
    if (!s->lost && !(s->lost = calloc((size_t)n, 1)))
        return singa_err_set(err, "out of memory");
    for (int64_t g = 0; g < n; g++)
        s->lost[g] |= ((const int64_t *)e->data)[g] != 0;
    return 0;
}

static bool lost_group(const singa_ckpt_set *s, int kind, int64_t g)
{
    /* server group 0's shards make the model: never excused */
    return s->lost && (kind ? s->lost[g] : g > 0 && s->lost[s->topology[1] + g]);
}

/* Whether files[0, n) make a whole step: every server's, and every worker's that writes one
 * ("files" says how many: a cut group's workers in one process write one; older steps do not say,
 * and then worker 0 of every group must be there), but those of the groups lost when it was
 * written (a group other than server group 0: the others' shards are copies).  Else -2. */
static int check_whole(const singa_ckpt_set *s, const char *dir, const singa_ckpt_file *files, size_t n,
                       int64_t nfiles, singa_err *err)
{
    const int64_t *t = s->topology;
    int64_t every = t[3] * t[4] + t[1] * t[2], want = nfiles >= 0 ? nfiles : 0;
    for (int64_t g = 0; g < t[1] || g < t[3]; g++)
        every -= (g < t[1] && lost_group(s, 1, g) ? t[2] : 0) + (g < t[3] && lost_group(s, 0, g) ? t[4] : 0);
    for (int kind = 0; kind < 2; kind++) {
        int64_t ngroups = kind ? t[1] : t[3], per = kind ? (want == every ? t[2] : 1) : t[4];
        for (int g = 0; g < ngroups; g++)
            for (int j = 0; j < per && !lost_group(s, kind, g); j++)
                if (!has_file(files, n, kind ? SINGA_CKPT_WORKER : SINGA_CKPT_SERVER, g, j) &&
                    !(kind && per == 1 && nfiles >= 0 && has_worker(files, n, g))) {
                    char path[4096];
                    singa_ckpt_part_path(path, sizeof path, dir, files[0].step,
                                         kind ? SINGA_CKPT_WORKER : SINGA_CKPT_SERVER, g, j);
                    singa_err_set(err, "checkpoint step %llu is incomplete: '%s' is missing (%s %d.%d did not write it: "
                                       "the job ended, or its process was lost, first)", (unsigned long long)files[0].step,
                                  path, kind ? "worker" : "server", g, j);
                    return -2;
                }
    }
    if ((int64_t)n < want) {
        singa_err_set(err, "checkpoint step %llu is incomplete: %zu of its %lld files are there (the job ended, or a "
                           "process was lost, while it was written)", (unsigned long long)files[0].step, n,
                      (long long)want);
        return -2;
    }
    return 0;
}

/* Whether the slices pc[i, j) of one param tile it from element 0; *end: its size. */
static int check_tiling(const singa_ckpt_set *s, const piece *pc, size_t i, size_t j, uint64_t *end, singa_err *err)
{
    *end = 0;
    for (size_t k = i; k < j; k++) {
        uint64_t off = (uint64_t)pc[k].where[1], len = (uint64_t)pc[k].where[2];
        if (off != *end)
            return singa_err_set(err, "checkpoint '%s': param '%s': elements %llu..%llu are %s ('%s')", s->where,
                                 pc[i].param, (unsigned long long)(off < *end ? off : *end),
                                 (unsigned long long)(off < *end ? *end : off) - 1,
                                 off < *end ? "in two slices" : "in no slice", s->files[pc[k].file].path);
        *end = off + len;
    }
    return 0;
}

/* A param's shape: "shape/<name>" in the shard (older ones lack it: then flat, `end` values). */
static int param_shape(const singa_ckpt_set *s, const singa_ckpt *shard, const char *param, uint64_t end, int *dims,
                       int *ndim, singa_err *err)
{
    char name[600];
    snprintf(name, sizeof name, "shape/%s", param);
    const singa_ckpt_entry *sh = singa_ckpt_find(shard, name);
    dims[0] = (int)end;
    *ndim = 1;
    if (!sh || sh->dtype != SINGA_CKPT_I64 || sh->ndim != 1 || sh->dims[0] < 1 || sh->dims[0] > 4)
        return 0;
    uint64_t size = 1;
    *ndim = (int)sh->dims[0];
    for (int d = 0; d < *ndim; d++)
        size *= (uint64_t)(dims[d] = (int)((const int64_t *)sh->data)[d]);
    if (size != end)
        return singa_err_set(err, "checkpoint '%s': param '%s' has a shape of %llu values but slices of %llu", s->where,
                             param, (unsigned long long)size, (unsigned long long)end);
    return 0;
}

/* One whole entry of the model, "param/<name>" (slot NULL) or "<kind>/<name>/<slot>" (kind
 * "updater", or "outer": cluster.outer's), from the slices pc[i, j) of the param, each of which
 * must hold it. */
static int assemble_entry(singa_ckpt_set *s, const singa_ckpt *shards, const piece *pc, size_t i, size_t j,
                          const char *kind, const char *slot, int ndim, const int *dims, uint64_t end, singa_err *err)
{
    char name[600], whole[600];
    if (slot)
        snprintf(whole, sizeof whole, "%s/%s/%s", kind, pc[i].param, slot);
    else
        snprintf(whole, sizeof whole, "param/%s", pc[i].param);
    float *data = malloc(end * sizeof *data + 1);
    if (!data || singa_ckpt_add(&s->model, whole, SINGA_CKPT_F32, ndim, dims, data, err) < 0) {
        free(data);
        return singa_err_set(err, "out of memory");
    }
    for (size_t k = i; k < j; k++) {
        if (slot)
            snprintf(name, sizeof name, "%s/%s/%s", kind, pc[k].sname, slot);
        else
            snprintf(name, sizeof name, "param/%s", pc[k].sname);
        const singa_ckpt_entry *v = singa_ckpt_find(&shards[pc[k].file], name);
        if (!v || v->dtype != SINGA_CKPT_F32 || v->bytes != (size_t)pc[k].where[2] * sizeof(float))
            return singa_err_set(err, "checkpoint '%s': tensor '%s' is missing or not of its slice's %lld values",
                                 s->files[pc[k].file].path, name, (long long)pc[k].where[2]);
        memcpy(data + pc[k].where[1], v->data, v->bytes);
    }
    return 0;
}

/* The param of slices pc[i, j): every updater (and cluster.outer) slot the first slice has, then
 * its values. */
static int assemble_param(singa_ckpt_set *s, const singa_ckpt *shards, const piece *pc, size_t i, size_t j,
                          singa_err *err)
{
    uint64_t end;
    int dims[4], ndim;
    const singa_ckpt *first = &shards[pc[i].file];
    if (check_tiling(s, pc, i, j, &end, err) < 0 || param_shape(s, first, pc[i].param, end, dims, &ndim, err) < 0)
        return -1;
    const char *sname = pc[i].sname;
    size_t k = strlen(sname);
    static const char *const kinds[] = {"updater", "outer"};
    for (size_t e = 0; e < first->n; e++)
        for (int q = 0; q < 2; q++) {
            const char *en = first->entries[e].name;
            size_t kl = strlen(kinds[q]);
            if (strncmp(en, kinds[q], kl) == 0 && en[kl] == '/' && strncmp(en + kl + 1, sname, k) == 0 &&
                en[kl + 1 + k] == '/' &&
                assemble_entry(s, shards, pc, i, j, kinds[q], en + kl + 2 + k, ndim, dims, end, err) < 0)
                return -1;
        }
    return assemble_entry(s, shards, pc, i, j, NULL, NULL, ndim, dims, end, err);
}

/* Places every slice of server group 0's shards into the model.  The pieces are sorted by param
 * and offset; each param's must tile it. */
static int assemble(singa_ckpt_set *s, singa_ckpt *shards, piece *pc, size_t np, singa_err *err)
{
    qsort(pc, np, sizeof *pc, cmp_piece);
    for (size_t i = 0, j; i < np; i = j) {
        for (j = i; j < np && strcmp(pc[j].param, pc[i].param) == 0; j++)
            ;
        if (assemble_param(s, shards, pc, i, j, err) < 0)
            return -1;
        for (size_t k = i; k < j; k++) {
            singa_ckpt_set_slice *x = &s->slices[s->nslices++];
            *x = (singa_ckpt_set_slice){pc[k].param, (uint64_t)pc[k].where[1], (uint64_t)pc[k].where[2], pc[k].where[3]};
            pc[k].param = NULL;
        }
    }
    return 0;
}

/* What reading a step's files gathers: server group 0's shards, their slices, and the number of
 * files the step has, as every file says (older ones do not: -1). */
typedef struct parts {
    singa_ckpt *shards;
    size_t nshards;
    piece *pc;
    size_t np, cap;
    int64_t nfiles;
} parts;

/* The slices ("slice/<param>[@<offset>]": server, offset, length, version) of shard g->nshards. */
static int add_slices(parts *g, const singa_ckpt *ck, const char *path, singa_err *err)
{
    for (size_t e = 0; e < ck->n; e++) {
        const singa_ckpt_entry *x = &ck->entries[e];
        if (strncmp(x->name, "slice/", 6) != 0)
            continue;
        if (x->dtype != SINGA_CKPT_I64 || x->ndim != 1 || x->dims[0] != 4 || ((const int64_t *)x->data)[1] < 0 ||
            ((const int64_t *)x->data)[2] < 0)
            return singa_err_set(err, "checkpoint '%s': tensor '%s' holds impossible values", path, x->name);
        if (g->np == g->cap) {
            piece *t = realloc(g->pc, (g->cap = g->cap ? 2 * g->cap : 64) * sizeof *g->pc);
            if (!t)
                return singa_err_set(err, "out of memory");
            g->pc = t;
        }
        piece *p = &g->pc[g->np++];
        p->sname = x->name + 6;
        p->file = g->nshards;
        memcpy(p->where, x->data, sizeof p->where);
        if (!(p->param = strndup(p->sname, strcspn(p->sname, "@"))))
            return singa_err_set(err, "out of memory");
    }
    return 0;
}

/* A worker's file: its own state, but for what every file records. */
static int keep_worker(singa_ckpt_set *s, const singa_ckpt_file *f, singa_ckpt *ck, singa_err *err)
{
    singa_ckpt_set_worker *w = add_worker(s, f->group, f->id, err);
    int rc = w ? 0 : -1;
    for (size_t e = 0; w && rc == 0 && e < ck->n; e++)
        if (strcmp(ck->entries[e].name, "topology") != 0 && strcmp(ck->entries[e].name, "worker") != 0 &&
            strcmp(ck->entries[e].name, "files") != 0 && strcmp(ck->entries[e].name, "lost") != 0)
            rc = move_entry(&w->state, &ck->entries[e], err);
    singa_ckpt_free(ck, 1);
    return rc;
}

/* Reads file f (the first of its step with `first`) of folder dir, verified, into s or g. */
static int read_part(singa_ckpt_set *s, parts *g, const char *dir, const singa_ckpt_file *f, bool first,
                     singa_err *err)
{
    char path[4096];
    singa_ckpt ck;
    singa_ckpt_part_path(path, sizeof path, dir, f->step, f->kind, f->group, f->id);
    if (singa_ckpt_read(&ck, path, err) < 0)
        return -1;
    if (add_file(s, path, f->kind, f->group, f->id, err) < 0 || check_part(s, &ck, f, path, first, err) < 0) {
        singa_ckpt_free(&ck, 1);
        return -1;
    }
    const singa_ckpt_entry *fe = singa_ckpt_find(&ck, "files");
    int64_t nf = -1;
    if (fe && fe->dtype == SINGA_CKPT_I64 && fe->bytes == 8)
        memcpy(&nf, fe->data, 8);
    if (nf >= 0 && (g->nfiles < 0 || nf < g->nfiles)) /* a writer that knew of more lost groups counts fewer */
        g->nfiles = nf;
    if (note_lost(s, &ck, path, err) < 0) {
        singa_ckpt_free(&ck, 1);
        return -1;
    }
    if (f->kind == SINGA_CKPT_WORKER)
        return keep_worker(s, f, &ck, err);
    if (f->group != 0) { /* another server group's copy: verified, not the model */
        singa_ckpt_free(&ck, 1);
        return 0;
    }
    g->shards[g->nshards] = ck;
    int rc = add_slices(g, &ck, path, err);
    g->nshards++;
    return rc;
}
/* Whether every file of the step is one of the topology the files record. */
static int check_members(const singa_ckpt_set *s, const singa_ckpt_file *files, size_t n, singa_err *err)
{
    const int64_t *t = s->topology;
    for (size_t i = 0; i < n; i++)
        if ((files[i].kind == SINGA_CKPT_SERVER && (files[i].group >= t[3] || files[i].id >= t[4])) ||
            (files[i].kind == SINGA_CKPT_WORKER && (files[i].group >= t[1] || files[i].id >= t[2])))
            return singa_err_set(err, "checkpoint '%s' is not a file of the topology the others record", s->files[i].path);
    return 0;
}

/* The params no server holds (a layer's statistics): worker 0.0's. */
static int add_unserved(singa_ckpt_set *s, singa_err *err)
{
    const singa_ckpt_set_worker *lead = NULL;
    for (size_t i = 0; i < s->nworkers; i++)
        if (s->workers[i].group == 0 && s->workers[i].id == 0)
            lead = &s->workers[i];
    for (size_t e = 0; lead && e < lead->state.n; e++) {
        const singa_ckpt_entry *x = &lead->state.entries[e];
        if (strncmp(x->name, "param/", 6) != 0 || singa_ckpt_find(&s->model, x->name))
            continue;
        void *copy = malloc(x->bytes + 1);
        int dims[4];
        for (int d = 0; d < x->ndim; d++)
            dims[d] = (int)x->dims[d];
        if (!copy || singa_ckpt_add(&s->model, x->name, x->dtype, x->ndim, dims, copy, err) < 0) {
            free(copy);
            return singa_err_set(err, "out of memory");
        }
        memcpy(copy, x->data, x->bytes);
    }
    return 0;
}

/* Reads step files[0, n) of folder `dir` (all of one step, none plain). */
static int read_dist(singa_ckpt_set *s, const char *dir, const singa_ckpt_file *files, size_t n, singa_err *err)
{
    uint64_t step = files[0].step;
    snprintf(s->where, sizeof s->where, "%s/step%09llu.*.ckpt", dir, (unsigned long long)step);
    s->step = step;
    singa_ckpt_init(&s->model, step);
    parts g = {.shards = calloc(n, sizeof *g.shards), .nfiles = -1};
    int rc = g.shards ? 0 : singa_err_set(err, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = read_part(s, &g, dir, &files[i], i == 0, err);
    if (rc == 0)
        rc = check_whole(s, dir, files, n, g.nfiles, err);
    if (rc == 0)
        rc = check_members(s, files, n, err);
    if (rc == 0 && !(s->slices = calloc(g.np + 1, sizeof *s->slices)))
        rc = singa_err_set(err, "out of memory");
    if (rc == 0)
        rc = assemble(s, g.shards, g.pc, g.np, err);
    if (rc == 0)
        rc = add_unserved(s, err);
    for (size_t i = 0; i < g.np; i++)
        free(g.pc[i].param);
    free(g.pc);
    for (size_t i = 0; i < g.nshards; i++)
        singa_ckpt_free(&g.shards[i], 1);
    free(g.shards);
    return rc;
}

/* The set of one step: a plain file, or the part files of a distributed step. */
static int read_step(singa_ckpt_set *s, const char *dir, const singa_ckpt_file *files, size_t n, singa_err *err)
{
    memset(s, 0, sizeof *s);
    int rc;
    if (files[0].kind == SINGA_CKPT_LOCAL && n > 1) {
        char path[4096];
        singa_ckpt_part_path(path, sizeof path, dir, files[1].step, files[1].kind, files[1].group, files[1].id);
        rc = singa_err_set(err, "checkpoint step %llu: '%s' of a distributed job beside a plain job's checkpoint: "
                                "files of two runs are mixed", (unsigned long long)files[0].step, path);
    } else if (files[0].kind == SINGA_CKPT_LOCAL) {
        char path[4096];
        singa_ckpt_path(path, sizeof path, dir, files[0].step);
        rc = read_plain(s, path, err);
    } else
        rc = read_dist(s, dir, files, n, err);
    if (rc < 0)
        singa_ckpt_set_free(s);
    return rc;
}

/* Parses a file's name as a checkpoint file's; its folder goes to dir. */
static int parse_path(const char *path, char *dir, size_t len, singa_ckpt_file *f)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(dir, len, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    singa_ckpt_file *files;
    size_t n;
    if (singa_ckpt_dir_files(dir, &files, &n, NULL) < 0)
        return -1;
    int rc = -1;
    for (size_t i = 0; i < n && rc < 0; i++) {
        char p[4096];
        singa_ckpt_part_path(p, sizeof p, dir, files[i].step, files[i].kind, files[i].group, files[i].id);
        const char *b = strrchr(p, '/');
        if (strcmp(b ? b + 1 : p, base) == 0) {
            *f = files[i];
            rc = 0;
        }
    }
    free(files);
    return rc;
}

/* The files of distributed step `step` in dir (none: *n = 0). */
static int step_files(const char *dir, uint64_t step, singa_ckpt_file **files, size_t *n, singa_err *err)
{
    singa_ckpt_file *all;
    size_t m;
    *n = 0;
    if (singa_ckpt_dir_files(dir, &all, &m, err) < 0)
        return -1;
    if (!(*files = malloc((m + 1) * sizeof **files))) {
        free(all);
        return singa_err_set(err, "out of memory");
    }
    for (size_t i = 0; i < m; i++)
        if (all[i].step == step && all[i].kind != SINGA_CKPT_LOCAL)
            (*files)[(*n)++] = all[i];
    free(all);
    return 0;
}

/* A plain checkpoint's name, stepN.ckpt, that no file has: the distributed step N beside it, if
 * there is one (an imported SINGA conf names one file per step, whatever wrote it). */
static int missing_plain(const char *path, char *dir, size_t len, singa_ckpt_file **files, size_t *n, singa_err *err)
{
    const char *slash = strrchr(path, '/');
    unsigned long long step;
    int end = 0;
    *files = NULL;
    *n = 0;
    if (sscanf(slash ? slash + 1 : path, "step%llu.ckpt%n", &step, &end) != 1 || (slash ? slash + 1 : path)[end])
        return 0;
    snprintf(dir, len, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    return step_files(dir, step, files, n, err);
}

int singa_ckpt_set_open(singa_ckpt_set *s, const char *path, singa_ckpt_set_accept_fn accept,
                        singa_ckpt_set_refused_fn refused, void *ud, singa_err *err)
{
    memset(s, 0, sizeof *s);
    struct stat st;
    char dir[4096];
    singa_ckpt_file *files = NULL, one;
    size_t n = 0;
    if (stat(path, &st) < 0) {
        int e = errno;
        if (e != ENOENT || missing_plain(path, dir, sizeof dir, &files, &n, err) < 0 || n == 0) {
            free(files);
            singa_err_set(err, "'%s': %s", path, strerror(e));
            return 1;
        }
    } else if (S_ISDIR(st.st_mode)) {
        snprintf(dir, sizeof dir, "%s", path);
        if (singa_ckpt_dir_files(dir, &files, &n, err) < 0)
            return -1;
        if (n == 0) {
            free(files);
            singa_err_set(err, "directory '%s' holds no checkpoint (stepNNNNNNNNN.ckpt)", path);
            return 1;
        }
    } else if (parse_path(path, dir, sizeof dir, &one) == 0 && one.kind != SINGA_CKPT_LOCAL) {
        if (step_files(dir, one.step, &files, &n, err) < 0) /* one file of a distributed step: that step */
            return -1;
    } else { /* a plain file, whatever its name */
        int rc = read_plain(s, path, err);
        if (rc == 0 && accept && (rc = accept(ud, s, err)) < 0 && refused)
            refused(ud, s->step, false, err->msg);
        if (rc < 0)
            singa_ckpt_set_free(s);
        return rc;
    }
    singa_err newest = {{0}};
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && files[j].step == files[i].step)
            j++;
        singa_err e = {{0}};
        int rc = read_step(s, dir, files + i, j - i, &e);
        if (rc == 0 && accept && (rc = accept(ud, s, &e)) < 0)
            singa_ckpt_set_free(s);
        if (rc == 0) {
            free(files);
            return 0;
        }
        if (refused)
            refused(ud, files[i].step, rc == -2, e.msg);
        if (!newest.msg[0])
            newest = e;
        i = j;
    }
    free(files);
    if (err)
        *err = newest;
    return -1;
}
