/* Building a NeuralNet: pick the layers of a phase, resolve srclayer names, order the graph
 * topologically, then set layers up in that order so shapes flow from sources to destinations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/trace.h"
#include "layers/param_state.h"
#include "net/layer_ctx.h"
#include "net/parts.h"
#include "net/topo.h"
#include "layers/running.h"
#include "singa/net.h"
#include "singa/partition.h"

static const singa_field net_fields[] = {
    {"layer", SINGA_FIELD_TABLES}, {"partition_dim", SINGA_FIELD_INT},
    {"unroll_len", SINGA_FIELD_INT}, {"micro_batches", SINGA_FIELD_INT}, {NULL, 0},
};

static int phases_of(const singa_conf *lc, const char *what, unsigned *excluded, singa_err *err)
{
    static const char *const names[] = {"kTrain", "kValidation", "kTest"};
    *excluded = 0;
    for (size_t i = 0; i < singa_conf_strs_len(lc, "exclude"); i++) {
        const char *ph = singa_conf_strs_at(lc, "exclude", i);
        int k = 0;
        while (k < 3 && strcmp(ph, names[k]) != 0)
            k++;
        if (k == 3) {
            char where[200];
            snprintf(where, sizeof where, "%s: field 'exclude'", what);
            return singa_err_unknown(err, where, "phase", ph, names, 3);
        }
        *excluded |= 1u << k;
    }
    return 0;
}

static unsigned phase_bit(singa_phase phase)
{
    return phase == SINGA_PHASE_TRAIN ? 1u : phase == SINGA_PHASE_VALIDATION ? 2u : 4u;
}

static void layer_free(singa_layer *l)
{
    if (!l)
        return;
    if (l->type && l->type->destroy && l->state)
        l->type->destroy(l);
    singa_tensor_free(&l->data);
    singa_tensor_free(&l->grad);
    singa_tensor_free(&l->aux);
    free(l->state);
    for (int i = 0; i < l->nparams; i++)
        singa_param_view_free(l->params[i]); /* a view; the store frees the others */
    free(l->params);
    free(l->src);
    free(l->src_slab);
    free(l->name);
    free(l);
}

void singa_net_free(singa_net *net)
{
    if (!net)
        return;
    if (net->parts && net->location == 0)
        singa_parts_free(net->parts); /* the other locations' nets, after their threads */
    for (int i = 0; i < net->nlayers; i++)
        layer_free(net->layers[i]);
    free(net->layers);
    singa_conf_free(net->confs);
    free(net);
}

/* Reports srclayer `name` of layer `l` as missing, saying why it is not in this phase. */
static int missing_src(const singa_conf *list, const singa_layer *l, const char *name,
                       singa_phase phase, singa_err *err)
{
    const char *names[512];
    size_t n = 0;
    for (size_t i = 0; i < list->n && n < 512; i++) {
        const char *other = singa_conf_str(list->items[i], "name", NULL);
        if (!other)
            continue;
        if (strcmp(other, name) == 0)
            return singa_layer_err(l, err, "srclayer '%s' is excluded from phase %s", name,
                                   singa_phase_name(phase));
        names[n++] = other;
    }
    char what[320];
    snprintf(what, sizeof what, "layer '%s' (%s)", l->name, l->type->name);
    return singa_err_unknown(err, what, "srclayer", name, names, n);
}

/* Whether source k of l orders the graph: back edges (singa_layer_type.back_src) do not. */
static bool orders(const singa_layer *l, int k)
{
    return !l->type->back_src || !l->type->back_src(l, l->src[k]);
}

static int index_in(const singa_net *net, const singa_layer *l)
{
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i] == l)
            return i;
    return -1;
}

/* The net as singa_topo_sort sees it (topo.h): its layers in declaration order, and for each its
 * pass, the first in which a scan of the layers in that order finds its sources placed. */
typedef struct net_graph {
    const singa_net *net;
    long *pass;
} net_graph;

