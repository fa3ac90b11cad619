/* The checkpoint loader: check every entry, then copy (see load.h). */
#include <stdlib.h>
#include <string.h>

#include "ckpt/load.h"

bool singa_ckpt_entry_fits(const singa_ckpt_entry *e, int dtype, int ndim, const int *dims)
{
    bool same = e->dtype == dtype && e->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = e->dims[i] == (uint32_t)dims[i];
    return same;
}

void singa_ckpt_entry_shape(const singa_ckpt_entry *e, char *buf, size_t len)
{
    buf[0] = 0;
    for (int i = 0; i < e->ndim; i++)
        singa_appendf(buf, len, i ? "x%u" : "%u", e->dims[i]);
}

typedef struct loader {
    const singa_ckpt *ck;
    const char *path;
    const singa_ckpt_load_ops *ops;
    void *ud;
    bool apply;
    bool *seen; /* per entry of the file: the object has it */
} loader;

static int visit(void *ud, const char *name, int dtype, int ndim, const int *dims, void *data, singa_err *err)
{
    loader *l = ud;
    const singa_ckpt_entry *e = singa_ckpt_find(l->ck, name);
    if (l->apply) { /* checked: an entry the file lacks was let be */
        if (e && l->ops->apply)
            l->ops->apply(l->ud, name, e, data);
        else if (e)
            memcpy(data, e->data, e->bytes);
        return 0;
    }
    if (!e && l->ops->missing)
        return l->ops->missing(l->ud, name, err);
    if (!e)
        return singa_err_set(err, "checkpoint '%s': tensor '%s' is missing (the file belongs to another net or updater)",
                             l->path, name);
    if (!singa_ckpt_entry_fits(e, dtype, ndim, dims))
        return l->ops->mismatch(l->ud, name, e, ndim, dims, err);
    if (l->ops->check && l->ops->check(l->ud, name, e, data, err) < 0)
        return -1;
    l->seen[e - l->ck->entries] = true;
    return 0;
}

int singa_ckpt_load(const singa_ckpt *ck, const char *path, singa_ckpt_each_fn each, void *obj,
                    const singa_ckpt_load_ops *ops, void *ud, singa_err *err)
{
    loader l = {ck, path, ops, ud, false, calloc(ck->n + 1, sizeof(bool))};
    int rc = l.seen ? each(obj, visit, &l, err) : singa_err_set(err, "out of memory");
    for (size_t i = 0; rc == 0 && ops->extra && i < ck->n; i++)
        if (!l.seen[i])
            rc = ops->extra(ud, ck->entries[i].name, err);
    if (rc == 0 && ops->validate)
        rc = ops->validate(ud, err);
    if (rc == 0) {
        l.apply = true;
        rc = each(obj, visit, &l, err);
    }
    free(l.seen);
    return rc;
}
