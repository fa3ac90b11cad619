/* One resume for every caller (see resume.h): the checks of what a caller wants are here, once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/load.h"
#include "ckpt/resume.h"

typedef struct search {
    const singa_ckpt_want *w;
    singa_ckpt_resumed *r;
} search;

static void refused(void *ud, uint64_t step, bool incomplete, const char *reason)
{
    search *s = ud;
    singa_ckpt_resumed *r = s->r;
    if (s->w->log) {
        char line[SINGA_ERR_LEN + 128];
        snprintf(line, sizeof line, "refused %s", reason);
        s->w->log(s->w->log_ud, line);
    }
    uint64_t *st = realloc(r->refused, (r->nrefused + 1) * sizeof *st);
    bool *in = st ? realloc(r->incomplete, (r->nrefused + 1) * sizeof *in) : NULL;
    if (st)
        r->refused = st;
    if (!in)
        return; /* that step's files stay: nothing lost */
    r->incomplete = in;
    r->refused[r->nrefused] = step;
    r->incomplete[r->nrefused++] = incomplete;
}

/* Param p's entry in the model of s, when it fits; else err, in the caller's wording. */
static const singa_ckpt_entry *param_entry(const singa_ckpt_want *w, const singa_ckpt_set *s, const singa_param *p,
                                           singa_err *err)
{
    bool job = w->wording == SINGA_CKPT_AS_JOB;
    char name[600], a[64], b[64];
    snprintf(name, sizeof name, "param/%s", p->name);
    const singa_ckpt_entry *e = singa_ckpt_find(&s->model, name);
    if (!e) {
        singa_err_set(err, "checkpoint '%s': param '%s' (layer '%s') is not in it (%s belongs to another net)", s->where,
                      p->name, p->layer, job ? "it" : "the file");
        return NULL;
    }
    if (singa_ckpt_entry_fits(e, SINGA_CKPT_F32, p->data.ndim, p->data.shape) ||
        (w->flat_ok && e->dtype == SINGA_CKPT_F32 && e->ndim == 1 && e->dims[0] == p->data.size))
        return e;
    singa_ckpt_entry_shape(e, a, sizeof a);
    singa_err_set(err, "checkpoint '%s': param '%s' has shape %s %s but %s in %s job (layer '%s')", s->where, p->name,
                  e->dtype == SINGA_CKPT_F32 ? a : "(not float32)", job ? "there" : "in the file",
                  singa_tensor_shape_str(&p->data, b, sizeof b), job ? "this" : "the", p->layer);
    return NULL;
}

/* Whether s holds every param w wants (and, with w->known, no other); copies them with w->copy. */
static int params_fit(const singa_ckpt_want *w, const singa_ckpt_set *s, singa_err *err)
{
    for (int k = 0; k < w->nparams; k++)
        if (!param_entry(w, s, w->params[k], err))
            return -1;
    for (size_t i = 0; w->known && i < s->model.n; i++) {
        const char *n = s->model.entries[i].name;
        if (strncmp(n, "param/", 6) == 0 && !singa_params_find(w->known, n + 6))
            return singa_err_set(err, "checkpoint '%s': param '%s' is not in this job (it belongs to another net)",
                                 s->where, n + 6);
    }
    for (int k = 0; w->copy && k < w->nparams; k++) {
        const singa_ckpt_entry *e = param_entry(w, s, w->params[k], err);
        memcpy(w->params[k]->data.data, e->data, e->bytes);
    }
    return 0;
}

static int accept(void *ud, const singa_ckpt_set *s, singa_err *err)
{
    const singa_ckpt_want *w = ((search *)ud)->w;
    if (params_fit(w, s, err) < 0)
        return -1;
    return w->state ? singa_ckpt_resume_state(s, w->group, w->id, w->state, w->obj, err) : 0;
}

int singa_ckpt_resume(const singa_ckpt_want *w, singa_ckpt_resumed *r, singa_err *err)
{
    memset(r, 0, sizeof *r);
    search s = {w, r};
    return singa_ckpt_set_open(&r->set, w->path, accept, refused, &s, err); /* r->set: freed unless accepted */
}

void singa_ckpt_resumed_free(singa_ckpt_resumed *r)
{
    singa_ckpt_set_free(&r->set);
    free(r->refused);
    free(r->incomplete);
    r->refused = NULL;
    r->incomplete = NULL;
    r->nrefused = 0;
}

int singa_ckpt_resume_state(const singa_ckpt_set *s, int group, int id, singa_ckpt_state_fn load, void *obj,
                            singa_err *err)
{
    singa_ckpt view;
    if (singa_ckpt_set_view(s, group, id, true, &view, err) < 0)
        return -1;
    int rc = load(obj, &view, s->where, err);
    singa_ckpt_free(&view, 0);
    return rc;
}
