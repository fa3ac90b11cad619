/* The planner's table (singa-tui --plan) and its JSON lines (--plan-out). */
#include <stdio.h>
#include <string.h>

#include "singa/plan.h"

int singa_plan_print(const singa_plan *plan, FILE *f)
{
    const singa_plan_profile *p = &plan->profile;
    fprintf(f, "plan for %d process%s, link %s (%.1f MB/s, %.0f us%s); profile: batch %d, %d layers, %.2f ms a step "
            "over %d steps in one process\n", plan->nprocs, plan->nprocs == 1 ? "" : "es", plan->link.name,
            plan->link.bandwidth / 1e6, plan->link.latency * 1e6, plan->link.measured ? ", measured" : "", p->batch,
            p->nlayers, 1e3 * p->step, p->steps);
    if (p->cut_procs > 0)
        fprintf(f, "the feature cut timed among %d workers of one process: %.2f ms a step\n", p->cut_procs, 1e3 * p->cut);
    const singa_plan_link *l = &plan->link;
    if (l->per_nic > 1)
        fprintf(f, "%d processes a host over %d hosts (--hosts), %d core%s a host; within a host link local (%.1f MB/s, "
                "%.0f us)\n", l->per_nic, (plan->nprocs + l->per_nic - 1) / l->per_nic, p->machine.cores,
                p->machine.cores == 1 ? "" : "s", l->local_bandwidth / 1e6, l->local_latency * 1e6);
    if (plan->why_none[0])
        fprintf(f, "no distributed configuration: %s\n", plan->why_none);
    fprintf(f, "\n%-4s %-26s %9s %10s %12s %11s %9s\n", "rank", "configuration", "step ms", "images/s", "wire MB/step",
            "memory MB", "bound");
    for (int i = 0; i < plan->nrows; i++) {
        const singa_plan_row *r = &plan->rows[i];
        fprintf(f, "%-4d %-26s %9.2f %10.1f %12.3f %11.1f %9s\n", i + 1, r->cfg.name, 1e3 * r->pred.step,
                r->pred.images_per_sec, r->pred.wire_bytes / 1e6, r->pred.memory_bytes / 1e6, r->pred.bound);
    }
    fprintf(f, "\nthe Lua of each, to put in the job:\n");
    for (int i = 0; i < plan->nrows; i++)
        fprintf(f, "-- %d. %s\n%s\n", i + 1, plan->rows[i].cfg.name, plan->rows[i].lua);
    return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

int singa_plan_write_jsonl(const singa_plan *plan, FILE *f)
{
    for (int i = 0; i < plan->nrows; i++) {
        const singa_plan_row *r = &plan->rows[i];
        fprintf(f, "{\"rank\":%d,\"name\":", i + 1);
        json_string(f, r->cfg.name);
        fprintf(f, ",\"processes\":%d,\"cluster\":", r->cfg.scheme == SINGA_PLAN_ONE ? 1 : r->cfg.nprocs);
        json_string(f, r->lua);
        fprintf(f, ",\"images_per_sec\":%.6g,\"step_seconds\":%.6g,\"wire_bytes\":%.0f,\"memory_bytes\":%.0f,"
                "\"compute_seconds\":%.6g,\"transfer_seconds\":%.6g,\"bubble_seconds\":%.6g,\"codec_seconds\":%.6g,"
                "\"stub_seconds\":%.6g,\"bound\":\"%s\",\"link\":", r->pred.images_per_sec, r->pred.step,
                r->pred.wire_bytes, r->pred.memory_bytes, r->pred.compute, r->pred.transfer, r->pred.bubble,
                r->pred.codec, r->pred.stub, r->pred.bound);
        json_string(f, plan->link.name);
        fputs("}\n", f);
    }
    return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
