/* cluster.plan = "auto": the job planned as it starts, over the processes launched, and run with
 * the best configuration.  Under `singa-tui --procs` every process profiles, and rank 0's choice
 * (its name and a pipeline's stages, which depend on its timings) reaches the others through a
 * file named for the run's coordinator, so that every process builds the same topology (or, when
 * rank 0 finds none, runs the job's own cluster fields). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "plan/plan.h"

enum { WAIT_SECONDS = 120 };

static _Atomic int wrote; /* this process wrote the choice, which singa_plan_auto_clear removes */

static void choice_path(char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR"), *co = getenv("SINGA_COORDINATOR");
    int at = snprintf(path, len, "%s/singa-plan-", tmp && *tmp ? tmp : "/tmp");
    for (const char *s = co ? co : "none"; *s && at + 1 < (int)len; s++)
        path[at++] = (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ? *s : '_';
    path[at] = 0;
}

enum { NO_CHOICE = '-' }; /* rank 0 runs the job's own cluster fields */

/* Rank 0: the choice (NULL: none) written whole (a temp file renamed). */
static int write_choice(const char *path, const singa_plan_config *c)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    fprintf(f, "%s\n", c ? c->name : (const char[]){NO_CHOICE, 0});
    for (int s = 0; s < SINGA_PLAN_MAX_STAGES; s++)
        fprintf(f, "%d\n", c ? c->stage_start[s] : 0);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    wrote = 1;
    return 0;
}

/* The others: rank 0's choice among their own rows, once its file (newer than `since`) is there;
 * NULL with *why when there is none. */
static singa_plan_row *read_choice(singa_plan *plan, const char *path, time_t since, const char **why)
{
    *why = "rank 0's choice did not arrive";
    struct stat st;
    for (int waited = 0; waited < 10 * WAIT_SECONDS; waited++) {
        FILE *f = stat(path, &st) == 0 && st.st_mtime >= since ? fopen(path, "r") : NULL;
        if (!f) {
            usleep(100000);
            continue;
        }
        char name[64] = "";
        int starts[SINGA_PLAN_MAX_STAGES] = {0}, ok = fgets(name, sizeof name, f) != NULL;
        for (int s = 0; ok && s < SINGA_PLAN_MAX_STAGES; s++)
            ok = fscanf(f, "%d", &starts[s]) == 1;
        fclose(f);
        name[strcspn(name, "\n")] = 0;
        *why = name[0] == NO_CHOICE && !name[1] ? "rank 0 found none" : "rank 0 chose one this process does not have";
        for (int i = 0; ok && i < plan->nrows; i++)
            if (strcmp(plan->rows[i].cfg.name, name) == 0) {
                memcpy(plan->rows[i].cfg.stage_start, starts, sizeof starts);
                return &plan->rows[i];
            }
        return NULL;
    }
    return NULL;
}

/* The best row of `size` processes (this process's choice, or rank 0's); NULL with *why. */
static singa_plan_row *choose(singa_plan *plan, int rank, int size, time_t since, const char **why)
{
    char path[4096];
    choice_path(path, sizeof path);
    if (size > 1 && rank > 0)
        return read_choice(plan, path, since, why);
    singa_plan_row *best = NULL;
    for (int i = 0; i < plan->nrows && !best; i++)
        if ((plan->rows[i].cfg.scheme == SINGA_PLAN_ONE) == (size == 1))
            best = &plan->rows[i];
    if (!best)
        *why = plan->why_none[0] ? plan->why_none : "no configuration";
    if (size > 1 && write_choice(path, best ? &best->cfg : NULL) < 0)
        best = NULL, *why = "cannot write the choice for the other processes";
    return best;
}

singa_conf *singa_plan_auto(const singa_conf *conf, const singa_registry *reg, char *line, size_t len,
                            double *predicted_step)
{
    *predicted_step = 0;
    int rank, size;
    const char *from, *why = NULL;
    singa_err err = {{0}};
    time_t since = time(NULL) - 2;
    if (singa_launch_rank(&rank, &size, &from, &err) < 0) {
        snprintf(line, len, "plan: cannot plan (%s): the job runs with its own cluster fields", err.msg);
        return NULL;
    }
    if (size > 1 && strcmp(from, "SINGA_RANK") != 0) {
        snprintf(line, len, "plan: not under %s (each process would profile on its own and could choose "
                 "differently; singa-tui --procs agrees on rank 0's choice): the job runs with its own cluster fields", from);
        return NULL;
    }
    singa_plan plan = {0};
    singa_plan_link link;
    const char *spec = getenv("SINGA_PLAN_LINK");
    if (singa_plan_link_parse(&link, spec && *spec ? spec : "local", &err) < 0 ||
        singa_plan_make(&plan, conf, reg, size, &link, &err) < 0) {
        char path[4096];
        choice_path(path, sizeof path);
        if (size > 1 && rank == 0) /* the others follow */
            write_choice(path, NULL);
        snprintf(line, len, "plan: the profile cannot run (%s): the job runs with its own cluster fields", err.msg);
        singa_plan_free(&plan);
        return NULL;
    }
    singa_plan_row *row = choose(&plan, rank, size, since, &why);
    singa_conf *out = row ? singa_plan_apply(&plan, row, conf) : NULL;
    if (out)
        *predicted_step = row->pred.step;
    if (!row)
        snprintf(line, len, "plan: no configuration of %d process%s to run (%s): the job runs with its own cluster "
                 "fields", size, size == 1 ? "" : "es", why);
    else if (!out)
        snprintf(line, len, "plan: out of memory: the job runs with its own cluster fields");
    else if (size == 1)
        snprintf(line, len, "plan: one process (no cluster), predicted %.0f images/s", row->pred.images_per_sec);
    else
        snprintf(line, len, "plan: %s over %d processes (link %s), predicted %.0f images/s", row->cfg.name, size,
                 link.name, row->pred.images_per_sec);
    singa_plan_free(&plan);
    return out;
}

void singa_plan_auto_clear(void)
{
    char path[4096];
    if (!wrote)
        return;
    choice_path(path, sizeof path);
    unlink(path);
    wrote = 0;
}
