/* Writing a metrics file: what read.c reads back (the format is described there). */
#include <math.h>

#include "metricsfile/metricsfile.h"

void singa_metrics_file_header(FILE *f, bool csv)
{
    if (csv)
        fputs("step,phase,group,loss,accuracy,images_per_sec,seconds\n", f);
}

void singa_metrics_file_workers(FILE *f, int step, const singa_stats *stats)
{
    singa_worker_time w[64];
    int n = singa_stats_workers(stats, w, 64);
    if (n <= 0)
        return;
    fprintf(f, "{\"step\": %d, \"workers\": [", step);
    for (int i = 0; i < n && i < 64; i++)
        fprintf(f, "%s{\"rank\": %d, \"host\": \"%s\", \"group\": %d, \"id\": %d, \"compute\": %.6g, \"send\": %.6g, "
                   "\"wait\": %.6g, \"bridge\": %.6g, \"straggler\": %s, \"share\": %.3g}",
                i ? ", " : "", w[i].rank, w[i].host, w[i].group, w[i].id, w[i].compute, w[i].send, w[i].wait,
                w[i].bridge, w[i].straggler ? "true" : "false", w[i].share);
    fputs("]}\n", f);
}

/* A number of a record: empty (CSV) or null (JSON) when not finite, so files stay parseable. */
static void metric_text(char *buf, size_t len, double v, const char *fmt)
{
    buf[0] = 0;
    if (isfinite(v))
        snprintf(buf, len, fmt, v);
}

void singa_metrics_file_record(FILE *f, bool csv, const singa_record *r, const char *phase, double loss, double acc)
{
    char l_s[32], a_s[32], i_s[32], s_s[32];
    metric_text(l_s, sizeof l_s, loss, "%.6g");
    metric_text(a_s, sizeof a_s, acc, "%.6g");
    metric_text(i_s, sizeof i_s, r->images_per_sec, "%.6g");
    metric_text(s_s, sizeof s_s, r->seconds, "%.3f");
    if (csv)
        fprintf(f, "%d,%s,%d,%s,%s,%s,%s\n", r->step, phase, r->group, l_s, a_s, i_s, s_s);
    else
        fprintf(f, "{\"step\": %d, \"phase\": \"%s\", \"group\": %d, \"loss\": %s, \"accuracy\": %s, \"images_per_sec\": %s, "
                   "\"seconds\": %s}\n",
                r->step, phase, r->group, l_s[0] ? l_s : "null", a_s[0] ? a_s : "null", i_s[0] ? i_s : "null",
                s_s[0] ? s_s : "null");
}
