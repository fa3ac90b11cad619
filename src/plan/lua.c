/* What a planned configuration is in the job: its cluster as the preset's Lua (and the
 * neuralnet fields it sets) for the user, and as a conf table for cluster.plan = "auto". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/conf_edit.h"
#include "plan/plan.h"

static const char *kind_name(singa_compress_kind k)
{
    switch (k) {
    case SINGA_COMPRESS_FP16: return "fp16";
    case SINGA_COMPRESS_BF16: return "bf16";
    case SINGA_COMPRESS_INT8: return "int8";
    case SINGA_COMPRESS_UPDATE: return "update";
    default: return "fp32";
    }
}

/* ", compress = ..." for c's codec, or "". */
static void compress_lua(const singa_plan_config *c, char *buf, size_t len)
{
    const singa_compress *z = &c->compress;
    if (z->kind == SINGA_COMPRESS_FP16 || z->kind == SINGA_COMPRESS_BF16)
        snprintf(buf, len, ", compress = \"%s\"", kind_name(z->kind));
    else if (z->kind == SINGA_COMPRESS_TOPK) /* error feedback: without it top-k loses accuracy */
        snprintf(buf, len, ", compress = { topk = %g, error_feedback = %s, values = \"%s\" }", z->topk,
                 z->error_feedback ? "true" : "false", kind_name(z->values));
    else if (z->kind == SINGA_COMPRESS_POWERSGD)
        snprintf(buf, len, ", compress = { powersgd = %d }", c->powersgd);
    else
        buf[0] = 0;
}

static char *pipeline_lua(const singa_plan_profile *p, const singa_plan_config *c, const char *cluster)
{
    size_t len = strlen(cluster) + 256;
    for (int i = 0; i < p->nlayers; i++)
        len += strlen(p->layers[i].name) + 16;
    char *s = malloc(len);
    if (!s)
        return NULL;
    int at = snprintf(s, len, "%s\nneuralnet.micro_batches = %d\nlocal location = {", cluster, c->micro_batches);
    for (int i = 0, st = 0; i < p->nlayers; i++) {
        while (st + 1 < c->nprocs && c->stage_start[st + 1] <= i)
            st++;
        if (st > 0)
            at += snprintf(s + at, len - (size_t)at, " [\"%s\"] = %d,", p->layers[i].name, st);
    }
    snprintf(s + at, len - (size_t)at, " }\nfor _, l in ipairs(neuralnet.layer) do l.location = location[l.name] end");
    return s;
}

char *plan_lua(const singa_plan_profile *p, const singa_plan_config *c)
{
    char z[96], s[512];
    int n = c->nprocs;
    compress_lua(c, z, sizeof z);
    switch (c->scheme) {
    case SINGA_PLAN_ONE: snprintf(s, sizeof s, "cluster = nil"); break;
    case SINGA_PLAN_SANDBLASTER:
        snprintf(s, sizeof s, "cluster = singa.cluster.sandblaster{ workers = %d, servers = 1, procs = %d%s }", n - 1, n, z);
        break;
    case SINGA_PLAN_HOGWILD:
        snprintf(s, sizeof s, "cluster = singa.cluster.hogwild{ groups = %d, procs = %d, sync_freq = %d%s, outer = { type = "
                 "\"kNesterov\", momentum = 0.9, learning_rate = { type = \"kFixed\", base_lr = 0.7 } } }", n, n,
                 c->sync_freq, z);
        break;
    default:
        snprintf(s, sizeof s, "cluster = singa.cluster.allreduce{ workers = %d, procs = %d%s }%s", n, n, z,
                 c->scheme == SINGA_PLAN_FEATURE ? "\nneuralnet.partition_dim = 1" : "");
    }
    return c->scheme == SINGA_PLAN_PIPELINE ? pipeline_lua(p, c, s) : strdup(s);
}

static int set_num(singa_conf *t, const char *key, double v) { return plan_conf_set(t, key, singa_conf_new_num(v)); }

/* compress as a conf: "fp16" or a table. */
static singa_conf *compress_conf(const singa_plan_config *c)
{
    const singa_compress *z = &c->compress;
    if (z->kind == SINGA_COMPRESS_FP16 || z->kind == SINGA_COMPRESS_BF16)
        return singa_conf_new_str(kind_name(z->kind));
    singa_conf *t = singa_conf_new(SINGA_CONF_TABLE);
    if (!t)
        return NULL;
    int rc = z->kind == SINGA_COMPRESS_TOPK
                 ? set_num(t, "topk", z->topk) | plan_conf_set(t, "values", singa_conf_new_str(kind_name(z->values))) |
                       plan_conf_set(t, "error_feedback", singa_conf_new_bool(z->error_feedback))
                 : set_num(t, "powersgd", c->powersgd);
    if (rc < 0) {
        singa_conf_free(t);
        return NULL;
    }
    return t;
}

static int outer_conf(singa_conf *t)
{
    singa_conf *o = plan_conf_table(t, "outer"), *lr = o ? plan_conf_table(o, "learning_rate") : NULL;
    return lr ? plan_conf_set(o, "type", singa_conf_new_str("kNesterov")) | set_num(o, "momentum", 0.9) |
                    plan_conf_set(lr, "type", singa_conf_new_str("kFixed")) | set_num(lr, "base_lr", 0.7)
              : -1;
}

singa_conf *plan_cluster_conf(const singa_plan_config *c)
{
    int n = c->nprocs;
    bool sb = c->scheme == SINGA_PLAN_SANDBLASTER, hw = c->scheme == SINGA_PLAN_HOGWILD;
    singa_conf *t = c->scheme == SINGA_PLAN_ONE ? NULL : singa_conf_new(SINGA_CONF_TABLE);
    if (!t)
        return NULL;
    const char *fw = sb ? "sandblaster" : hw ? "hogwild" : "allreduce";
    int rc = plan_conf_set(t, "framework", singa_conf_new_str(fw)) | set_num(t, "nworker_groups", hw ? n : 1) |
             set_num(t, "nworkers_per_group", hw ? 1 : sb ? n - 1 : n) | set_num(t, "nserver_groups", hw ? n : 1) |
             set_num(t, "nservers_per_group", hw || sb ? 1 : n) | set_num(t, "nworkers_per_procs", 1) |
             set_num(t, "nservers_per_procs", 1);
    if (sb)
        rc |= plan_conf_set(t, "server_worker_separate", singa_conf_new_bool(true));
    if (hw)
        rc |= set_num(t, "sync_freq", c->sync_freq) | outer_conf(t);
    if (c->compress.kind != SINGA_COMPRESS_NONE)
        rc |= plan_conf_set(t, "compress", compress_conf(c));
    if (rc < 0) {
        singa_conf_free(t);
        return NULL;
    }
    return t;
}
