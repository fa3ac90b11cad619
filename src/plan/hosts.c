/* Processes spread over hosts for the planner (--procs N --hosts H1,H2,...): per_nic of them on
 * each host behind one network interface.  In an exchange where each process sends a share of
 * its bytes to every other (AllReduce's slices, Hogwild's round), a process's share to the others
 * of its host goes over the local link, and the host's interface carries the shares of all its
 * processes to every process of the other hosts; both run at once, so the slower bounds, and
 * each round waits for the slowest link's latency. */
#include <math.h>

#include "plan/plan.h"

/* Processes behind one interface of n: 1 when each has its own, n when all are on one host. */
static int behind(const singa_plan_link *l, int n)
{
    return l->per_nic < 2 ? 1 : l->per_nic < n ? l->per_nic : n;
}

static bool one_host(const singa_plan_link *l, int n)
{
    return l->per_nic > 1 && l->per_nic >= n;
}

double plan_wire_seconds(const singa_plan_link *l, int n, double bytes)
{
    int k = behind(l, n);
    if (one_host(l, n))
        return (n - 1.0) / n * bytes / l->local_bandwidth;
    double across = k * (double)(n - k) / n * bytes / l->bandwidth;
    double within = k > 1 ? (k - 1.0) / n * bytes / l->local_bandwidth : 0;
    return fmax(across, within);
}

double plan_link_latency(const singa_plan_link *l, int n)
{
    if (one_host(l, n))
        return l->local_latency;
    return behind(l, n) > 1 ? fmax(l->latency, l->local_latency) : l->latency;
}

double plan_link_bandwidth(const singa_plan_link *l, int n)
{
    return one_host(l, n) ? l->local_bandwidth : l->bandwidth;
}