static int net_nsrc(void *ud, int i) { return ((const net_graph *)ud)->net->layers[i]->nsrc; }

static int net_src(void *ud, int i, int k)
{
    const singa_net *net = ((const net_graph *)ud)->net;
    return orders(net->layers[i], k) ? index_in(net, net->layers[i]->src[k]) : -1;
}

static long net_pass(void *ud, int i)
{
    net_graph *g = ud;
    long pass = 0;
    for (int k = 0; k < net_nsrc(ud, i); k++) {
        int s = net_src(ud, i, k);
        if (s >= 0 && g->pass[s] + (s > i) > pass) /* a source after it: placed in a later scan */
            pass = g->pass[s] + (s > i);
    }
    return g->pass[i] = pass;
}

/* The error for layers left over by the sort (not placed): they lie on a cycle or after one.
 * Walking sources from the first one left must come back to a layer already seen: that loop is
 * the cycle to report. */
static int report_cycle(const singa_net *net, const bool *placed, singa_err *err)
{
    int n = net->nlayers, *seen_at = calloc((size_t)n, sizeof *seen_at), len = 0;
    singa_layer *cur = NULL, **path = malloc((size_t)n * sizeof *path);
    for (int i = 0; i < n && !cur; i++)
        if (!placed[i])
            cur = net->layers[i];
    while (seen_at && path && cur) {
        int idx = index_in(net, cur);
        if (seen_at[idx])
            break;
        seen_at[idx] = ++len;
        path[len - 1] = cur;
        singa_layer *next = NULL;
        for (int k = 0; k < cur->nsrc && !next; k++)
            for (int j = 0; j < n; j++)
                if (net->layers[j] == cur->src[k] && !placed[j] && orders(cur, k))
                    next = cur->src[k];
        cur = next;
    }
    char cyc[512] = "";
    if (cur && path && seen_at) {
        int idx = index_in(net, cur);
        /* path runs destination -> source; print it source -> destination */
        for (int i = len - 1; i >= seen_at[idx] - 1; i--)
            singa_appendf(cyc, sizeof cyc, "'%s' -> ", path[i]->name);
        singa_appendf(cyc, sizeof cyc, "'%s'", path[len - 1]->name);
    }
    free(seen_at);
    free(path);
    return singa_err_set(err, "the layers form a cycle through srclayer: %s", cyc);
}

/* Orders the layers by scans in declaration order, each placing the layers whose sources are
 * placed: that keeps the order stable and close to what was written. */
static int toposort(singa_net *net, singa_err *err)
{
    int n = net->nlayers, *order = malloc(((size_t)n + 1) * sizeof *order);
    bool *placed = malloc(((size_t)n + 1) * sizeof *placed);
    net_graph ng = {net, malloc(((size_t)n + 1) * sizeof *ng.pass)};
    singa_topo_graph g = {&ng, net_nsrc, net_src, net_pass};
    int done = order && placed && ng.pass ? singa_topo_sort(n, &g, order, placed) : -1;
    free(ng.pass);
    if (done < 0) {
        free(order);
        free(placed);
        return singa_err_set(err, "out of memory");
    }
    int rc = 0;
    if (done < n) {
        rc = report_cycle(net, placed, err);
    } else {
        singa_layer **sorted = malloc(((size_t)n + 1) * sizeof *sorted);
        if (!sorted)
            rc = singa_err_set(err, "out of memory");
        for (int i = 0; sorted && i < n; i++)
            sorted[i] = net->layers[order[i]];
        if (sorted)
            memcpy(net->layers, sorted, (size_t)n * sizeof *sorted);
        free(sorted);
    }
    free(placed);
    free(order);
    return rc;
}

/* Layer i of the list: checks its name and finds its type, or NULL with err set; `what` names
 * it for messages ("layer 3 'fc1'"). */
