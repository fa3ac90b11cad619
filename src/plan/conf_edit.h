/* Editing a job's conf tree in place: what the planner changes in a copy of the job (its
 * cluster, neuralnet fields, layers' locations). */
#ifndef SINGA_PLAN_CONF_EDIT_H
#define SINGA_PLAN_CONF_EDIT_H

#include "singa/conf.h"

/* table[key] = item (replacing and freeing an existing one); -1 out of memory (item freed). */
int plan_conf_set(singa_conf *table, const char *key, singa_conf *item);
/* Removes table[key] if present. */
void plan_conf_del(singa_conf *table, const char *key);
/* The child table at key, made when missing; NULL out of memory. */
singa_conf *plan_conf_table(singa_conf *table, const char *key);

#endif
