/* The planner (singa-tui --plan, cluster.plan = "auto"): a cost model of a job's net measured on
 * this machine (each layer's forward and backward seconds on the job's own data, its params and
 * features), of the link between processes and of the codecs of cluster.compress, and from it a
 * prediction for every configuration the net allows: step time, images/s, bytes per step, memory
 * per process.  docs/03-clusters.md ("Planning") gives the formulas. */
#ifndef SINGA_PLAN_H
#define SINGA_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "singa/cluster.h"
#include "singa/conf.h"
#include "singa/layer.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

/* One layer of the training net as the profile measured it, per step at the job's batch. */
typedef struct singa_plan_layer {
    char name[64];
    char type[32];
    double fwd, bwd;        /* seconds */
    double param_floats;    /* values of the params it owns */
    int params;             /* how many params it owns (a message each way per step) */
    double matrix_floats;   /* of which in 2-D (or more) params */
    double factor_floats;   /* rows + cols summed over its 2-D params: PowerSGD's floats per rank */
    double out_floats;      /* its feature blob, the whole batch */
    int src;                /* its first source's index, or -1 */
    int dim;                /* in the feature cut over the processes ranked: -1 whole, 0 batch, 1 features */
    bool defers;            /* in a pipeline its params' gradients wait for the whole batch (deferred.h) */
} singa_plan_layer;

/* What a process's threads share on this machine, measured with the profile (machine.c); all 0
 * charges none of the terms below (a machine with a core for every thread and memory to spare). */
typedef struct singa_plan_machine {
    int cores;              /* online CPUs */
    double memory;          /* bytes per second its memory streams (read and written, all cores) */
    double cache;           /* bytes of a core's L2: params within it do not stream from memory */
    double message;         /* seconds a message costs its stub and server threads on a core a worker keeps busy */
} singa_plan_machine;

typedef struct singa_plan_profile {
    singa_plan_layer *layers;
    int nlayers;
    int batch;
    bool kbp;               /* trained by kBP (a cut net needs it) */
    bool whole_batch;       /* a layer needs the whole batch in one net (kBM, kCSVOutput) */
    double step;            /* measured seconds per step, one process */
    double update;          /* of which outside the layers (the updater, the loop) */
    int steps;              /* steps timed (the first is not) */
    /* The same net profiled at a share of the batch, as smaller GEMMs run slower per row: a
     * data-parallel process's (batch / nprocs) and a pipeline's micro-batch; NULL when not
     * profiled (the model then divides the whole batch's times). */
    const struct singa_plan_profile *share, *micro;
    /* The net cut on its features among cut_procs workers of this process, a thread each (the
     * bridges between them copies in memory): its median step, 0 when not timed. */
    double cut;
    int cut_procs;
    singa_plan_machine machine;
} singa_plan_profile;

typedef struct singa_plan_link {
    char name[32];
    double bandwidth;       /* payload bytes per second, each direction */
    double latency;         /* seconds one way */
    bool measured;
    /* The transfers are the CPU's own copies (processes of one host, a core each): no compute
     * hides them.  Over a network the NIC moves the bytes while the worker computes. */
    bool copies;
    /* CPU seconds per byte the copies of a message take in the processes (sender, stubs, socket,
     * receiver): over a network too, where no one-core process hides them. */
    double copy;
    int per_host;           /* processes on one machine, sharing its cores and memory (0: one) */
    /* Processes behind one end of the link, a host's network interface (--procs N --hosts ...):
     * their messages to each other go over the local link below, theirs to other hosts share the
     * interface (0 or 1: each process its own end). */
    int per_nic;
    double local_bandwidth, local_latency; /* between the processes of one host (per_nic > 1) */
    int cores;              /* each host's cores when not this machine's (--plan-cores; 0: this machine's) */
} singa_plan_link;

/* CPU seconds per float encoded and decoded once (PowerSGD: per element of a 2-D gradient). */
typedef struct singa_plan_codec {
    double fp16, bf16, topk, int8, powersgd;
} singa_plan_codec;

typedef enum {
    SINGA_PLAN_ONE,         /* one process, no cluster */
    SINGA_PLAN_ALLREDUCE,   /* data-parallel, a server beside every worker */
    SINGA_PLAN_SANDBLASTER, /* data-parallel, the servers in a process of their own */
    SINGA_PLAN_FEATURE,     /* the net cut on the features (neuralnet.partition_dim = 1) */
    SINGA_PLAN_PIPELINE,    /* layers placed by location, micro-batches in a 1F1B pipeline */
    SINGA_PLAN_HOGWILD      /* a group per process, local SGD synced every sync_freq with an outer optimizer */
} singa_plan_scheme;

enum { SINGA_PLAN_MAX_STAGES = 8 };

typedef struct singa_plan_config {
    singa_plan_scheme scheme;
    int nprocs;
    singa_compress compress;
    int powersgd;           /* rank when compress.kind is SINGA_COMPRESS_POWERSGD */
    int micro_batches;
    int stage_start[SINGA_PLAN_MAX_STAGES]; /* pipeline: the first layer of each stage */
    int sync_freq;
    char name[64];
} singa_plan_config;

