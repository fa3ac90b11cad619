/* Bounded staleness (cluster.staleness = s): the steps each worker group has finished, as one
 * stub knows them, and the floor they set, the fewest any live group has finished.  A group
 * starts step t only once the floor reaches t - s - 1.  Each group's leader reports a finished
 * step to its stub as it starts the next (after its record of it, so a record never trails what
 * it let others do), which passes it to every other stub; each stub tells its workers when the
 * floor rises.  A group that ends, or is lost with its process, counts as finished for ever, so
 * it leaves the bound rather than stall the others. */
#include <limits.h>
#include <stdlib.h>

#include "runtime/runtime.h"

struct rt_bound {
    int ngroups;
    int *done; /* per group: its last finished step (INT_MAX: gone) */
    int floor;
};

rt_bound *rt_bound_new(int ngroups, int start)
{
    rt_bound *b = calloc(1, sizeof *b);
    if (!b || !(b->done = malloc((size_t)ngroups * sizeof *b->done))) {
        free(b);
        return NULL;
    }
    b->ngroups = ngroups;
    b->floor = start - 1;
    for (int g = 0; g < ngroups; g++)
        b->done[g] = start - 1;
    return b;
}

void rt_bound_free(rt_bound *b)
{
    if (b)
        free(b->done);
    free(b);
}

bool rt_bound_note(rt_bound *b, int g, int step)
{
    if (step <= b->done[g])
        return false;
    b->done[g] = step;
    int floor = INT_MAX;
    for (int i = 0; i < b->ngroups; i++)
        floor = b->done[i] < floor ? b->done[i] : floor;
    bool rose = floor > b->floor;
    b->floor = floor;
    return rose;
}

int rt_bound_floor(const rt_bound *b) { return b->floor; }

int rt_bound_done(const rt_bound *b, int g) { return b->done[g]; }
