/* The one writer of checkpoint files: a plain job's step file and every file of a distributed
 * job's step (a server's shard, a worker's state) go through singa_ckpt_save, which names the
 * file and adds the entries every file of a distributed step records. */
#ifndef SINGA_CKPT_PART_H
#define SINGA_CKPT_PART_H

#include <stddef.h>
#include <stdint.h>

#include "singa/ckpt_set.h"

/* Whose file of a distributed step it is, and what every file of the step records. */
typedef struct singa_ckpt_part {
    int kind, group, id;     /* SINGA_CKPT_SERVER or SINGA_CKPT_WORKER, and which */
    const int64_t *topology; /* SINGA_CKPT_TOPOLOGY_LEN values (ckpt_set.h) */
    int64_t files;           /* how many files the step has: those of the groups not lost */
    const int64_t *lost;     /* per worker group, then per server group, 1 where lost (NULL: none is) */
    int ngroups;             /* of lost */
} singa_ckpt_part;

/* Writes c (entries added by the caller) as the file of step c->step in folder dir: a plain
 * job's "stepS.ckpt" (part NULL), or part's, adding "topology", "files", "lost" (when a group
 * is) and its identity ("shard" or "worker": group and id).  path gets the file's name. */
int singa_ckpt_save(singa_ckpt *c, const char *dir, const singa_ckpt_part *part, char *path, size_t len,
                    singa_err *err);

#endif
