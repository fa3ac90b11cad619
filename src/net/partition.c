/* Partitioning a net over the workers of a group (singa/partition.h).
 *
 * Each part of a layer holds a block of the layer's output matrix: all of it (unpartitioned),
 * the rows of its part (dim 0) or the columns of its part (dim 1).  Each part of a destination
 * needs a block of each source's output: the rows of its part when it is cut on dim 0, the
 * columns of its part when it is cut on dim 1 and reads feature-wise (one-to-one), else all of
 * it (one-to-all).  What flows from source part j to destination part k is the intersection of
 * the two blocks.  A piece smaller than what part j holds comes out of a kSlice of part j; a
 * destination that needs several pieces reads them through a kConcate.  This one rule gives
 * SINGA's table for every pair of partition dims and connection kinds (direct, Slice ->
 * Concate, Split -> Concate).  Then a bridge pair carries every edge that crosses workers, and
 * a kSplit hands a blob read whole by several nodes to each of them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/layer_ctx.h"
#include "singa/net.h"
#include "singa/partition.h"

typedef struct block {
    int r, c; /* the row part and column part, -1 for all */
} block;

enum { EMPTY = -2 };

typedef struct builder {
    singa_graph *g;
    const singa_net *net;
    int *first;     /* per layer: the node of its part 0 (its parts are consecutive while building) */
    int *slice_of;  /* per node and dim: its kSlice node, or -1 */
    int cap;
} builder;

static const char *const role_names[] = {"layer", "slice", "concate", "split", "bridge_src", "bridge_dst"};
static const char *const role_types[] = {NULL, "kSlice", "kConcate", "kSplit", "kBridgeSrc", "kBridgeDst"};

const char *singa_node_role_name(singa_node_role role) { return role_names[role]; }

void singa_graph_free(singa_graph *g)
{
    for (int i = 0; i < g->nnodes; i++) {
        free(g->nodes[i].name);
        free(g->nodes[i].src);
    }
    for (int i = 0; i < g->nlayers; i++)
        free(g->layers[i].name);
    free(g->nodes);
    free(g->layers);
    memset(g, 0, sizeof *g);
}

