/* The order a location's layers run in (parts.h, singa_parts_order): senders first, receivers
 * last, so the locations of a cut net never wait for each other in a circle. */
#include <stdlib.h>
#include <string.h>

#include "net/parts.h"
#include "net/topo.h"

/* Whether another location reads l (it sends) or l reads another location (it receives). */
static bool read_elsewhere(singa_net **nets, int n, const singa_layer *l)
{
    for (int k = 0; k < n; k++)
        for (int i = 0; k != l->net->location && i < nets[k]->nlayers; i++)
            for (int e = 0; e < nets[k]->layers[i]->nsrc; e++)
                if (nets[k]->layers[i]->src[e] == l)
                    return true;
    return false;
}

static bool reads_elsewhere(const singa_layer *l)
{
    for (int e = 0; e < l->nsrc; e++)
        if (l->src[e]->net != l->net)
            return true;
    return false;
}

typedef struct location_graph {
    singa_net **nets;
    int n;
    singa_net *net;
} location_graph;

static int location_nsrc(void *ud, int i) { return ((const location_graph *)ud)->net->layers[i]->nsrc; }

static int listed_at(const singa_net *net, const singa_layer *l)
{
    for (int j = 0; j < net->nlayers; j++)
        if (net->layers[j] == l)
            return j;
    return -1;
}

/* Sources here order the layers; a kSlice's slab stands for the kSlice. */
static int location_src(void *ud, int i, int e)
{
    const singa_net *net = ((const location_graph *)ud)->net;
    const singa_layer *src = net->layers[i]->src[e];
    int j = listed_at(net, src);
    if (j < 0 && src->net == net && src->nsrc == 1)
        j = listed_at(net, src->src[0]);
    return j;
}

/* 0 senders, 1 the rest, 2 receivers. */
static long location_prefer(void *ud, int i)
{
    const location_graph *g = ud;
    const singa_layer *l = g->net->layers[i];
    return reads_elsewhere(l) ? 2 : read_elsewhere(g->nets, g->n, l) ? 0 : 1;
}

/* Orders a location's layers so that it sends as early and receives as late as it can (a
 * topological order preferring senders, then the rest, then receivers, else the graph's order):
 * in the graph's one order, a worker would wait for the other's features before sending its
 * own, and the two would take turns.  Backward runs the order reversed, so gradients go back as
 * early and are awaited as late.  Every wait is then on something the graph needs first, so
 * the workers cannot wait for each other in a circle. */
int singa_parts_order(singa_net **nets, int n, singa_net *net)
{
    int m = net->nlayers, *order = malloc(((size_t)m + 1) * sizeof *order);
    bool *placed = malloc(((size_t)m + 1) * sizeof *placed);
    singa_layer **sorted = malloc(((size_t)m + 1) * sizeof *sorted);
    location_graph lg = {nets, n, net};
    singa_topo_graph g = {&lg, location_nsrc, location_src, location_prefer};
    int done = order && placed && sorted ? singa_topo_sort(m, &g, order, placed) : -1;
    if (done == m) { /* fewer cannot happen in a graph without cycles: its own order is valid */
        for (int i = 0; i < m; i++)
            sorted[i] = net->layers[order[i]];
        memcpy(net->layers, sorted, (size_t)m * sizeof *sorted);
    }
    free(order);
    free(placed);
    free(sorted);
    return done < 0 ? -1 : 0;
}
