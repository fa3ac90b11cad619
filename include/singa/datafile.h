/* Data files read whole into memory: IDX files of bytes (MNIST's format) and text files of
 * numbers (CSV), as the input layers kIDXData and kCSVInput read them and singa.read_idx and
 * singa.read_csv return them.  Both accept gzip-compressed files.  Errors name the file
 * ("file 'x': ..."); a caller adds its own context in front. */
#ifndef SINGA_DATAFILE_H
#define SINGA_DATAFILE_H

#include <stddef.h>
#include <stdint.h>

#include "singa/error.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

/* An IDX file of unsigned bytes, 1 to 4 dimensions: dims[0] records of `record` bytes each
 * (count bytes in all). */
typedef struct singa_idx {
    uint8_t *bytes;
    int ndim;
    int dims[4];
    size_t count, record;
} singa_idx;

int singa_idx_read(singa_idx *f, const char *path, singa_err *err);
void singa_idx_free(singa_idx *f);

/* A text file of numbers, `sep` between columns, blank lines skipped, after its first `skip`
 * lines (a header): every row must have as many columns as the first and only finite numbers.
 * *vals (malloc'd) holds rows x ncols numbers; a file without rows is an error.  With `lines`,
 * *lines (malloc'd) gives each row's line in the file (from 1), for messages about a row. */
int singa_csv_read(const char *path, char sep, int skip, float **vals, size_t *rows, int *ncols, size_t **lines,
                   singa_err *err);
/* Whether `sep` can separate numbers: one character that is no part of one (the message starts
 * with "'separator'"). */
int singa_csv_check_sep(const char *sep, singa_err *err);

#pragma GCC visibility pop

#endif