/* Appends a node (its name formatted like printf); returns its index or -1. */
static int add_node(builder *b, singa_node_role role, int layer, int location, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int add_node(builder *b, singa_node_role role, int layer, int location, const char *fmt, ...)
{
    singa_graph *g = b->g;
    if (g->nnodes == b->cap) {
        int cap = b->cap ? 2 * b->cap : 64;
        singa_node *nodes = realloc(g->nodes, (size_t)cap * sizeof *nodes);
        int *slices = realloc(b->slice_of, (size_t)cap * 2 * sizeof *slices);
        if (nodes)
            g->nodes = nodes;
        if (slices)
            b->slice_of = slices;
        if (!nodes || !slices)
            return -1;
        b->cap = cap;
    }
    char name[2 * SINGA_NAME_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    singa_node *n = &g->nodes[g->nnodes];
    *n = (singa_node){.role = role, .type = role_types[role], .layer = layer, .location = location,
                      .dim = -1, .nparts = 1};
    if (!(n->name = strdup(name)))
        return -1;
    b->slice_of[2 * g->nnodes] = b->slice_of[2 * g->nnodes + 1] = -1;
    return g->nnodes++;
}

static int add_src(singa_node *n, int node, int slab, bool back)
{
    singa_node_src *src = realloc(n->src, (size_t)(n->nsrc + 1) * sizeof *src);
    if (!src)
        return -1;
    n->src = src;
    n->src[n->nsrc++] = (singa_node_src){node, slab, back};
    return 0;
}

/* The dim layer l gets (see singa_graph_build), or -2 with err set (-1 is a dim). */
static int choose_dim(const singa_layer *l, int net_dim, int nworkers, int *location, singa_err *err)
{
    const singa_conf *own = singa_conf_get(l->conf, "partition_dim"), *at = singa_conf_get(l->conf, "location");
    unsigned flags = l->type->flags;
    *location = singa_conf_int(l->conf, "location", 0);
    if (*location < 0 || *location >= nworkers)
        return singa_layer_err(l, err, "location %d is beyond the group's %d worker%s (0 to %d)", *location,
                               nworkers, nworkers == 1 ? "" : "s", nworkers - 1), -2;
    int dim = own ? singa_conf_int(l->conf, "partition_dim", 0) : at ? -1 : net_dim;
    if (dim < -1 || dim > 1)
        return singa_layer_err(l, err, "partition_dim must be -1 (none), 0 (batch) or 1 (features), got %d", dim), -2;
    if (at && dim != -1)
        return singa_layer_err(l, err, "'location' places a whole layer, so it cannot go with partition_dim = %d "
                                       "(which spreads the layer over every worker)", dim), -2;
    if (nworkers == 1)
        return -1;
    if (dim == 1 && !(flags & SINGA_LAYER_FEATURE_PARTS)) {
        if (own)
            return singa_layer_err(l, err, "a %s layer cannot be partitioned on the feature dimension (partition_dim = 1)",
                                   l->type->name), -2;
        dim = 0;
    }
    const singa_tensor *t = &l->data;
    int features = t->ndim == 4 ? t->shape[1] : singa_tensor_cols(t);
    if (dim == 1 && features % nworkers != 0) {
        if (own)
            return singa_layer_err(l, err, "its %d %s do not split into %d equal parts (partition_dim = 1)", features,
                                   t->ndim == 4 ? "channels" : "features", nworkers), -2;
        dim = 0;
    }
    bool whole = (flags & SINGA_LAYER_WHOLE_BATCH) || ((flags & SINGA_LAYER_INPUT) && !(flags & SINGA_LAYER_SPLITS));
    if (dim == 0 && whole) {
        if (own)
            return singa_layer_err(l, err, "%s", flags & SINGA_LAYER_INPUT
                                   ? "this input layer cannot split its batch (partition_dim = 0); set partition_dim = -1"
                                   : "this layer needs the whole batch, so it cannot be partitioned on it (partition_dim = 0)"), -2;
        dim = -1;
    }
    if (dim == 0 && t->shape[0] % nworkers != 0) /* the batch is the input layers' to split: no fallback */
        return singa_layer_err(l, err, "its %d instances of a batch do not split into %d equal parts (partition_dim = 0)",
                               t->shape[0], nworkers), -2;
    return dim;
}

static block has(const singa_graph_layer *gl, int part)
{
    return gl->dim == 0 ? (block){part, -1} : gl->dim == 1 ? (block){-1, part} : (block){-1, -1};
}

static block need(const singa_graph_layer *gl, int part)
{
    if (gl->dim == 0)
        return (block){part, -1};
    if (gl->dim == 1 && (gl->flags & SINGA_LAYER_FEATURE_WISE))
        return (block){-1, part};
    return (block){-1, -1};
}

static int meet(int a, int b) { return a < 0 ? b : b < 0 || a == b ? a : EMPTY; }

/* The kSlice of node `node` along `dim`, made on first use; -1 when out of memory. */
static int slice_node(builder *b, int node, int dim)
{
    if (b->slice_of[2 * node + dim] >= 0)
        return b->slice_of[2 * node + dim];
    const singa_node *src = &b->g->nodes[node];
    int s = add_node(b, SINGA_NODE_SLICE, src->layer, src->location, "%s/%s", src->name, dim ? "cols" : "rows");
    if (s < 0 || add_src(&b->g->nodes[s], node, -1, false) < 0)
        return -1;
    b->g->nodes[s].dim = dim;
    b->g->nodes[s].nparts = b->g->nworkers;
    b->slice_of[2 * node + dim] = s;
    return s;
}

/* Connects part k of layer d to its source layer s (source number si of nsrc); back: s is a
 * back source of d. */
static int connect_part(builder *b, int d, int k, int s, int si, int nsrc, bool back, singa_err *err)
{
    singa_graph *g = b->g;
    const singa_graph_layer *dl = &g->layers[d], *sl = &g->layers[s];
    block want = need(dl, k);
    singa_node_src *pieces = malloc((size_t)sl->nparts * sizeof *pieces);
    int npieces = 0, vary = 0, node = b->first[d] + k, rc = 0;
    if (!pieces)
        return singa_err_set(err, "out of memory");
    for (int j = 0; j < sl->nparts && rc == 0; j++) {
        block h = has(sl, j), piece = {meet(h.r, want.r), meet(h.c, want.c)};
        if (piece.r == EMPTY || piece.c == EMPTY)
            continue;
        singa_node_src p = {b->first[s] + j, -1, false};
        if (piece.r != h.r || piece.c != h.c) { /* a slab of what part j holds */
            int dim = piece.r != h.r ? 0 : 1;
            p.slab = dim == 0 ? piece.r : piece.c;
            if ((p.node = slice_node(b, b->first[s] + j, dim)) < 0)
                rc = -1;
        }
        vary = h.r >= 0 ? 0 : 1; /* the pieces of a partitioned source differ along its dim */
        pieces[npieces++] = p;
    }
    if (rc == 0 && npieces == 1) {
        rc = add_src(&g->nodes[node], pieces[0].node, pieces[0].slab, back);
    } else if (rc == 0) {
        const char *name = g->nodes[node].name;
        int c = nsrc > 1 ? add_node(b, SINGA_NODE_CONCATE, d, g->nodes[node].location, "%s/concate%d", name, si)
                         : add_node(b, SINGA_NODE_CONCATE, d, g->nodes[node].location, "%s/concate", name);
        rc = c < 0 ? -1 : 0;
        if (rc == 0)
            g->nodes[c].dim = vary;
        for (int i = 0; i < npieces && rc == 0; i++)
            rc = add_src(&g->nodes[c], pieces[i].node, pieces[i].slab, false);
        if (rc == 0)
            rc = add_src(&g->nodes[node], c, -1, back);
    }
    free(pieces);
    return rc < 0 ? singa_err_set(err, "out of memory") : 0;
}

/* Every edge between workers gets a bridge pair, one per (source, slab, destination worker). */
static int add_bridges(builder *b)
{
    singa_graph *g = b->g;
    int n = g->nnodes;
    for (int i = 0; i < n; i++) {
        for (int e = 0; e < g->nodes[i].nsrc; e++) {
            singa_node_src s = g->nodes[i].src[e];
            int from = g->nodes[s.node].location, to = g->nodes[i].location;
            if (from == to)
                continue;
            int dst = -1; /* a bridge made for an earlier reader on that worker */
            for (int j = n; j < g->nnodes && dst < 0; j++)
                if (g->nodes[j].role == SINGA_NODE_BRIDGE_DST && g->nodes[j].location == to &&
                    g->nodes[g->nodes[j - 1].src[0].node].location == from &&
                    g->nodes[j - 1].src[0].node == s.node && g->nodes[j - 1].src[0].slab == s.slab)
                    dst = j;
            if (dst < 0) {
                char what[2 * SINGA_NAME_MAX];
                snprintf(what, sizeof what, s.slab >= 0 ? "%s:%d" : "%s", g->nodes[s.node].name, s.slab);
                int layer = g->nodes[s.node].layer;
                int bs = add_node(b, SINGA_NODE_BRIDGE_SRC, layer, from, "%s/to-w%d", what, to);
                if (bs < 0 || add_src(&g->nodes[bs], s.node, s.slab, false) < 0 ||
                    (dst = add_node(b, SINGA_NODE_BRIDGE_DST, layer, to, "%s/on-w%d", what, to)) < 0 ||
                    add_src(&g->nodes[dst], bs, -1, false) < 0)
                    return -1;
            }
            g->nodes[i].src[e] = (singa_node_src){dst, -1, s.back};
        }
    }
    return 0;
}

/* A blob (a node's output, or one slab of it) read by several nodes reaches them through a
 * kSplit, so every blob has one reader. */
static int add_splits(builder *b)
{
    singa_graph *g = b->g;
    int n = g->nnodes;
    for (int p = 0; p < n; p++)
        for (int slab = -1; slab < g->nodes[p].nparts; slab++) {
            int readers = 0;
            for (int i = 0; i < g->nnodes; i++)
                for (int e = 0; e < g->nodes[i].nsrc; e++)
                    readers += g->nodes[i].src[e].node == p && g->nodes[i].src[e].slab == slab;
            if (readers < 2)
                continue;
            int sp = slab < 0 ? add_node(b, SINGA_NODE_SPLIT, g->nodes[p].layer, g->nodes[p].location, "%s/split",
                                         g->nodes[p].name)
                              : add_node(b, SINGA_NODE_SPLIT, g->nodes[p].layer, g->nodes[p].location, "%s:%d/split",
                                         g->nodes[p].name, slab);
            if (sp < 0 || add_src(&g->nodes[sp], p, slab, false) < 0)
                return -1;
            g->nodes[sp].nparts = readers;
            for (int i = 0; i < g->nnodes; i++)
                for (int e = 0; e < g->nodes[i].nsrc; e++)
                    if (i != sp && g->nodes[i].src[e].node == p && g->nodes[i].src[e].slab == slab)
                        g->nodes[i].src[e] = (singa_node_src){sp, -1, g->nodes[i].src[e].back};
        }
    return 0;
}

/* Orders nodes so each comes after its sources, back edges aside (depth first from the layers'
 * parts in net order, so connection nodes sit just before their first reader); renumbers the
 * edges. */
static int order_nodes(singa_graph *g)
{
    int n = g->nnodes, done = 0, *at = malloc((size_t)n * sizeof *at), *stack = malloc((size_t)n * 2 * sizeof *stack);
    singa_node *sorted = malloc((size_t)n * sizeof *sorted);
    if (!at || !stack || !sorted) {
        free(at);
        free(stack);
        free(sorted);
        return -1;
    }
    for (int i = 0; i < n; i++)
        at[i] = -1;
    for (int root = 0; root < n; root++) {
        int top = 0;
        if (at[root] < 0) {
            stack[top++] = root;
            stack[top++] = 0;
        }
        while (top > 0) { /* the graph without back edges is acyclic: the net was sorted */
            int v = stack[top - 2], e = stack[top - 1];
            if (e < g->nodes[v].nsrc) {
                stack[top - 1]++;
                singa_node_src s = g->nodes[v].src[e];
                if (at[s.node] < 0 && !s.back) {
                    stack[top++] = s.node;
                    stack[top++] = 0;
                }
            } else {
                if (at[v] < 0) {
                    at[v] = done;
                    sorted[done++] = g->nodes[v];
                }
                top -= 2;
            }
        }
    }
    for (int i = 0; i < n; i++)
        for (int e = 0; e < sorted[i].nsrc; e++)
            sorted[i].src[e].node = at[sorted[i].src[e].node];
    free(g->nodes);
    g->nodes = sorted;
    free(at);
    free(stack);
    return 0;
}

static int layer_index(const singa_net *net, const singa_layer *l)
{
    int i = 0;
    while (net->layers[i] != l)
        i++;
    return i;
}

static int build(builder *b, int net_dim, singa_err *err)
{
    singa_graph *g = b->g;
    const singa_net *net = b->net;
    for (int i = 0; i < net->nlayers; i++) { /* every layer's parts, in net order */
        const singa_layer *l = net->layers[i];
        singa_graph_layer *gl = &g->layers[g->nlayers];
        if ((gl->dim = choose_dim(l, net_dim, g->nworkers, &gl->location, err)) < -1)
            return -1;
        if (!(gl->name = strdup(l->name)))
            return singa_err_set(err, "out of memory");
        g->nlayers++;
        gl->type = l->type->name;
        gl->conf = l->conf;
        gl->unroll_first = layer_index(net, l->unroll_first);
        gl->unroll_index = l->unroll_index;
        gl->unroll_len = l->unroll_len;
        gl->flags = l->type->flags;
        gl->nparts = gl->dim < 0 ? 1 : g->nworkers;
        b->first[i] = g->nnodes;
        for (int k = 0; k < gl->nparts; k++) {
            int node = gl->dim < 0 ? add_node(b, SINGA_NODE_LAYER, i, gl->location, "%s", l->name)
                                   : add_node(b, SINGA_NODE_LAYER, i, k, "%s@%d", l->name, k);
            if (node < 0)
                return singa_err_set(err, "out of memory");
            g->nodes[node].type = gl->type;
            g->nodes[node].dim = gl->dim;
            g->nodes[node].part = gl->dim < 0 ? 0 : k;
            g->nodes[node].nparts = gl->nparts;
        }
    }
    for (int i = 0; i < net->nlayers; i++) {
        const singa_layer *l = net->layers[i];
        for (int k = 0; k < g->layers[i].nparts; k++)
            for (int si = 0; si < l->nsrc; si++) {
                bool back = l->type->back_src && l->type->back_src(l, l->src[si]);
                if (connect_part(b, i, k, layer_index(net, l->src[si]), si, l->nsrc, back, err) < 0)
                    return -1;
            }
    }
    if (add_bridges(b) < 0 || add_splits(b) < 0 || order_nodes(g) < 0)
        return singa_err_set(err, "out of memory");
    return 0;
}

int singa_graph_build(singa_graph *g, const singa_conf *netconf, singa_phase phase, int nworkers,
                      const singa_registry *reg, singa_err *err)
{
    memset(g, 0, sizeof *g);
    if (nworkers < 1)
        return singa_err_set(err, "a group has at least 1 worker, not %d", nworkers);
    int net_dim = singa_conf_int(netconf, "partition_dim", 0);
    if (net_dim < -1 || net_dim > 1)
        return singa_err_set(err, "neuralnet: partition_dim must be -1 (none), 0 (batch) or 1 (features), got %d", net_dim);
    /* The whole net, once, for its layers' sources and shapes; its params are thrown away. */
    singa_params params;
    singa_rng rng;
    singa_net *net;
    singa_params_init(&params);
    singa_rng_seed(&rng, 1, 0);
    if (singa_net_create_shapes(&net, netconf, phase, reg, &params, &rng, err) < 0) {
        singa_params_free(&params);
        return -1;
    }
    g->nworkers = nworkers;
    g->phase = phase;
    builder b = {.g = g, .net = net, .first = calloc((size_t)net->nlayers, sizeof *b.first)};
    int rc = !b.first || !(g->layers = calloc((size_t)net->nlayers, sizeof *g->layers))
                 ? singa_err_set(err, "out of memory")
                 : build(&b, net_dim, err);
    free(b.first);
    free(b.slice_of);
    singa_net_free(net);
    singa_params_free(&params);
    if (rc < 0)
        singa_graph_free(g);
    return rc;
}

/* Colours of the workers' parts (ColorBrewer's Pastel1), in turn. */
static const char *const colours[] = {"#fbb4ae", "#b3cde3", "#ccebc5", "#decbe4",
                                      "#fed9a6", "#ffffcc", "#e5d8bd", "#fddaec"};

/* Writes s escaped for a DOT string (without the quotes). */
static void dot_esc(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        fputc(*s, out);
    }
}

int singa_graph_dot(const singa_graph *g, FILE *out)
{
    static const char *const shapes[] = {"box", "invtrapezium", "trapezium", "diamond", "cds", "cds"};
    fprintf(out, "digraph %s {\n  rankdir=BT;\n  node [fontname=\"Helvetica\", style=filled];\n",
            singa_phase_name(g->phase));
    for (int w = 0; w < g->nworkers; w++) {
        fprintf(out, "  subgraph cluster_w%d {\n    label=\"worker %d\";\n    color=\"#999999\";\n", w, w);
        for (int i = 0; i < g->nnodes; i++) {
            const singa_node *n = &g->nodes[i];
            if (n->location != w)
                continue;
            fputs("    \"", out);
            dot_esc(out, n->name);
            fputs("\" [label=\"", out);
            dot_esc(out, n->name);
            fprintf(out, "\\n%s", n->type);
            if (n->role == SINGA_NODE_SLICE || n->role == SINGA_NODE_CONCATE)
                fprintf(out, " dim %d", n->dim);
            fputc('"', out);
            fprintf(out, ", shape=%s, fillcolor=\"%s\"%s];\n", shapes[n->role],
                    colours[w % (int)(sizeof colours / sizeof *colours)],
                    n->role == SINGA_NODE_LAYER ? "" : ", style=\"filled,dashed\"");
        }
        fputs("  }\n", out);
    }
    for (int i = 0; i < g->nnodes; i++)
        for (int e = 0; e < g->nodes[i].nsrc; e++) {
            singa_node_src s = g->nodes[i].src[e];
            char attrs[64] = "";
            if (s.slab >= 0)
                singa_appendf(attrs, sizeof attrs, "label=\"%d\"", s.slab);
            if (s.back)
                singa_appendf(attrs, sizeof attrs, "%sstyle=dotted", *attrs ? ", " : "");
            fputs("  \"", out);
            dot_esc(out, g->nodes[s.node].name);
            fputs("\" -> \"", out);
            dot_esc(out, g->nodes[i].name);
            fputc('"', out);
            if (*attrs)
                fprintf(out, " [%s]", attrs);
            fputs(";\n", out);
        }
    fputs("}\n", out);
    return ferror(out) ? -1 : 0;
}
