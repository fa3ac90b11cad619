/* SINGA's record containers (kvfile.c): v0.1's DataShard (`folder/shard.dat`) and v0.2-v0.3's
 * KVFile (a plain file, or a folder holding shard.dat), read whole into memory. */
#ifndef SINGA_LAYERS_KVFILE_H
#define SINGA_LAYERS_KVFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "singa/error.h"

typedef struct singa_kv {
    size_t at;      /* offset of the tuple in the file */
    size_t key_at, key_len;
    size_t val_at, val_len;
} singa_kv;

typedef struct singa_kvfile {
    char *path; /* the file read: folder/shard.dat for a folder */
    uint8_t *bytes;
    size_t len;
    singa_kv *kv;
    size_t count;
} singa_kvfile;

/* Reads every tuple of path (a file, or a folder holding shard.dat; with `folder`, as v0.1's
 * DataShard, a path that does not exist is taken for a folder); a truncated tuple is an error
 * naming the file, the last key read and the byte offset. */
int singa_kvfile_open(singa_kvfile *f, const char *path, bool folder, singa_err *err);
void singa_kvfile_free(singa_kvfile *f);
/* Tuple i's key, printable (other bytes as \xNN), into buf. */
const char *singa_kvfile_key(const singa_kvfile *f, size_t i, char *buf, size_t cap);

#endif
