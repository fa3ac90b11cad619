/* cluster.plan = "auto": the job planned as it starts, over the processes launched, and run with
 * the best configuration.  Every process profiles, and rank 0's choice (its name and a
 * pipeline's stages, which depend on its timings) reaches the others over the network at the
 * job's coordinator address (handoff.c), so that every process builds the same topology (or,
 * when rank 0 finds none, runs the job's own cluster fields). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

static const double WAIT_SECONDS = 120;

/* How the processes find each other: the coordinator's address, how long the others wait for
 * rank 0's choice ($SINGA_PLAN_WAIT) and the key an ask names (the job's digest, the size and
 * the launcher's run id, so that no rank 0 of another run or job is followed). */
typedef struct {
    char at[256], key[256];
    double wait;
} meeting;

static int find_meeting(meeting *m, const singa_conf *conf, int size, singa_err *err)
{
    const char *at = singa_conf_str(singa_conf_get(conf, "cluster"), "coordinator", NULL);
    if (!at)
        at = getenv("SINGA_COORDINATOR");
    if (!at || !*at)
        return singa_err_set(err, "no coordinator's address (cluster.coordinator or $SINGA_COORDINATOR) to agree on "
                                  "rank 0's choice at");
    const char *rejoin = getenv("SINGA_REJOIN");
    if (rejoin && *rejoin && strcmp(rejoin, "0") != 0) /* rank 0 hands its choice on only as the job starts */
        return singa_err_set(err, "a process that rejoins ($SINGA_REJOIN) cannot hear rank 0's choice, handed on as "
                                  "the job started: put the configuration its 'plan: ' line named in the job");
    const char *wait = getenv("SINGA_PLAN_WAIT");
    char *end = NULL;
    m->wait = wait && *wait ? strtod(wait, &end) : WAIT_SECONDS;
    if (end && (*end || !(m->wait > 0 && m->wait <= 3600)))
        return singa_err_set(err, "$SINGA_PLAN_WAIT = '%s' is not a number of seconds (0 to 3600)", wait);
    snprintf(m->at, sizeof m->at, "%s", at);
    static const char *const ids[] = {"SINGA_RUN_ID", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID"};
    const char *run = "-";
    for (size_t i = 0; i < sizeof ids / sizeof *ids && !strcmp(run, "-"); i++)
        run = getenv(ids[i]) && *getenv(ids[i]) ? getenv(ids[i]) : "-";
    const char *step = getenv("SLURM_STEP_ID");
    snprintf(m->key, sizeof m->key, "%d %016llx %.100s%s%.20s", size, (unsigned long long)singa_conf_hash(conf), run,
             step ? "." : "", step ? step : "");
    return 0;
}

/* Rank 0's choice among this process's rows; NULL with why (*lost: the choice did not arrive). */
static singa_plan_row *take_choice(singa_plan *plan, const meeting *m, int rank, char *why, size_t len, bool *lost)
{
    char name[64];
    int starts[SINGA_PLAN_MAX_STAGES];
    singa_err err = {{0}};
    if (plan_handoff_take(m->at, m->key, rank, m->wait, name, sizeof name, starts, &err) < 0) {
        snprintf(why, len, "%s", err.msg);
        *lost = true;
        return NULL;
    }
    for (int i = 0; i < plan->nrows; i++)
        if (strcmp(plan->rows[i].cfg.name, name) == 0) {
            memcpy(plan->rows[i].cfg.stage_start, starts, sizeof starts);
            return &plan->rows[i];
        }
    if (strcmp(name, "-") == 0)
        snprintf(why, len, "rank 0 found none");
    else
        snprintf(why, len, "rank 0 chose '%s', which this process does not have", name);
    return NULL;
}

/* The best row of `size` processes (this process's choice, handed on, or rank 0's); NULL with why
 * (*lost: the hand-off failed). */
static singa_plan_row *choose(singa_plan *plan, const meeting *m, int rank, int size, char *why, size_t len,
                              bool *lost)
{
    if (size > 1 && rank > 0)
        return take_choice(plan, m, rank, why, len, lost);
    singa_plan_row *best = NULL;
    for (int i = 0; i < plan->nrows && !best; i++)
        if ((plan->rows[i].cfg.scheme == SINGA_PLAN_ONE) == (size == 1))
            best = &plan->rows[i];
    if (!best)
        snprintf(why, len, "%s", plan->why_none[0] ? plan->why_none : "no configuration");
    singa_err err = {{0}};
    if (size > 1 && plan_handoff_give(m->at, m->key, size, best ? &best->cfg : NULL, m->wait, &err) < 0)
        best = NULL, *lost = true, snprintf(why, len, "cannot hand the choice to the other processes: %s", err.msg);
    return best;
}

/* The "plan: " line of a row chosen (out: its job, NULL out of memory) or of none (why; lost: the
 * hand-off failed). */
static void say(char *line, size_t len, const singa_plan_row *row, const singa_conf *out, int size,
                const singa_plan_link *link, const char *why, bool lost)
{
    if (!row && lost)
        snprintf(line, len, "plan: %s: the job runs with its own cluster fields", why);
    else if (!row)
        snprintf(line, len, "plan: no configuration of %d process%s to run (%s): the job runs with its own cluster "
                 "fields", size, size == 1 ? "" : "es", why);
    else if (!out)
        snprintf(line, len, "plan: out of memory: the job runs with its own cluster fields");
    else if (size == 1)
        snprintf(line, len, "plan: one process (no cluster), predicted %.0f images/s", row->pred.images_per_sec);
    else
        snprintf(line, len, "plan: %s over %d processes (link %s), predicted %.0f images/s", row->cfg.name, size,
                 link->name, row->pred.images_per_sec);
}

singa_conf *singa_plan_auto(const singa_conf *conf, const singa_registry *reg, char *line, size_t len,
                            double *predicted_step)
{
    *predicted_step = 0;
    int rank, size;
    const char *from;
    singa_err err = {{0}};
    meeting m = {0};
    if (singa_launch_rank(&rank, &size, &from, &err) < 0 || (size > 1 && find_meeting(&m, conf, size, &err) < 0)) {
        snprintf(line, len, "plan: cannot plan (%s): the job runs with its own cluster fields", err.msg);
        return NULL;
    }
    singa_plan plan = {0};
    singa_plan_link link;
    const char *spec = getenv("SINGA_PLAN_LINK");
    bool linked = singa_plan_link_parse(&link, spec && *spec ? spec : "local", &err) == 0;
    link.per_host = size; /* as --procs launches them: on this machine */
    if (!linked || singa_plan_make(&plan, conf, reg, size, &link, rank == 0, &err) < 0) {
        singa_err ignored;
        if (size > 1 && rank == 0) /* the others follow */
            plan_handoff_give(m.at, m.key, size, NULL, m.wait, &ignored);
        snprintf(line, len, linked ? "plan: the profile cannot run (%s): the job runs with its own cluster fields"
                                   : "plan: $SINGA_PLAN_LINK (%s): the job runs with its own cluster fields", err.msg);
        singa_plan_free(&plan);
        return NULL;
    }
    char why[600] = "";
    bool lost = false;
    singa_plan_row *row = choose(&plan, &m, rank, size, why, sizeof why, &lost);
    singa_conf *out = row ? singa_plan_apply(&plan, row, conf) : NULL;
    if (out)
        *predicted_step = row->pred.step;
    say(line, len, row, out, size, &link, why, lost);
    singa_plan_free(&plan);
    return out;
}
