/* The record cursor shared by the input layers that hold a data set in memory (records.c):
 * kIDXData, kCSVInput and kRGBImage read fields `batchsize`, `shuffle` and `random_skip` through
 * it and checkpoint its cursor. */
#ifndef SINGA_LAYERS_RECORDS_H
#define SINGA_LAYERS_RECORDS_H

#include "singa/layer.h"

typedef struct singa_records {
    int batch, skip;
    int before, after; /* records of the batch that other workers of the group read (net->split) */
    int in_batch;      /* records of the current batch read so far */
    bool shuffle;
    size_t count;
    uint32_t *perm; /* shuffle: this epoch's order */
    int64_t epoch, pos;
} singa_records;

/* Reads batchsize, shuffle and random_skip (before the data is loaded, so a bad field is
 * reported first).  With the net split over workers, batch becomes this worker's rows. */
int singa_records_conf(singa_records *r, singa_layer *l, singa_err *err);
/* Once the layer knows how many records it holds (at least one). */
int singa_records_start(singa_records *r, singa_layer *l, size_t count, singa_err *err);
/* The index of the next record; advances, wrapping (and reshuffling) at the end. */
size_t singa_records_next(singa_records *r, const singa_layer *l);
void singa_records_free(singa_records *r);
void singa_records_get_cursor(const singa_records *r, int64_t c[SINGA_CURSOR_LEN]);
int singa_records_set_cursor(singa_records *r, singa_layer *l, const int64_t c[SINGA_CURSOR_LEN],
                             singa_err *err);
/* Reads a whole file, plain or gzip-compressed, into *out (malloc'd; *len bytes).  Errors name
 * the file and the layer. */
int singa_records_read_file(singa_layer *l, const char *path, uint8_t **out, size_t *len, singa_err *err);

#endif