typedef struct singa_plan_prediction {
    double step, images_per_sec;
    /* The step's terms: compute (the slowest process's layers and updates), the transfers not
     * hidden behind compute, the pipeline's bubble, the codecs' CPU, the stub's and server's CPU
     * that a process with fewer cores than busy threads takes from its worker. */
    double compute, transfer, bubble, codec, stub;
    double wire_bytes;      /* per step, sent and received by one process (its links) */
    double memory_bytes;    /* per process: values, gradients, updater state, features */
    const char *bound;      /* the largest term: "compute", "transfer", "bubble", "codec" or "stub" */
} singa_plan_prediction;

/* Runs the job `conf` in this process without its cluster for 1 + steps steps (the first not
 * timed), its net profiled, each input layer's batchsize divided by `divide` (1: as it is; one
 * that does not divide is an error); fills p (free with singa_plan_profile_free). */
int singa_plan_profile_run(singa_plan_profile *p, const singa_conf *conf, const singa_registry *reg, int steps,
                           int divide, singa_err *err);
void singa_plan_profile_free(singa_plan_profile *p);
/* Runs the job `conf` for 1 + steps steps as `cut` (the feature cut) places it, every process
 * of it a thread of this one; *step: the timed steps' median seconds. */
int singa_plan_profile_cut(double *step, const singa_conf *conf, const singa_registry *reg,
                           const singa_plan_config *cut, int steps, singa_err *err);
/* Measures the codecs on a buffer. */
void singa_plan_codec_measure(singa_plan_codec *c);
/* Measures this machine: its cores, memory bandwidth, L2 and a message's cost on a busy core. */
void singa_plan_machine_measure(singa_plan_machine *m);
/* spec: "local" (measured over a Unix socket pair), "1gbit", "10gbit", "<N>mbit" or "<N>gbit",
 * optionally ",<latency>us". */
int singa_plan_link_parse(singa_plan_link *l, const char *spec, singa_err *err);
/* l's per_nic = per_nic, and with more than one its local link measured as "local" is. */
void singa_plan_link_hosts(singa_plan_link *l, int per_nic);
/* The model: the prediction for one configuration. */
void singa_plan_predict(const singa_plan_profile *p, const singa_plan_link *l, const singa_plan_codec *c,
                        const singa_plan_config *cfg, singa_plan_prediction *out);

typedef struct singa_plan_row {
    singa_plan_config cfg;
    singa_plan_prediction pred;
    char *lua;              /* the job's cluster (and neuralnet changes) as Lua source */
} singa_plan_row;

typedef struct singa_plan {
    singa_plan_profile profile;
    singa_plan_profile share, micro; /* at batch / nprocs and batch / micro_batches (layers NULL: none) */
    singa_plan_link link;
    singa_plan_codec codec;
    int nprocs;
    bool time_cut;          /* the feature cut timed as threads of this process (singa_plan_make) */
    singa_plan_row *rows;   /* ranked, best first */
    int nrows;
    char why_none[256];     /* why the net admits no distributed configuration ("" when it does) */
} singa_plan;

/* Profiles the job and ranks the configurations of nprocs processes its net allows (with the
 * one-process run as a row).  With time_cut, the feature cut among the processes is timed too,
 * as threads of this one, when this machine has a core for each (a process that only follows
 * another's choice leaves the cores to it).  -1 with err when the profile cannot run; a net that
 * admits no distributed configuration is not an error here (why_none says why). */
int singa_plan_make(singa_plan *plan, const singa_conf *conf, const singa_registry *reg, int nprocs,
                    const singa_plan_link *link, bool time_cut, singa_err *err);
/* Orders rows best predicted images/s first; of rows within 3% of each other (a tie: the profile
 * and the link's measurement move more than that from run to run), the one that compresses less
 * (none, then fp16 or bf16, then the rest) goes first. */
void singa_plan_order(singa_plan_row *rows, int n);
/* Ranks again for another number of processes (--simulate) on the same measurements. */
int singa_plan_rank(singa_plan *plan, const singa_conf *conf, const singa_registry *reg, int nprocs, singa_err *err);
void singa_plan_free(singa_plan *plan);
/* A row's job: conf with its cluster (and neuralnet) replaced by the row's; NULL out of memory. */
singa_conf *singa_plan_apply(const singa_plan *plan, const singa_plan_row *row, const singa_conf *conf);
/* cluster.plan = "auto": the job planned over the processes launched (the link: local, or
 * $SINGA_PLAN_LINK), rank 0's choice handed to the others at the coordinator's address; returns the job to run with the best configuration (the caller frees it)
 * and its predicted step in *predicted_step, or NULL when it runs with its own cluster fields.
 * line (a "plan: " line to log) says which. */
singa_conf *singa_plan_auto(const singa_conf *conf, const singa_registry *reg, char *line, size_t len,
                            double *predicted_step);
/* The table, and the JSON lines of --plan-out. */
int singa_plan_print(const singa_plan *plan, FILE *f);
int singa_plan_write_jsonl(const singa_plan *plan, FILE *f);

#pragma GCC visibility pop

#endif
