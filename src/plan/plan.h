/* The planner's parts (singa/plan.h is its interface): the candidates (candidates.c), the Lua
 * of a row (lua.c). */
#ifndef SINGA_PLAN_PLAN_H
#define SINGA_PLAN_PLAN_H

#include "singa/plan.h"

enum { PLAN_MAX_CANDIDATES = 16 };

/* The configurations of n processes the net allows into out (PLAN_MAX_CANDIDATES), the
 * one-process run first; sets plan->why_none when there is no other.  Sets the profile's
 * layers' dim for the feature cut. */
int plan_candidates(singa_plan *plan, const singa_conf *conf, const singa_registry *reg, int n,
                    singa_plan_config *out);
/* netconf with c's micro_batches and each layer's location (a pipeline); NULL out of memory. */
singa_conf *plan_pipeline_net(const singa_plan_profile *p, const singa_plan_config *c, const singa_conf *netconf);
/* The Lua to put in the job for c (malloc'd), NULL out of memory. */
char *plan_lua(const singa_plan_profile *p, const singa_plan_config *c);
/* c's cluster as a conf table; NULL for one process (no cluster) or out of memory. */
singa_conf *plan_cluster_conf(const singa_plan_config *c);

/* The link between n processes spread per_nic to a host (hosts.c): seconds of an exchange in
 * which each process sends `bytes` in equal shares to every process (its own share staying), on
 * the busier of the hosts' interface and the local link; the slowest link's latency; the
 * bandwidth of a message that may cross hosts. */
double plan_wire_seconds(const singa_plan_link *l, int n, double bytes);
double plan_link_latency(const singa_plan_link *l, int n);
double plan_link_bandwidth(const singa_plan_link *l, int n);

/* cluster.plan = "auto" over size processes (handoff.c), at the coordinator's address at: rank 0
 * gives its choice c (NULL: none) to the others' asks of the same key (the job and run) within
 * wait seconds, and closes the address; the others take it (*name "-": none). -1 with err. */
int plan_handoff_give(const char *at, const char *key, int size, const singa_plan_config *c, double wait,
                      singa_err *err);
int plan_handoff_take(const char *at, const char *key, int rank, double wait, char *name, size_t len, int *starts,
                      singa_err *err);

#endif
