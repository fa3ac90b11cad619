/* Loading a checkpoint into what it was written from: a plain job (resume), a server (its shard)
 * and a trained model (predict) load through the one loader here, which checks every entry
 * before it copies any, so a file that does not fit leaves the object untouched and an older
 * checkpoint can be tried. */
#ifndef SINGA_CKPT_LOAD_H
#define SINGA_CKPT_LOAD_H

#include <stdbool.h>

#include "singa/checkpoint.h"

/* fsyncs the folder holding file `path`, so a rename into it lasts (checkpoints, ONNX models). */
int singa_ckpt_fsync_dir(const char *path);
/* Whether entry e holds `dtype` values of shape dims[ndim]. */
bool singa_ckpt_entry_fits(const singa_ckpt_entry *e, int dtype, int ndim, const int *dims);
/* Its shape as the messages write it, "10x784". */
void singa_ckpt_entry_shape(const singa_ckpt_entry *e, char *buf, size_t len);

/* Visits every entry an object holds: its name, dtype, shape and memory; returns -1 to stop. */
typedef int (*singa_ckpt_visit_fn)(void *ud, const char *name, int dtype, int ndim, const int *dims, void *data,
                                   singa_err *err);
/* Calls visit for every entry of obj, in the same order every time. */
typedef int (*singa_ckpt_each_fn)(void *obj, singa_ckpt_visit_fn visit, void *ud, singa_err *err);

/* What a loader's caller decides; ud is theirs.  Only mismatch is required. */
typedef struct singa_ckpt_load_ops {
    /* An entry of the object the file lacks: 0 leaves it as it is, -1 (err set) refuses the file
     * (NULL: refused as "tensor '<name>' is missing"). */
    int (*missing)(void *ud, const char *name, singa_err *err);
    /* An entry of another dtype or shape in the file: sets err, returns -1. */
    int (*mismatch)(void *ud, const char *name, const singa_ckpt_entry *e, int ndim, const int *dims, singa_err *err);
    /* More than dtype and shape to check of an entry that fits (NULL: nothing). */
    int (*check)(void *ud, const char *name, const singa_ckpt_entry *e, const void *data, singa_err *err);
    /* An entry of the file the object does not visit: 0 when it may be there, -1 (err set) when
     * not (NULL: any may). */
    int (*extra)(void *ud, const char *name, singa_err *err);
    /* After every entry was checked, before any is copied: the rest of the file's checks. */
    int (*validate)(void *ud, singa_err *err);
    /* Copies one entry (NULL: all of its bytes into the object's memory). */
    void (*apply)(void *ud, const char *name, const singa_ckpt_entry *e, void *data);
} singa_ckpt_load_ops;

/* Checks every entry each() visits against checkpoint ck (read from `path`, named in the default
 * messages), then the file's other entries, then validate; only when all pass, copies them. */
int singa_ckpt_load(const singa_ckpt *ck, const char *path, singa_ckpt_each_fn each, void *obj,
                    const singa_ckpt_load_ops *ops, void *ud, singa_err *err);

#endif
