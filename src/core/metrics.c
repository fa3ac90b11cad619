#include <string.h>

#include "singa/metrics.h"

void singa_metrics_reset(singa_metrics *m) { memset(m, 0, sizeof *m); }

static int slot(singa_metrics *m, const char *name)
{
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->name[i], name) == 0)
            return i;
    if (m->n == SINGA_METRICS_MAX)
        return -1;
    strncpy(m->name[m->n], name, SINGA_METRIC_NAME - 1);
    return m->n++;
}

void singa_metrics_add(singa_metrics *m, const char *name, double value)
{
    int i = slot(m, name);
    if (i >= 0) {
        m->sum[i] += value;
        m->count[i]++;
    }
}

void singa_metrics_merge(singa_metrics *into, const singa_metrics *from)
{
    for (int j = 0; j < from->n; j++) {
        int i = slot(into, from->name[j]);
        if (i >= 0) {
            into->sum[i] += from->sum[j];
            into->count[i] += from->count[j];
        }
    }
}

double singa_metrics_avg(const singa_metrics *m, const char *name, double def)
{
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->name[i], name) == 0 && m->count[i] > 0)
            return m->sum[i] / (double)m->count[i];
    return def;
}
