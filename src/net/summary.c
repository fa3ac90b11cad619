/* A net's summary (singa/summary.h): the columns are as wide as the longest layer name and
 * type, so the lines line up in a terminal, a log and the workbench's panel alike. */
#include <stdio.h>
#include <string.h>

#include "singa/summary.h"

size_t singa_summary_layer_params(const singa_layer *l)
{
    size_t n = 0;
    for (int i = 0; i < l->nparams; i++)
        if (!l->params[i]->owner)
            n += l->params[i]->data.size;
    return n;
}

void singa_summary_totals(const singa_net *net, size_t *all, size_t *trained)
{
    *all = *trained = 0;
    for (int i = 0; i < net->nlayers; i++)
        for (int k = 0; k < net->layers[i]->nparams; k++) {
            const singa_param *p = net->layers[i]->params[k];
            if (p->owner)
                continue;
            *all += p->data.size;
            *trained += p->state ? 0 : p->data.size;
        }
}

void singa_summary_shape(const singa_layer *l, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = 0;
    for (int d = 0; d < l->data.ndim && o < len; d++)
        o += (size_t)snprintf(buf + o, len - o, "%s%d", d ? "x" : "", l->data.shape[d]);
    if (!l->data.ndim)
        snprintf(buf, len, "-");
}

/* 1234567 -> "1,234,567" */
static void grouped(char *buf, size_t len, size_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%zu", v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < len; i++) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = 0;
}

void singa_summary_lines(const singa_net *net, void (*line)(void *ud, const char *text), void *ud)
{
    int nw = 5, tw = 4, sw = 6; /* "layer", "type", "output" */
    char shape[64], count[32], text[256];
    for (int i = 0; i < net->nlayers; i++) {
        const singa_layer *l = net->layers[i];
        singa_summary_shape(l, shape, sizeof shape);
        nw = (int)strlen(l->name) > nw ? (int)strlen(l->name) : nw;
        tw = (int)strlen(l->type->name) > tw ? (int)strlen(l->type->name) : tw;
        sw = (int)strlen(shape) > sw ? (int)strlen(shape) : sw;
    }
    nw = nw > 40 ? 40 : nw;
    snprintf(text, sizeof text, "%-*s %-*s %-*s %s", nw, "layer", tw, "type", sw, "output", "params");
    line(ud, text);
    for (int i = 0; i < net->nlayers; i++) {
        const singa_layer *l = net->layers[i];
        singa_summary_shape(l, shape, sizeof shape);
        grouped(count, sizeof count, singa_summary_layer_params(l));
        snprintf(text, sizeof text, "%-*.*s %-*s %-*s %s", nw, nw, l->name, tw, l->type->name, sw, shape, count);
        line(ud, text);
    }
    size_t all, trained;
    singa_summary_totals(net, &all, &trained);
    grouped(count, sizeof count, all);
    int o = snprintf(text, sizeof text, "total params: %s", count);
    if (trained != all) {
        grouped(count, sizeof count, trained);
        snprintf(text + o, sizeof text - (size_t)o, " (trained %s)", count);
    }
    line(ud, text);
}
