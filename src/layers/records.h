/* The record cursor shared by the input layers that hold a data set in memory (records.c):
 * kIDXData, kCSVInput, kRGBImage, kShardData, kRecordInput and kStoreInput read fields `batchsize`,
 * `shuffle` (not the last three: SINGA had none) and `random_skip` through it and checkpoint its
 * cursor.  They keep it as the first member of their state, so a loss layer
 * finds the labels' largest value and its place from the input layer (singa_records_of). */
#ifndef SINGA_LAYERS_RECORDS_H
#define SINGA_LAYERS_RECORDS_H

#include <stddef.h>

#include "singa/layer.h"

typedef struct singa_records {
    int batch, skip;
    int before, after; /* records of the batch that other workers of the group read (net->split) */
    int in_batch;      /* records of the current batch read so far */
    bool shuffle;
    size_t count;
    uint32_t *perm; /* shuffle: this epoch's order */
    int64_t epoch, pos;
    /* The data set's labels, checked as they are read: the largest and where it is (`unit` n of
     * `file`), for a loss layer to check against its classes at setup. */
    bool labelled;
    float label_max;
    const char *label_file, *label_unit;
    size_t label_n;
} singa_records;

/* After each state struct of the layers above: `rec` comes first (singa_records_of). */
#define SINGA_RECORDS_FIRST(state) \
    _Static_assert(offsetof(state, rec) == 0, #state ": singa_records_of finds rec first in the state")

/* Reads batchsize, shuffle and random_skip (before the data is loaded, so a bad field is
 * reported first).  With the net split over workers, batch becomes this worker's rows. */
int singa_records_conf(singa_records *r, singa_layer *l, singa_err *err);
/* A pipeline's micro-batch copy other than the first (ctx.h twin): the state of copy 0's layer,
 * whose data set l reads rather than loading it again (the copies are freed together and a
 * borrower's destroy leaves the set alone), with its labels' summary taken into r; NULL
 * otherwise: l loads the set.  Each copy keeps its own cursor and shuffle order, as before.  A
 * plugin's input layer cannot reach the twin (the context is the host's) and still loads its
 * set in every copy. */
const void *singa_records_twin(singa_records *r, const singa_layer *l);
/* Once the layer knows how many records it holds (at least one). */
int singa_records_start(singa_records *r, singa_layer *l, size_t count, singa_err *err);
/* The index of the next record; advances, wrapping (and reshuffling) at the end. */
size_t singa_records_next(singa_records *r, const singa_layer *l);
/* Between batches: the next batch l reads is worker `share`'s rows (of l->ctx->split) of the
 * batch it read last, then the cursor is where it was, past that batch (cluster.shrink =
 * "share": a survivor trains a lost worker's rows too); share = its own index only restores its
 * rows, the cursor left alone.  -1 when l is not one of the layers above, or is mid-batch. */
int singa_records_share(singa_layer *l, int share);
void singa_records_free(singa_records *r);
/* Takes one label as the layer reads its data set: a class index (a whole number >= 0), else an
 * error naming `file` and where in it: `unit` ("line", "record") n, counting from 1. */
int singa_records_label(singa_records *r, singa_layer *l, float v, const char *file, const char *unit, size_t n,
                        singa_err *err);
/* The records of l when it is one of the layers above, else NULL. */
const singa_records *singa_records_of(const singa_layer *l);
/* Where r's largest label is, as "line 3 of file 'x'", into buf. */
const char *singa_records_label_where(const singa_records *r, char *buf, size_t cap);
/* The get_cursor and set_cursor of the layers above (their state starts with `rec`). */
void singa_records_get_cursor(const singa_layer *l, int64_t c[SINGA_CURSOR_LEN]);
int singa_records_set_cursor(singa_layer *l, const int64_t c[SINGA_CURSOR_LEN], singa_err *err);
/* Reads a whole file, plain or gzip-compressed, into *out (malloc'd; *len bytes).  Errors name
 * the file and the layer. */
int singa_records_read_file(singa_layer *l, const char *path, uint8_t **out, size_t *len, singa_err *err);

#endif
