/* Reporting while a job runs: the lines a job prints, its progress line and its metrics records
 * (the file's format is metricsfile/'s), each passed on to the host (the workbench) first. */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "lua/lreport.h"
#include "metricsfile/metricsfile.h"
#include "singa/singa.h"

double singa_lua_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void singa_lua_report_clear(singa_lua_reporter *rp)
{
    if (rp->line_open) {
        fputs("\r\x1b[K", stdout);
        rp->line_open = 0;
    }
}

void singa_lua_report_log(void *ud, const char *line)
{
    singa_lua_reporter *rp = ud;
    const singa_lua_host *host = rp->opts->host;
    if (host && host->hooks.log)
        host->hooks.log(host->hooks.ud, line);
    singa_lua_report_clear(rp);
    printf("%s\n", line);
    fflush(stdout);
}

static int last_train(void *ud, const singa_metrics_record *r, const char **why)
{
    int *next = ud;
    if (r->phase == SINGA_PHASE_TRAIN && r->group == 0 && r->step >= *next)
        *next = r->step + 1;
    return 0;
}

/* Whether record r is new in the metrics file f: a process that took over a job whose coordinator
 * was lost (cluster.replicas) writes on after the records the lost one wrote to the same file
 * (--procs: one file), leaving out the steps in it already.  f is at the end after. */
static bool new_in_file(singa_lua_reporter *rp, FILE *f, const singa_record *r)
{
    long here = ftell(f);
    if (here < 0 || fseek(f, 0, SEEK_END) != 0) /* a pipe: nobody else writes into it */
        return true;
    if (ftell(f) != here && rp->opts->metrics_path) {
        singa_err err;
        singa_metrics_file_read(rp->opts->metrics_path, last_train, &rp->others_next, &err);
    }
    return r->phase != SINGA_PHASE_TRAIN || r->step >= rp->others_next;
}

/* Records of every process arrive here one at a time (the runtime's lock), so the seconds,
 * on this process's clock, never decrease in the file. */
void singa_lua_report_record(void *ud, const singa_record *rec)
{
    singa_lua_reporter *rp = ud;
    singa_record stamped = *rec;
    stamped.seconds = singa_lua_now() - rp->t0;
    const singa_record *r = &stamped;
    const singa_lua_host *host = rp->opts->host;
    if (host && host->hooks.record)
        host->hooks.record(host->hooks.ud, r);
    double loss = singa_metrics_avg(r->metrics, "loss", NAN);
    double acc = singa_metrics_avg(r->metrics, "accuracy", NAN);
    const char *phase = r->phase == SINGA_PHASE_TRAIN ? "train" : r->phase == SINGA_PHASE_TEST ? "test" : "validation";
    char line[256], who[32];
    snprintf(who, sizeof who, rp->groups > 1 ? "%s g%d" : "%s", phase, r->group);
    int n = snprintf(line, sizeof line, "step %-6d %-10s loss %.4f", r->step, who, loss);
    if (!isnan(acc))
        n += snprintf(line + n, sizeof line - (size_t)n, "  accuracy %.4f", acc);
    if (r->phase == SINGA_PHASE_TRAIN && isfinite(r->images_per_sec))
        n += snprintf(line + n, sizeof line - (size_t)n, "  %.0f images/s", r->images_per_sec);
    if (r->phase == SINGA_PHASE_TRAIN)
        snprintf(line + n, sizeof line - (size_t)n, "  lr %.4g", r->lr);
    singa_lua_report_log(ud, line);
    FILE *f = rp->opts->metrics;
    if (!f || !new_in_file(rp, f, r))
        return;
    singa_metrics_file_record(f, rp->opts->metrics_csv, r, phase, loss, acc);
    if (!rp->opts->metrics_csv && rp->stats && r->phase == SINGA_PHASE_TRAIN && r->group == 0)
        singa_metrics_file_workers(f, r->step, rp->stats);
    fflush(f);
}

void singa_lua_report_step(void *ud, const singa_record *r)
{
    singa_lua_reporter *rp = ud;
    const singa_lua_host *host = rp->opts->host;
    if (host && host->hooks.step)
        host->hooks.step(host->hooks.ud, r);
    if (!rp->opts->progress_line || (r->elapsed - rp->last_draw < 0.1 && r->step != r->total_steps))
        return;
    rp->last_draw = r->elapsed;
    double loss = singa_metrics_avg(r->metrics, "loss", NAN);
    double acc = singa_metrics_avg(r->metrics, "accuracy", NAN);
    char metrics[96] = "";
    if (!isnan(loss))
        singa_appendf(metrics, sizeof metrics, "  loss %.4f", loss);
    if (!isnan(acc))
        singa_appendf(metrics, sizeof metrics, "  accuracy %.4f", acc);
    if (isfinite(r->images_per_sec)) /* none after the warm-up step alone */
        singa_appendf(metrics, sizeof metrics, "  %.0f images/s", r->images_per_sec);
    printf("\r\x1b[K[%d/%d]%s  elapsed %.0fs", r->step, r->total_steps, metrics, r->elapsed);
    if (isfinite(r->eta))
        printf("  ETA %.0fs", r->eta);
    fflush(stdout);
    rp->line_open = 1;
}

void singa_lua_report_checkpoint(void *ud, int step, const char *path)
{
    const singa_lua_host *host = ((singa_lua_reporter *)ud)->opts->host;
    if (host && host->hooks.checkpoint)
        host->hooks.checkpoint(host->hooks.ud, step, path);
}
