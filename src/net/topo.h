/* The one topological sort, for the net's layers (net.c) and a location's layers (parts.c). */
#ifndef SINGA_NET_TOPO_H
#define SINGA_NET_TOPO_H

#include <stdbool.h>

/* A graph of nodes 0..n-1, as the caller holds it. */
typedef struct singa_topo_graph {
    void *ud;
    int (*nsrc)(void *ud, int i);
    /* The node that source k of node i is, or -1 when that edge orders nothing (a back edge, a
     * source outside the graph). */
    int (*src)(void *ud, int i, int k);
    /* Node i's key, asked once, when its sources are placed (so it may depend on theirs);
     * NULL: every key is 0. */
    long (*key)(void *ud, int i);
} singa_topo_graph;

/* Orders the nodes so that each comes after its sources, taking at every step, among the nodes
 * whose sources are placed, the one with the smallest key, then the smallest index: the caller's
 * order rule is its key.  Fills order[0..] and returns how many it placed, fewer than n when the
 * others lie on a cycle or after one (placed[i] says which are placed); -1 when out of memory. */
int singa_topo_sort(int n, const singa_topo_graph *g, int *order, bool *placed);

#endif