static const singa_layer_type *type_of(const singa_conf *lc, size_t i, const singa_registry *reg, char *what,
                                       size_t whatlen, singa_err *err)
{
    const char *name = singa_conf_str(lc, "name", NULL), *type = singa_conf_str(lc, "type", NULL);
    snprintf(what, whatlen, "layer %zu%s%s%s", i + 1, name ? " '" : "", name ? name : "", name ? "'" : "");
    const singa_conf *nv = singa_conf_get(lc, "name"), *tv = singa_conf_get(lc, "type");
    if (!nv || nv->kind != SINGA_CONF_STR || !*nv->str) {
        singa_err_set(err, "%s: field 'name' is required (a non-empty string)", what);
        return NULL;
    }
    if (strlen(nv->str) > SINGA_NAME_MAX) {
        singa_err_set(err, "layer %zu: field 'name' is longer than %d characters", i + 1, SINGA_NAME_MAX);
        return NULL;
    }
    if (!tv || tv->kind != SINGA_CONF_STR) {
        singa_err_set(err, "%s: field 'type' is required (a string such as \"kInnerProduct\")", what);
        return NULL;
    }
    const singa_layer_type *lt = singa_registry_find(reg, type);
    if (!lt) {
        const char *names[256];
        size_t n = singa_registry_names(reg, names, 256);
        singa_err_unknown(err, what, "layer type", type, names, n);
    }
    return lt;
}

/* The copies of layer conf lc (unrolled in time when more than one), at the end of the net. */
static int add_copies(singa_net *net, const singa_conf *lc, const singa_layer_type *lt, const char *name, int copies,
                      int *cap, singa_err *err)
{
    if (net->nlayers + copies > *cap) {
        *cap = 2 * (net->nlayers + copies);
        singa_layer **grown = realloc(net->layers, (size_t)*cap * sizeof *grown);
        if (!grown)
            return singa_err_set(err, "out of memory");
        net->layers = grown;
    }
    for (int c = 0; c < copies; c++) {
        singa_layer *l = calloc(1, sizeof *l);
        char copy[SINGA_NAME_MAX + 16];
        snprintf(copy, sizeof copy, copies > 1 ? "%s#%d" : "%s", name, c);
        if (!l || !(l->name = strdup(copy)) || (lt->state_size && !(l->state = calloc(1, lt->state_size)))) {
            layer_free(l);
            return singa_err_set(err, "out of memory");
        }
        l->type = lt;
        l->conf = lc;
        l->net = net;
        l->ctx = net->layer_ctx;
        l->unroll_index = c;
        l->unroll_len = copies;
        l->unroll_first = c ? net->layers[net->nlayers - c] : l;
        net->layers[net->nlayers++] = l;
    }
    return 0;
}

static int add_layers(singa_net *net, const singa_conf *netconf, const singa_conf *list,
                      const singa_registry *reg, singa_err *err)
{
    int cap = (int)list->n + 1, net_unroll = singa_conf_int(netconf, "unroll_len", 1);
    if (net_unroll < 1)
        return singa_err_set(err, "neuralnet: field 'unroll_len' must be at least 1");
    if (!(net->layers = calloc((size_t)cap, sizeof *net->layers)))
        return singa_err_set(err, "out of memory");
    for (size_t i = 0; i < list->n; i++) {
        const singa_conf *lc = list->items[i];
        char what[160];
        const singa_layer_type *lt = type_of(lc, i, reg, what, sizeof what, err);
        if (!lt)
            return -1;
        const char *name = singa_conf_str(lc, "name", NULL);
        snprintf(what, sizeof what, "layer '%s' (%s)", name, singa_conf_str(lc, "type", NULL));
        const singa_field *const schemas[] = {singa_layer_common_fields, lt->fields, NULL};
        unsigned excluded;
        if (singa_conf_check(lc, schemas, what, err) < 0 || phases_of(lc, what, &excluded, err) < 0)
            return -1;
        if (excluded & phase_bit(net->phase))
            continue;
        if ((lt->flags & SINGA_LAYER_INPUT) && !(lt->flags & SINGA_LAYER_SPLITS) && net->split.count > 1)
            return singa_err_set(err, "%s: this input layer cannot split its batch over the %d workers of a group "
                                      "(set nworkers_per_group = 1)", what, net->split.count);
        for (int j = 0; j < net->nlayers; j++)
            if (strcmp(singa_conf_str(net->layers[j]->conf, "name", ""), name) == 0)
                return singa_err_set(err, "%s: the name is used by another layer in phase %s (exclude one of them from this phase)",
                                     what, singa_phase_name(net->phase));
        /* Input layers hold whole sequences and are never copied. */
        int copies = lt->flags & SINGA_LAYER_INPUT ? 1 : singa_conf_int(lc, "unroll_len", net_unroll);
        if (copies < 1)
            return singa_err_set(err, "%s: field 'unroll_len' must be at least 1", what);
        if (add_copies(net, lc, lt, name, copies, &cap, err) < 0)
            return -1;
    }
    return 0;
}

