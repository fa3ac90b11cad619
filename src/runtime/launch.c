/* Which process of the job this is: the rank and size a launcher gave it (singa_launch_rank,
 * train/cluster.c, since an elastic job's topology follows the size), and whether `--procs`
 * restarted an elastic job.  Where rank 0 listens and where the others do may come from the
 * environment too, since they differ per machine while the job's configuration must not. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

int rt_launch_read(rt_launch *l, const singa_cluster *c, singa_err *err)
{
    *l = (rt_launch){0};
    if (singa_launch_rank(&l->rank, &l->size, &l->from, err) < 0 || singa_launch_restart(&l->restart, &l->lost, err) < 0)
        return -1;
    l->bind = c->bind ? c->bind : getenv("SINGA_BIND") ? getenv("SINGA_BIND") : "127.0.0.1";
    if (l->size == 1)
        return 0;
    if (c->nprocs != l->size)
        return singa_err_set(err, "cluster: the topology places its workers and servers in %d process%s, but %d "
                                  "were launched ($%s); set nworkers_per_procs/nservers_per_procs (or a preset's "
                                  "procs) to match",
                             c->nprocs, c->nprocs == 1 ? "" : "es", l->size, l->from);
    const char *coord = c->coordinator ? c->coordinator : getenv("SINGA_COORDINATOR");
    if (!coord)
        return singa_err_set(err, "cluster: process %d of %d needs the coordinator's address: set cluster.coordinator "
                                  "or $SINGA_COORDINATOR to \"tcp://host:port\" (rank 0 listens there)",
                             l->rank, l->size);
    if (strncmp(coord, "tcp://", 6) != 0 || !strchr(coord + 6, ':') || strlen(coord) >= sizeof l->coordinator)
        return singa_err_set(err, "cluster: coordinator '%s' is not an address like \"tcp://127.0.0.1:5555\"", coord);
    snprintf(l->coordinator, sizeof l->coordinator, "%s", coord);
    const char *rejoin = getenv("SINGA_REJOIN");
    l->rejoin = rejoin && *rejoin && strcmp(rejoin, "0") != 0;
    if (l->rejoin && l->rank == 0)
        return singa_err_set(err, "SINGA_REJOIN: rank 0 is the coordinator, whose loss ends the job: it cannot rejoin");
    return 0;
}
