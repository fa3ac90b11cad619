/* One model from a checkpoint of any topology.  A plain checkpoint is one file; a distributed
 * one is a step's files, its servers' slices of every param and of the updater state and its
 * workers' own state (checkpoint.h).  A set reads either into the same thing: the step, the
 * topology that wrote it, every param and updater slot whole by name (slices placed by offset,
 * each element covered exactly once), and the workers' states, so any job whose params match
 * by name and shape loads it, whatever its own topology. */
#ifndef SINGA_CKPT_SET_H
#define SINGA_CKPT_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "singa/checkpoint.h"
#include "singa/error.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

/* What a distributed checkpoint's "topology" entry holds: a format number, worker groups,
 * workers per group, server groups, servers per group, slices, values and a digest of the
 * params' names, sizes and slicing.  A plain checkpoint's is all zero. */
enum { SINGA_CKPT_TOPOLOGY_LEN = 8 };

typedef struct singa_ckpt_set_file {
    char path[4096];
    int kind, group, id; /* as singa_ckpt_file */
} singa_ckpt_set_file;

/* A worker's own state: "rng", "window", "cursor/...", "best", the params no server holds. */
typedef struct singa_ckpt_set_worker {
    int group, id;
    singa_ckpt state;
} singa_ckpt_set_worker;

/* Where a server's slice of a param lay, and how many updates it had seen. */
typedef struct singa_ckpt_set_slice {
    char *param;
    uint64_t offset, len;
    int64_t version;
} singa_ckpt_set_slice;

typedef struct singa_ckpt_set {
    char where[4200]; /* the plain file, or "<dir>/stepS.*.ckpt" */
    uint64_t step;
    int64_t topology[SINGA_CKPT_TOPOLOGY_LEN];
    /* Every param and updater slot, whole: "param/<name>" (its shape), "updater/<name>/<slot>". */
    singa_ckpt model;
    singa_ckpt_set_worker *workers; /* a plain checkpoint's one: 0.0 */
    size_t nworkers;
    singa_ckpt_set_slice *slices; /* server group 0's (none in a plain checkpoint) */
    size_t nslices;
    singa_ckpt_set_file *files; /* every file read; each verified (CRCs, step, topology) */
    size_t nfiles;
    /* Per worker group, then per server group: 1 where a file's writer knew the group's process
     * lost, so the step lacks its files on purpose (NULL: none was). */
    uint8_t *lost;
} singa_ckpt_set;

/* Whether a set was written by a distributed job. */
static inline bool singa_ckpt_set_dist(const singa_ckpt_set *s) { return s->topology[0] != 0; }

/* Offers `accept` (NULL: any) the checkpoints `path` names until it takes one: a plain file; one
 * file of a distributed step (that step); or a folder's steps, newest first, each whole and
 * verified.  `refused` (may be NULL) hears each step turned down and why (a file missing: then
 * `incomplete`; truncated or corrupt, of another step or topology, or not accepted).  Returns 0 with *s the
 * accepted set (free with singa_ckpt_set_free), 1 when there is nothing to try (err says why),
 * -1 when every one was refused (err: the newest's reason). */
typedef int (*singa_ckpt_set_accept_fn)(void *ud, const singa_ckpt_set *s, singa_err *err);
typedef void (*singa_ckpt_set_refused_fn)(void *ud, uint64_t step, bool incomplete, const char *reason);
int singa_ckpt_set_open(singa_ckpt_set *s, const char *path, singa_ckpt_set_accept_fn accept,
                        singa_ckpt_set_refused_fn refused, void *ud, singa_err *err);
void singa_ckpt_set_free(singa_ckpt_set *s);

/* What worker (group, id) of a job resumes from, as a plain checkpoint whose entries point into
 * s (free with singa_ckpt_free(view, 0)): with `model`, every param and updater slot, then that
 * worker's state.  The state is its own file's where the checkpoint has one; else its group's
 * worker 0's (SINGA_CKPT_SET_OTHER_WORKER); else, for a group the checkpoint lacks (beyond its
 * groups, or lost when it was written), that of the k-th group it holds, k = group mod how many
 * it holds (SINGA_CKPT_SET_OTHER_GROUP).  Returns those flags,
 * or -1. */
enum { SINGA_CKPT_SET_OTHER_WORKER = 1, SINGA_CKPT_SET_OTHER_GROUP = 2 };
int singa_ckpt_set_view(const singa_ckpt_set *s, int group, int id, bool model, singa_ckpt *view, singa_err *err);

/* The version (updates seen) of the slice holding element `offset` of `param` (a plain
 * checkpoint: its step). */
int64_t singa_ckpt_set_version(const singa_ckpt_set *s, const char *param, uint64_t offset);

/* Whether a job of topology `job` (all zero: plain) reshards s; then buf gets the line its log
 * says at resume, naming what is exact and what is re-derived. */
bool singa_ckpt_set_resharded(const singa_ckpt_set *s, const int64_t *job, char *buf, size_t len);

/* Whether s lacks a worker group's state (its process was lost when the step was written, so its
 * files are not there; its workers take another group's state, see singa_ckpt_set_view) or a
 * lost server group's shards (not the model's: server group 0's are); then buf gets the line
 * saying so. */
bool singa_ckpt_set_lacks(const singa_ckpt_set *s, char *buf, size_t len);

/* "1 worker group of 2 workers and 1 server group of 2 servers (N values in K slices)", or
 * "plain (one worker, one server)". */
void singa_ckpt_topology_describe(const int64_t *t, char *buf, size_t len);

/* Writes s as one plain checkpoint file `out` (worker 0.0's state), atomically as checkpoints are
 * written, which a plain job resumes from exactly. */
int singa_ckpt_set_gather(const singa_ckpt_set *s, const char *out, singa_err *err);

#pragma GCC visibility pop

#endif
