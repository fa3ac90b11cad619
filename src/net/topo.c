/* The one topological sort (topo.h): Kahn's, choosing among the ready nodes by the caller's key.
 * Nets have at most a few thousand layers, so the ready set is a plain list scanned for its
 * smallest key. */
#include <stdlib.h>

#include "net/topo.h"

/* Readers of each node, grouped by source: readers[first[s] .. first[s + 1]), and each node's
 * count of sources in indeg; -1 when out of memory. */
static int index_readers(int n, const singa_topo_graph *g, int *indeg, int *first, int **readers)
{
    int nedges = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g->nsrc(g->ud, i); k++) {
            int s = g->src(g->ud, i, k);
            if (s >= 0) {
                indeg[i]++;
                first[s + 2]++;
                nedges++;
            }
        }
    for (int s = 0; s < n; s++)
        first[s + 2] += first[s + 1];
    if (!(*readers = malloc(((size_t)nedges + 1) * sizeof **readers)))
        return -1;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g->nsrc(g->ud, i); k++) {
            int s = g->src(g->ud, i, k);
            if (s >= 0)
                (*readers)[first[s + 1]++] = i;
        }
    return 0;
}

/* The ready node of the smallest key, then index: removed from ready[0..*nready). */
static int take_best(int *ready, int *nready, const long *key)
{
    int best = 0;
    for (int r = 1; r < *nready; r++) {
        int i = ready[r], b = ready[best];
        if (key[i] < key[b] || (key[i] == key[b] && i < b))
            best = r;
    }
    int u = ready[best];
    ready[best] = ready[--*nready];
    return u;
}

int singa_topo_sort(int n, const singa_topo_graph *g, int *order, bool *placed)
{
    int *indeg = calloc((size_t)n + 1, sizeof *indeg), *first = calloc((size_t)n + 2, sizeof *first);
    int *ready = malloc(((size_t)n + 1) * sizeof *ready), *readers = NULL;
    long *key = malloc(((size_t)n + 1) * sizeof *key);
    int rc = -1;
    if (!indeg || !first || !ready || !key || index_readers(n, g, indeg, first, &readers) < 0)
        goto out;
    int nready = 0, done = 0;
    for (int i = 0; i < n; i++) {
        placed[i] = false;
        if (indeg[i] == 0) {
            key[i] = g->key ? g->key(g->ud, i) : 0;
            ready[nready++] = i;
        }
    }
    while (nready > 0) {
        int u = take_best(ready, &nready, key);
        placed[u] = true;
        order[done++] = u;
        for (int e = first[u]; e < first[u + 1]; e++) {
            int i = readers[e];
            if (--indeg[i] == 0) {
                key[i] = g->key ? g->key(g->ud, i) : 0;
                ready[nready++] = i;
            }
        }
    }
    rc = done;
out:
    free(indeg);
    free(first);
    free(ready);
    free(readers);
    free(key);
    return rc;
}
