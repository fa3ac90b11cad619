/* The distributed runtime inside one process: a stub thread routing messages, a thread per
 * worker and per server, and what they share.  runtime.c builds and joins them, stub.c routes
 * and aggregates, server.c updates slices, worker.c trains. */
#ifndef SINGA_DIST_DIST_H
#define SINGA_DIST_DIST_H

#include <pthread.h>
#include <stdbool.h>

#include "dist/msg.h"
#include "singa/cluster.h"
#include "singa/job.h"
#include "singa/stats.h"
#include "train/train.h"

/* Trains `job` (whose cluster is distributed) in this process's part of the cluster. */
int singa_dist_run(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err);

/* A trained param's part held by one server of every server group.  Each server of a group owns
 * a contiguous, near-equal range of all the params laid end to end, so a small param lies on one
 * server and a large one may span several. */
typedef struct dist_slice {
    int param;          /* index among the distributed params */
    size_t offset, len; /* in floats, within the param */
    int server;         /* its server's index within a group */
} dist_slice;

/* A param the servers update: trained and not sharing another's value. */
typedef struct dist_param {
    const char *name, *layer;
    size_t size;
    float lr_scale, wd_scale;
    int first_slice, nslices;
} dist_param;

typedef struct dist_rt dist_rt;

typedef struct dist_worker {
    dist_rt *rt;
    int group, id;
    singa_job *job;
    singa_param **params; /* the job's distributed params, by index */
    bool *sent;           /* this step's update is on its way */
    void *sock;
    pthread_t thread;
    singa_job_hooks hooks; /* the runtime's, serialised */
    singa_result res;
    singa_err err;
    int rc;
    int step_sent;        /* the step whose updates are being sent */
} dist_worker;

typedef struct dist_server dist_server;
typedef struct dist_stub dist_stub;

struct dist_rt {
    const singa_cluster *c;
    const singa_conf *conf;
    int rank, nprocs;
    void *zmq;
    char endpoint[64]; /* the stub's inproc address */
    dist_param *params;
    int nparams;
    dist_slice *slices;
    int nslices;
    /* Per worker group with workers here: its params' values, shared by those workers (the
     * first one's), by distributed param index; NULL for other groups. */
    singa_param ***replica;
    dist_worker *workers;
    int nworkers;
    dist_server *servers;
    int nservers;
    dist_stub *stub;
    const singa_job_hooks *hooks;
    pthread_mutex_t lock; /* hooks and the first error */
    singa_err err;
    bool failed;
    singa_stats *stats;
};

/* Records the first failure of any thread. */
void dist_fail(dist_rt *rt, const singa_err *err);
/* Where the runtime's threads live. */
int dist_worker_proc(const dist_rt *rt, int group, int id);
int dist_server_proc(const dist_rt *rt, int group, int id);
/* An identity on the stub's router: "w<group>.<id>", "s<group>.<id>". */
void dist_identity(char *buf, size_t len, int kind, int group, int id);
/* Sends a message to the stub from a worker's or server's socket; payload may be NULL. */
int dist_send(void *sock, const msg *m, const void *payload, size_t nbytes);

void *dist_worker_main(void *arg);

int dist_server_create(dist_rt *rt, dist_server *s, int group, int id, singa_err *err);
void dist_server_free(dist_server *s);
void *dist_server_main(void *arg);
size_t dist_server_size(void);
dist_server *dist_server_at(dist_rt *rt, int i);

int dist_stub_create(dist_rt *rt, singa_err *err);
void dist_stub_free(dist_stub *s);
void *dist_stub_main(void *arg);

/* Counts a message of `bytes` (0: none, only pending and wait change) on the row (type, peer). */
void dist_stats_count(singa_stats *s, const char *type, const char *peer, bool sent, size_t bytes, int pending,
                      double wait);
void dist_stats_drop(singa_stats *s);

#endif