/* The copies of the layer named `name` in the layer list: the first, and how many. */
static singa_layer *find_copies(const singa_net *net, const char *name, int *count)
{
    for (int i = 0; i < net->nlayers; i++) {
        singa_layer *l = net->layers[i];
        if (l->unroll_index == 0 && strcmp(singa_conf_str(l->conf, "name", ""), name) == 0) {
            *count = l->unroll_len;
            return l;
        }
    }
    return NULL;
}

static int connect(singa_net *net, const singa_conf *list, singa_err *err)
{
    for (int i = 0; i < net->nlayers; i++) {
        singa_layer *l = net->layers[i];
        int n = (int)singa_conf_strs_len(l->conf, "srclayer");
        if (n < l->type->min_src || (l->type->max_src >= 0 && n > l->type->max_src)) {
            if (l->type->min_src == l->type->max_src)
                return singa_layer_err(l, err, "needs %d source layer%s in 'srclayer', got %d",
                                       l->type->min_src, l->type->min_src == 1 ? "" : "s", n);
            return singa_layer_err(l, err, "needs at least %d source layers in 'srclayer', got %d",
                                   l->type->min_src, n);
        }
        bool recurrent = (l->type->flags & SINGA_LAYER_RECURRENT) && l->unroll_index > 0;
        if ((n || recurrent) && !(l->src = calloc((size_t)n + 1, sizeof *l->src)))
            return singa_err_set(err, "out of memory");
        for (int k = 0; k < n; k++) {
            const char *sname = singa_conf_strs_at(l->conf, "srclayer", (size_t)k);
            int copies;
            singa_layer *src = find_copies(net, sname, &copies);
            if (!src)
                return missing_src(list, l, sname, net->phase, err);
            if (src == l->unroll_first)
                return singa_layer_err(l, err, "lists itself as a srclayer");
            /* Unrolled copies connect one-to-one; a single layer feeds every copy (one-to-all);
             * a single layer reading an unrolled one reads its last copy (first-to-last). */
            if (copies > 1 && l->unroll_len > 1 && copies != l->unroll_len)
                return singa_layer_err(l, err, "is unrolled %d times but its srclayer '%s' %d times",
                                       l->unroll_len, sname, copies);
            if (copies > 1) { /* copies sit next to each other until the net is sorted */
                int at = 0;
                while (net->layers[at] != src)
                    at++;
                src = net->layers[at + (l->unroll_len > 1 ? l->unroll_index : copies - 1)];
            }
            l->src[l->nsrc++] = src;
        }
        if (recurrent) { /* the state of the previous step */
            int at = 0;
            while (net->layers[at] != l)
                at++;
            l->src[l->nsrc++] = net->layers[at - 1];
        }
    }
    return 0;
}

