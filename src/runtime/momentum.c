/* Asynchronous groups and momentum (cluster.momentum_compensation).  Worker groups that do not
 * wait for each other compute gradients on values some updates old, and stale gradients act as
 * momentum of their own, about 1 - 1/g with g asynchronous groups (Mitliagkas et al. 2016,
 * "Asynchrony begets momentum").  Added to the momentum one group trains well with, the total
 * is too much.  So the servers lower a kSGD or kNesterov momentum m to max(0, m - (1 - 1/g)).
 *
 * g counts the worker groups whose gradients reach a server group's values stale.  Those sharing
 * it (Downpour) always do.  Those of other server groups (Hogwild) do through the merges, every
 * sync_freq updates, computed on values that lacked its latest: when the merges come within a
 * few of the momentum's windows of 1/(1 - m) updates, fewer than 4/(1 - m) updates apart, and
 * during training at all.  Further apart they are periodic merges of models trained alone, no
 * momentum (measured for m = 0.9 with 2 groups: 0.9 spikes or diverges merging every 10 or 20
 * updates, trains as one group does every 40 or more).  An estimate from the topology rather than
 * the staleness observed: it does not depend on timing, so every process, a resumed job and a
 * rejoining process compute the same momentum, and a run stays reproducible where it was. */
#include <math.h>
#include <string.h>

#include "runtime/runtime.h"
#include "singa/updater.h"

static bool has_momentum(const char *type)
{
    return strcmp(type, "kSGD") == 0 || strcmp(type, "kNesterov") == 0;
}

/* The asynchronous groups behind momentum m's implicit part, by the rule above. */
static int stale_groups(const rt_ctx *rt, double m)
{
    const singa_cluster *c = rt->c;
    int sharing = c->nworker_groups / c->nserver_groups;
    if (c->outer) /* rounds every group waits for: no gradient on another group's stale values */
        return sharing;
    bool merges = c->nserver_groups > 1 && c->sync_freq < singa_conf_int(rt->conf, "train_steps", 0) &&
                  c->sync_freq * (1 - m) < 4;
    return merges ? c->nworker_groups : sharing;
}

/* The momentum the servers apply (NAN: theirs as set) and the line that says why ("": none). */
static double decide(const rt_ctx *rt, char *line, size_t len)
{
    const singa_cluster *c = rt->c;
    const singa_conf *upd = singa_conf_get(rt->conf, "updater");
    const char *type = singa_conf_str(upd, "type", "kSGD");
    double m = singa_conf_num(upd, "momentum", 0);
    int g = stale_groups(rt, m);
    bool asked = singa_conf_get(singa_conf_get(rt->conf, "cluster"), "momentum_compensation") != NULL;
    line[0] = 0;
    if (c->nworker_groups == 1) {
        if (asked && c->momentum_compensation)
            snprintf(line, len, "cluster.momentum_compensation has no effect: one worker group trains synchronously, "
                                "without stale gradients");
        return NAN;
    }
    if (has_momentum(type) && m == 0)
        return NAN; /* nothing to lower */
    if (!has_momentum(type)) {
        if (c->momentum_compensation)
            snprintf(line, len, "%s: unchanged by cluster.momentum_compensation (it lowers kSGD's and kNesterov's "
                                "momentum)", type);
        return NAN;
    }
    if (!c->momentum_compensation || g == 1) {
        snprintf(line, len, "%s momentum %g as set (cluster.momentum_compensation%s)", type, (double)(float)m,
                 !c->momentum_compensation ? " = false"
                 : c->outer ? ": with cluster.outer the server groups sync in rounds that every group waits for, so "
                              "no gradient is stale; the outer updater's momentum is its own"
                            : ": the server groups merge too seldom, every sync_freq updates, for their stale gradients "
                              "to add momentum");
        return NAN;
    }
    double applied = fmax(0, m - (1 - 1.0 / g));
    snprintf(line, len, "%s momentum %g -> %g for %d asynchronous worker groups, whose stale gradients add about %g "
                        "(cluster.momentum_compensation)", type, (double)(float)m, (double)(float)applied, g,
             1 - 1.0 / g);
    return applied;
}

void rt_momentum_setup(rt_ctx *rt)
{
    char line[320];
    double applied = decide(rt, line, sizeof line);
    for (int i = 0; !isnan(applied) && i < rt->nservers; i++)
        singa_updater_set_momentum(rt_server_updater(rt_server_at(rt, i)), (float)applied);
    if (line[0])
        rt_log(rt, "%s", line);
}
