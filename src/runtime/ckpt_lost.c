/* Rank 0, when a process is lost from an asynchronous job that goes on: the checkpoints written
 * since it died but before the loss was known lack its groups' worker files without recording
 * why (rt_ckpt_write's "lost"), so they are really incomplete, and the log says so, naming each
 * at its step.  Those written once the loss is known record it and are whole (ckpt/set.c).
 *
 * The coordinator, when any process is lost from a job that goes on: the files it was writing
 * then stay half-written ("*.ckpt.tmp"), and nobody else would remove them before the next run. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Whether name is "step<digits>.<kind><group>.<id>.ckpt.tmp", and which part. */
static bool tmp_part(const char *name, char *kind, int *group, int *id)
{
    size_t digits = strncmp(name, "step", 4) == 0 ? strspn(name + 4, "0123456789") : 0;
    int end = 0;
    return digits > 0 && sscanf(name + 4 + digits, ".%c%d.%d.ckpt.tmp%n", kind, group, id, &end) == 3 && end > 0 &&
           name[4 + digits + (size_t)end] == '\0' && *group >= 0 && *id >= 0;
}

/* Whether process r writes part kind<group>.<id>: its workers', and the servers it holds (group
 * 0's server j may be held by its backup since a loss: rt_holder_id). */
static bool writes(const rt_ctx *rt, int r, char kind, int group, int id)
{
    const singa_cluster *c = rt->c;
    if (kind == 'w')
        return group < c->nworker_groups && id < c->nworkers_per_group && rt_worker_proc(rt, group, id) == r;
    return kind == 's' && group < c->nserver_groups && id < c->nservers_per_group &&
           rt_server_proc(rt, group, group == 0 ? rt_holder_id(rt, id) : id) == r;
}

void rt_ckpt_drop_lost_tmp(const rt_ctx *rt, int r)
{
    DIR *d = rt->ckpt_dir ? opendir(rt->ckpt_dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d));) {
        char kind, path[4096];
        int group, id;
        if (tmp_part(e->d_name, &kind, &group, &id) && writes(rt, r, kind, group, id) &&
            snprintf(path, sizeof path, "%s/%s", rt->ckpt_dir, e->d_name) < (int)sizeof path)
            unlink(path);
    }
    if (d)
        closedir(d);
}