/* Sets layer l up, its sources already set up. */
static int setup_layer(singa_layer *l, singa_err *err)
{
    singa_phase phase = l->net->phase;
    for (int k = 0; k < l->nsrc && phase == SINGA_PHASE_TRAIN; k++)
        l->needs_grad |= l->src[k]->needs_grad;
    singa_running before = singa_running_enter(l, "setup", NULL);
    int rc = l->type->setup(l, err);
    singa_running_leave(before);
    if (rc < 0)
        return -1;
    if (phase == SINGA_PHASE_TRAIN && l->nparams > 0 && !l->needs_grad) {
        l->needs_grad = true;
        if (singa_tensor_init_like(&l->grad, &l->data, err) < 0)
            return singa_err_prefix(err, "layer '%s': ", l->name);
    }
    const singa_conf *plist = singa_conf_get(l->conf, "param");
    if (plist && (int)plist->n > l->nparams)
        return singa_layer_err(l, err, "field 'param' lists %zu params but this layer has %d", plist->n,
                               l->nparams);
    return 0;
}

static int setup_layers(singa_net *net, singa_err *err)
{
    singa_net_ctx_sync(net);
    for (int i = 0; i < net->nlayers; i++)
        if (setup_layer(net->layers[i], err) < 0)
            return -1;
    return 0;
}

static int create(singa_net **out, const singa_conf *netconf, singa_phase phase, const singa_registry *reg,
                  singa_params *params, singa_rng *rng, uint64_t seed, const singa_net_split *split, bool shapes,
                  singa_err *err)
{
    *out = NULL;
    const singa_field *const schemas[] = {net_fields, NULL};
    if (singa_conf_check(netconf, schemas, "neuralnet", err) < 0)
        return -1;
    const singa_conf *list = singa_conf_get(netconf, "layer");
    if (!list || list->n == 0)
        return singa_err_set(err, "neuralnet: field 'layer' must list at least one layer");
    singa_net *net = singa_net_alloc();
    if (!net)
        return singa_err_set(err, "out of memory");
    net->phase = phase;
    net->params = params;
    net->rng = rng;
    net->seed = seed;
    net->split = split ? *split : (singa_net_split){0, 1, 0, 1};
    net->location = -1;
    if (shapes)
        singa_net_ctx_shapes_only(net);
    if (add_layers(net, netconf, list, reg, err) < 0 || connect(net, list, err) < 0 ||
        toposort(net, err) < 0 || setup_layers(net, err) < 0) {
        singa_net_free(net);
        return -1;
    }
    *out = net;
    return 0;
}

int singa_net_create(singa_net **out, const singa_conf *netconf, singa_phase phase,
                     const singa_registry *reg, singa_params *params, singa_rng *rng,
                     uint64_t seed, const singa_net_split *split, singa_err *err)
{
    return create(out, netconf, phase, reg, params, rng, seed, split, false, err);
}

int singa_net_create_shapes(singa_net **out, const singa_conf *netconf, singa_phase phase, const singa_registry *reg,
                            singa_params *params, singa_rng *rng, singa_err *err)
{
    return create(out, netconf, phase, reg, params, rng, 1, NULL, true, err);
}

/* Adds v under key (NULL in a list), freeing it when it cannot. */
static int put(singa_conf *t, const char *key, singa_conf *v)
{
    if (v && singa_conf_add(t, key, v) == 0)
        return 0;
    singa_conf_free(v);
    return -1;
}

/* A connection node's layer conf, kept in net->confs. */
static const singa_conf *connection_conf(singa_net *net, const singa_node *n)
{
    singa_conf *c = singa_conf_new(SINGA_CONF_TABLE);
    if (put(net->confs, NULL, c) < 0 || put(c, "name", singa_conf_new_str(n->name)) < 0 ||
        put(c, "type", singa_conf_new_str(n->type)) < 0)
        return NULL;
    if (n->role == SINGA_NODE_SLICE && (put(c, "slice_dim", singa_conf_new_num(n->dim)) < 0 ||
                                        put(c, "num_slices", singa_conf_new_num(n->nparts)) < 0))
        return NULL;
    if (n->role == SINGA_NODE_CONCATE && put(c, "concate_dim", singa_conf_new_num(n->dim)) < 0)
        return NULL;
    return c;
}

