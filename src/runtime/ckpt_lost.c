/* Rank 0, when a process is lost from an asynchronous job that goes on: the checkpoints written
 * since it died but before the loss was known lack its groups' worker files without recording
 * why (rt_ckpt_write's "lost"), so they are really incomplete, and the log says so, naming each
 * at its step.  Those written once the loss is known record it and are whole (ckpt/set.c).
 *
 * The coordinator, when any process is lost from a job that goes on: the files it was writing
 * then stay half-written ("*.ckpt.tmp"), and nobody else would remove them before the next run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "ckpt/resume.h"

/* Whether step files[0, n) is refused for lacking worker group g's file (dir: their folder). */
static bool lacks_group(const char *dir, const singa_ckpt_file *files, int g)
{
    char path[4096], want[4096];
    singa_err err;
    singa_ckpt_part_path(path, sizeof path, dir, files[0].step, files[0].kind, files[0].group, files[0].id);
    singa_ckpt_part_path(want, sizeof want, dir, files[0].step, SINGA_CKPT_WORKER, g, 0);
    singa_ckpt_want w = {.path = path};
    singa_ckpt_resumed r;
    bool lacks = singa_ckpt_resume(&w, &r, &err) < 0 && r.nrefused && r.incomplete[0] && strstr(err.msg, want);
    singa_ckpt_resumed_free(&r);
    return lacks;
}

void rt_ckpt_name_incomplete(rt_ctx *rt, int r)
{
    singa_ckpt_file *files;
    size_t n;
    singa_err err;
    if (!rt->ckpt_dir || singa_ckpt_dir_files(rt->ckpt_dir, &files, &n, &err) < 0)
        return;
    for (int g = 0; g < rt->c->nworker_groups; g++) {
        if (rt_worker_proc(rt, g, 0) != r)
            continue;
        /* newest first, down to the newest step that has the group's state */
        for (size_t i = 0, j; i < n && files[i].kind != SINGA_CKPT_LOCAL; i = j) {
            bool has = false;
            for (j = i; j < n && files[j].step == files[i].step; j++)
                has |= files[j].kind == SINGA_CKPT_WORKER && files[j].group == g;
            if (has)
                break;
            if (lacks_group(rt->ckpt_dir, files + i, g))
                rt_log(rt, "checkpoint %s/step%09llu.*.ckpt is incomplete: worker group %d (rank %d) was lost before "
                           "it wrote its state there, and the files written before the loss was known do not say so; "
                           "a resume takes an older one", rt->ckpt_dir, (unsigned long long)files[i].step, g, r);
        }
    }
    free(files);
}

typedef struct rt_lost_part {
    const rt_ctx *rt;
    int r;
} rt_lost_part;

/* Whether lost process r (ud) wrote part f: its workers', and the servers it held (group 0's
 * server j may be held by its backup since a loss: rt_holder_id). */
static bool written_by(const singa_ckpt_file *f, void *ud)
{
    const rt_lost_part *l = ud;
    const singa_cluster *c = l->rt->c;
    if (f->kind == SINGA_CKPT_WORKER)
        return f->group < c->nworker_groups && f->id < c->nworkers_per_group &&
               rt_worker_proc(l->rt, f->group, f->id) == l->r;
    return f->kind == SINGA_CKPT_SERVER && f->group < c->nserver_groups && f->id < c->nservers_per_group &&
           rt_server_proc(l->rt, f->group, f->group == 0 ? rt_holder_id(l->rt, f->id) : f->id) == l->r;
}

void rt_ckpt_drop_lost_tmp(const rt_ctx *rt, int r)
{
    if (rt->ckpt_dir)
        singa_ckpt_dir_drop_tmp(rt->ckpt_dir, written_by, &(rt_lost_part){rt, r});
}
