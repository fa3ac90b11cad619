/* Which process of a job this is, as its launcher says (singa/cluster.h): `singa-tui --procs`,
 * Open MPI, PMI or Slurm.  The cluster's topology fits itself to it (train/cluster.c) and the
 * runtime places its threads by it (runtime/topology.c), so it lies below both. */
#include <errno.h>
#include <stdlib.h>

#include "core/launch.h"
#include "singa/cluster.h"

static const char *const launchers[][2] = {
    {"SINGA_RANK", "SINGA_SIZE"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"PMI_RANK", "PMI_SIZE"},
    {"SLURM_PROCID", "SLURM_NTASKS"},
};

int singa_launch_count(const char *name, long min, long *out, singa_err *err)
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
        if (singa_launch_count(launchers[i][0], 0, &r, err) < 0 || singa_launch_count(launchers[i][1], 1, &n, err) < 0)
            return -1;
        if (r >= n)
            return singa_err_set(err, "launcher: rank %ld from $%s is not below the size %ld from $%s", r,
                                 launchers[i][0], n, launchers[i][1]);
        *rank = (int)r, *size = (int)n, *from = launchers[i][0];
        break;
    }
    return 0;
}

int singa_launch_restart(int *restart, const char **lost, singa_err *err)
{
    long n = 0;
    *restart = 0;
    *lost = getenv("SINGA_RESTART_LOST") ? getenv("SINGA_RESTART_LOST") : "";
    if (getenv("SINGA_RESTART") && singa_launch_count("SINGA_RESTART", 0, &n, err) < 0)
        return -1;
    *restart = (int)n;
    return 0;
}