/* A graph's nets: one with every node, or one per location (nodes[i] lives in nets[net_of(i)]). */
typedef struct graph_nets {
    const singa_graph *g;
    singa_net **nets;
    int nnets;
    int *at; /* node -> its layer's index in its net */
    singa_net **first; /* a pipeline's copy 0's nets, when these are another copy's; else NULL */
} graph_nets;

static singa_net *net_of(const graph_nets *gn, int node)
{
    return gn->nets[gn->nnets > 1 ? gn->g->nodes[node].location : 0];
}

/* The layer of node i, its sources already in their nets. */
static int add_node_layer(graph_nets *gn, int i, const singa_registry *reg, singa_err *err)
{
    const singa_graph *g = gn->g;
    singa_net *net = net_of(gn, i);
    const singa_node *n = &g->nodes[i];
    const singa_graph_layer *gl = &g->layers[n->layer];
    bool part = n->role == SINGA_NODE_LAYER;
    const singa_conf *conf = part ? gl->conf : connection_conf(net, n);
    const singa_layer_type *lt = singa_registry_find(reg, n->type);
    if (!conf)
        return singa_err_set(err, "out of memory");
    if (!lt)
        return singa_err_set(err, "node '%s': layer type '%s' is not registered", n->name, n->type);
    singa_layer *l = calloc(1, sizeof *l);
    if (!l || !(l->name = strdup(n->name)) || (lt->state_size && !(l->state = calloc(1, lt->state_size))) ||
        (n->nsrc && !(l->src = calloc((size_t)n->nsrc, sizeof *l->src)))) {
        layer_free(l);
        return singa_err_set(err, "out of memory");
    }
    gn->at[i] = net->nlayers;
    net->layers[net->nlayers++] = l;
    l->type = lt;
    l->conf = conf;
    l->net = net;
    l->ctx = net->layer_ctx;
    l->part.dim = part ? n->dim : -1;
    l->part.index = n->part;
    l->part.count = part ? n->nparts : 1;
    l->unroll_index = part ? gl->unroll_index : 0;
    l->unroll_len = part ? gl->unroll_len : 1;
    l->unroll_first = l;
    for (int j = 0; j < i && l->unroll_index > 0; j++) /* copy 0's part of the same index */
        if (g->nodes[j].role == SINGA_NODE_LAYER && g->nodes[j].layer == gl->unroll_first && g->nodes[j].part == n->part)
            l->unroll_first = net_of(gn, j)->layers[gn->at[j]];
    for (int e = 0; e < n->nsrc; e++) {
        const singa_node_src *src = &n->src[e];
        if (src->slab >= 0 && !l->src_slab && !(l->src_slab = calloc((size_t)n->nsrc, sizeof *l->src_slab)))
            return singa_err_set(err, "out of memory");
        if (l->src_slab)
            l->src_slab[e] = src->slab;
        l->src[l->nsrc++] = net_of(gn, src->node)->layers[gn->at[src->node]];
    }
    return 0;
}

/* Builds gn's nets from its graph, setting every layer up in the graph's order (so a bridge's
 * destination sees its source's shape, and params are declared and drawn from rng in the same
 * order however many nets there are). */
