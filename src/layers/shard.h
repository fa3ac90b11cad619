/* A SINGA record file as a data set (shard.c): a DataShard or KVFile whose records are all
 * image records of one shape, checked once when it is loaded. */
#ifndef SINGA_LAYERS_SHARD_H
#define SINGA_LAYERS_SHARD_H

#include "layers/image_record.h"
#include "layers/kvfile.h"

typedef struct singa_shard {
    singa_kvfile file;
    singa_image_record first; /* its shape is every record's */
    size_t size;              /* values per record */
} singa_shard;

/* Reads and checks every record (at least one): an error names the file, the record's key and
 * byte offset.  `folder` as for singa_kvfile_open. */
int singa_shard_load(singa_shard *s, const char *path, bool folder, singa_err *err);
void singa_shard_free(singa_shard *s);
/* Record i (checked by singa_shard_load). */
void singa_shard_record(const singa_shard *s, size_t i, singa_image_record *r);
/* A mean (or standard deviation) file of `size` values: a record's values, from a v0.3 KVFile
 * (its first record, as SINGA's LoadRecord read it; CIFAR's image_mean.bin has key "mean") or a
 * bare serialized record (v0.1's WriteProtoToBinaryFile). */
int singa_shard_mean(const char *path, size_t size, float *out, singa_err *err);

#endif
