/* Which process of the job this is: the rank and size a launcher gave it.  `singa-tui --procs N`
 * sets SINGA_RANK/SINGA_SIZE; Open MPI's mpirun, MPICH's (PMI) and Slurm's srun set their own.
 * Without any, the process is the job's only one (the embedded default).  Where rank 0 listens
 * and where the others do may come from the environment too, since they differ per machine
 * while the job's configuration must not. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

static const char *const launchers[][2] = {
    {"SINGA_RANK", "SINGA_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS"},
};

static int read_count(const char *name, long min, long *out, singa_err *err)
{
    const char *v = getenv(name);
    char *end;
    errno = 0;
    long n = v ? strtol(v, &end, 10) : -1;
    if (!v || errno || end == v || *end || n < min || n > 65535)
        return singa_err_set(err, "launcher: $%s = '%s' is not a process count or rank", name, v ? v : "");
    *out = n;
    return 0;
}

int singa_launch_rank(int *rank, int *size, const char **from, singa_err *err)
{
    *rank = 0, *size = 1, *from = "no launcher";
    for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++) {
        if (!getenv(launchers[i][0]))
            continue;
        long r = 0, n = 0;
        if (read_count(launchers[i][0], 0, &r, err) < 0 || read_count(launchers[i][1], 1, &n, err) < 0)
            return -1;
        if (r >= n)
            return singa_err_set(err, "launcher: rank %ld from $%s is not below the size %ld from $%s", r,
                                 launchers[i][0], n, launchers[i][1]);
        *rank = (int)r, *size = (int)n, *from = launchers[i][0];
        break;
    }
    return 0;
}

int rt_launch_read(rt_launch *l, const singa_cluster *c, singa_err *err)
{
    *l = (rt_launch){0};
    if (singa_launch_rank(&l->rank, &l->size, &l->from, err) < 0)
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