static int build_graph_nets(graph_nets *gn, const singa_registry *reg, singa_params *params, singa_rng *rng,
                            uint64_t seed, const singa_net_split *split, singa_err *err)
{
    const singa_graph *g = gn->g;
    if (!(gn->at = malloc((size_t)g->nnodes * sizeof *gn->at)))
        return singa_err_set(err, "out of memory");
    for (int k = 0; k < gn->nnets; k++) {
        singa_net *net = gn->nets[k] = singa_net_alloc();
        if (!net || !(net->layers = calloc((size_t)g->nnodes, sizeof *net->layers)) ||
            !(net->confs = singa_conf_new(SINGA_CONF_LIST)))
            return singa_err_set(err, "out of memory");
        net->phase = g->phase;
        net->params = params;
        net->rng = rng;
        net->seed = seed;
        net->split = split ? *split : (singa_net_split){0, 1, 0, 1};
        net->location = gn->nnets > 1 ? k : -1;
        singa_net_ctx_first(net, gn->first ? gn->first[k] : NULL);
    }
    for (int i = 0; i < g->nnodes; i++) /* the graph's order computes sources first */
        if (add_node_layer(gn, i, reg, err) < 0)
            return -1;
    for (int k = 0; k < gn->nnets; k++)
        singa_net_ctx_sync(gn->nets[k]);
    for (int i = 0; i < g->nnodes; i++)
        if (setup_layer(net_of(gn, i)->layers[gn->at[i]], err) < 0)
            return -1;
    return 0;
}

int singa_net_create_graph(singa_net **out, const singa_graph *g, const singa_registry *reg, singa_params *params,
                           singa_rng *rng, uint64_t seed, const singa_net_split *split, singa_err *err)
{
    graph_nets gn = {.g = g, .nets = out, .nnets = 1};
    *out = NULL;
    int rc = build_graph_nets(&gn, reg, params, rng, seed, split, err);
    free(gn.at);
    if (rc < 0) {
        singa_net_free(*out);
        *out = NULL;
    }
    return rc;
}

int singa_net_create_pipeline(singa_net **out, const singa_graph *g, int m, const singa_registry *reg,
                              singa_params *params, singa_rng *rng, uint64_t seed, const singa_net_split *split,
                              singa_err *err)
{
    *out = NULL;
    int n = g->nworkers, rc = m > 1 ? singa_pipeline_check(g, m, split ? split->count : 1, err) : 0;
    singa_net **nets = rc == 0 ? calloc((size_t)n * (size_t)m, sizeof *nets) : NULL;
    if (rc == 0 && !nets)
        rc = singa_err_set(err, "out of memory");
    for (int j = 0; j < m && rc == 0; j++) { /* copy j reads micro-batch j of every batch */
        singa_net_split whole = split ? *split : (singa_net_split){0, 1, 0, 1};
        singa_net_split part = {whole.index * m + j, whole.count * m, whole.group, whole.ngroups};
        graph_nets gn = {.g = g, .nets = nets + j * n, .nnets = n, .first = j ? nets : NULL};
        rc = build_graph_nets(&gn, reg, params, rng, seed, m > 1 ? &part : split, err);
        free(gn.at);
    }
    if (rc == 0)
        rc = singa_parts_start(nets, n, m, err);
    if (rc < 0) {
        for (int x = 0; nets && x < n * m; x++)
            singa_net_free(nets[x]);
        free(nets);
        return -1;
    }
    *out = nets[0]; /* its parts own the others and the array */
    return 0;
}

int singa_net_create_parts(singa_net **out, const singa_graph *g, const singa_registry *reg, singa_params *params,
                           singa_rng *rng, uint64_t seed, const singa_net_split *split, singa_err *err)
{
    return singa_net_create_pipeline(out, g, 1, reg, params, rng, seed, split, err);
}

singa_layer *singa_net_find(const singa_net *net, const char *name)
{
    for (int i = 0; i < net->nlayers; i++)
        if (strcmp(net->layers[i]->name, name) == 0)
            return net->layers[i];
    return NULL;
}

