/* Named running averages (loss, accuracy, ...) reported by layers. */
#ifndef SINGA_METRICS_H
#define SINGA_METRICS_H
#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

#define SINGA_METRICS_MAX 8
#define SINGA_METRIC_NAME 24

typedef struct singa_metrics {
    int n;
    char name[SINGA_METRICS_MAX][SINGA_METRIC_NAME];
    double sum[SINGA_METRICS_MAX];
    long count[SINGA_METRICS_MAX];
} singa_metrics;

void singa_metrics_reset(singa_metrics *m);
void singa_metrics_add(singa_metrics *m, const char *name, double value);
void singa_metrics_merge(singa_metrics *into, const singa_metrics *from);
/* The average of `name`, or `def` if it was never reported. */
double singa_metrics_avg(const singa_metrics *m, const char *name, double def);

#pragma GCC visibility pop

#endif
