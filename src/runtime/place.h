/* Placement of the servers' slices (place.c).  By default each server of a group owns a
 * contiguous, near-equal range of all the params laid end to end.  When the only worker group's
 * net is cut across processes, each process computes its own elements of a cut param (a feature
 * cut: its rows of each weight), so its part of the gradient and of the updater state goes to a
 * server in that process instead: only the bridges (and empty words) cross between processes.
 * place.c also says in the log what every step will move between processes to the servers. */
#ifndef SINGA_RUNTIME_PLACE_H
#define SINGA_RUNTIME_PLACE_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/runtime.h"

typedef struct rt_place rt_place;

/* What each process computes of each of the job's distributed params (rt->params, whose
 * final_params are `job`'s), for the groups of rt's cluster. */
int rt_place_new(rt_place **out, const rt_ctx *rt, singa_job *job, singa_err *err);
void rt_place_free(rt_place *pl);
/* Param k's range held by each server of a group, ranges[j] = [lo, hi), when its parts can lie
 * with the servers of the processes computing them; false (ranges untouched) when they cannot. */
bool rt_place_ranges(rt_place *pl, const rt_ctx *rt, int k, size_t (*ranges)[2]);
/* Once rt's slices are made: the log's line on what crosses between processes to the servers. */
void rt_place_log(const rt_place *pl, rt_ctx *rt);

#endif