int singa_net_batchsize(const singa_net *net)
{
    if (net->parts && net->location == 0)
        return singa_parts_batchsize(net->parts);
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i]->type->flags & SINGA_LAYER_INPUT)
            return singa_layer_batch(net->layers[i]);
    return 0;
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int singa_net_forward_layers(singa_net *net, singa_err *err)
{
    singa_net_ctx_sync(net);
    for (int i = 0; i < net->nlayers; i++) {
        singa_layer *l = net->layers[i];
        if (net->parts && singa_parts_wait(net->parts, net, i, false, err) < 0)
            return -1;
        for (int k = 0; k < l->nparams; k++)
            if (singa_param_want(l->params[k], err) < 0)
                return -1;
        double t0 = net->profile || net->trace ? seconds() : 0;
        singa_running before = singa_running_enter(l, "forward", NULL);
        int rc = l->type->forward(l, net->phase, err);
        singa_running_leave(before);
        if (rc < 0)
            return -1;
        if (net->profile)
            l->forward_seconds += seconds() - t0;
        if (net->trace)
            singa_trace_span(net->trace, "forward", l->name, t0, seconds());
        if (net->progress)
            atomic_fetch_add_explicit(net->progress, 1, memory_order_relaxed);
        if (net->parts)
            singa_parts_signal(net->parts, net, i, false);
    }
    return 0;
}

int singa_net_forward(singa_net *net, singa_err *err)
{
    singa_metrics_reset(&net->metrics);
    net->profiled_passes += net->profile;
    return net->parts ? singa_parts_pass(net->parts, false, err) : singa_net_forward_layers(net, err);
}

void singa_net_backward_begin(singa_net *net)
{
    for (int i = 0; i < net->nlayers; i++) {
        net->layers[i]->grad_written = false;
        for (int k = 0; k < net->layers[i]->nparams; k++) {
            singa_param_view *v = singa_param_view_of(net->layers[i]->params[k]);
            if (v)
                singa_param_state_of(v->whole)->claimed = false;
        }
    }
    for (int i = net->nlayers - 1; i >= 0; i--) /* parts' views, in the order they will write */
        for (int k = 0; k < net->layers[i]->nparams; k++)
            if (singa_param_view_of(net->layers[i]->params[k]))
                singa_param_view_begin(net->layers[i]->params[k]);
}

int singa_net_backward_layers(singa_net *net, singa_err *err)
{
    singa_net_ctx_sync(net);
    for (int i = net->nlayers - 1; i >= 0; i--) {
        singa_layer *l = net->layers[i];
        if (net->parts && singa_parts_wait(net->parts, net, i, true, err) < 0)
            return -1;
        if (l->needs_grad && l->type->backward) {
            double t0 = net->profile || net->trace ? seconds() : 0;
            if (!l->grad_written && !(l->type->flags & SINGA_LAYER_LOSS) && l->grad.data)
                singa_tensor_fill(&l->grad, 0.0f); /* no destination contributed */
            singa_running before = singa_running_enter(l, "backward", NULL);
            l->type->backward(l);
            singa_running_leave(before);
            if (net->profile)
                l->backward_seconds += seconds() - t0;
            if (net->trace)
                singa_trace_span(net->trace, "backward", l->name, t0, seconds());
            if (net->progress)
                atomic_fetch_add_explicit(net->progress, 1, memory_order_relaxed);
        }
        if (net->parts)
            singa_parts_signal(net->parts, net, i, true);
    }
    return 0;
}

int singa_net_backward(singa_net *net, singa_err *err)
{
    if (net->parts)
        return singa_parts_pass(net->parts, true, err);
    singa_net_backward_begin(net);
    return singa_net_backward_layers(net, err);
}

int singa_net_forward_backward(singa_net *net, singa_err *err)
{
    if (!net->parts || singa_parts_micro_batches(net->parts) == 1)
        return singa_net_forward(net, err) < 0 ? -1 : singa_net_backward(net, err);
    singa_metrics_reset(&net->metrics);
    net->profiled_passes += net->profile;
    return singa_parts_step(net->parts, err);
}
