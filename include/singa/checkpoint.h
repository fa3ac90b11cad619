/* Checkpoint files.  Format (little-endian), version 1:
 *   header  "SINGACKP" | u32 version | u32 entry count | u64 step
 *   entry   u16 name length | name | u8 dtype (0 f32, 1 i64, 2 u64, 3 bytes) | u8 ndim | u32 dims[ndim]
 *           | u64 payload bytes | u32 CRC-32 of payload | payload
 *   trailer "SINGAEND" | u32 CRC-32 of every byte before the trailer
 * Files are written to "<name>.tmp", fsync'd, renamed into place and the directory fsync'd, so a
 * crash leaves either the old set of checkpoints or the new one, never a half-written file.
 * Payloads are in the host's byte order (little-endian on the platforms we build for). */
#ifndef SINGA_CHECKPOINT_H
#define SINGA_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "singa/error.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

enum { SINGA_CKPT_F32 = 0, SINGA_CKPT_I64 = 1, SINGA_CKPT_U64 = 2, SINGA_CKPT_U8 = 3 };

typedef struct singa_ckpt_entry {
    char *name;
    int dtype;
    int ndim;
    uint32_t dims[4];
    size_t bytes;
    void *data; /* owned when read from a file */
} singa_ckpt_entry;

typedef struct singa_ckpt {
    uint64_t step;
    singa_ckpt_entry *entries;
    size_t n, cap;
} singa_ckpt;

/* Building: entries point at the caller's memory until written. */
void singa_ckpt_init(singa_ckpt *c, uint64_t step);
int singa_ckpt_add(singa_ckpt *c, const char *name, int dtype, int ndim, const int *dims,
                   const void *data, singa_err *err);
int singa_ckpt_write(const singa_ckpt *c, const char *path, singa_err *err);
/* Reads and verifies every CRC; errors name the file, the entry and the reason. */
int singa_ckpt_read(singa_ckpt *c, const char *path, singa_err *err);
const singa_ckpt_entry *singa_ckpt_find(const singa_ckpt *c, const char *name);
/* Frees what read allocated (entries' names always, payloads when owned). */
void singa_ckpt_free(singa_ckpt *c, int owns_data);

/* Checkpoint directories: files "step%09d.ckpt", newest first. */
int singa_ckpt_dir_list(const char *dir, uint64_t **steps, size_t *n, singa_err *err);
void singa_ckpt_path(char *buf, size_t len, const char *dir, uint64_t step);
/* Removes all but the newest `keep` checkpoints and the one of step `spare` (-1: none), and
 * "*.ckpt.tmp" files a crash left. */
int singa_ckpt_dir_prune(const char *dir, int keep, int64_t spare, singa_err *err);
/* Removes the "step*.ckpt.tmp" files a crash left (nothing may be writing one). */
void singa_ckpt_dir_clean(const char *dir);

/* A distributed job's checkpoint of step S is a set of files in the same format: one per server,
 * "stepS.s<group>.<id>.ckpt" (its slices of the params and their updater state), and one per
 * worker, "stepS.w<group>.<id>.ckpt" (its own state: generator, data cursors, display window,
 * the params no server holds), S as %09d.  A step is a checkpoint once every file of the
 * topology is there. */
enum { SINGA_CKPT_LOCAL = 0, SINGA_CKPT_SERVER = 's', SINGA_CKPT_WORKER = 'w' };
typedef struct singa_ckpt_file {
    uint64_t step;
    int kind; /* SINGA_CKPT_LOCAL ("stepS.ckpt"), _SERVER or _WORKER */
    int group, id;
} singa_ckpt_file;
void singa_ckpt_part_path(char *buf, size_t len, const char *dir, uint64_t step, int kind, int group, int id);
/* Every checkpoint file of a directory (none when it does not exist), newest step first. */
int singa_ckpt_dir_files(const char *dir, singa_ckpt_file **files, size_t *n, singa_err *err);
/* Removes the "*.ckpt.tmp" files a crash left whose part `which` selects (all of them when it is
 * NULL, as singa_ckpt_dir_clean): a process lost mid-write never renames its own. */
void singa_ckpt_dir_drop_tmp(const char *dir, bool (*which)(const singa_ckpt_file *f, void *ud), void *ud);
int singa_mkdirs(const char *dir, singa_err *err);

#pragma GCC visibility pop

#endif
