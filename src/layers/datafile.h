/* Data files read whole into memory (datafile.c): what the input layers (kIDXData, kCSVInput,
 * kRGBImage) share.  IDX and CSV files are public (singa/datafile.h), since singa.read_idx and
 * singa.read_csv read them too; reading any file whole is the layers' own. */
#ifndef SINGA_LAYERS_DATAFILE_H
#define SINGA_LAYERS_DATAFILE_H

#include <stddef.h>
#include <stdint.h>

#include "singa/datafile.h"
#include "singa/error.h"

/* Reads a whole file, plain or gzip-compressed, into *out (malloc'd; *len bytes). */
int singa_file_read(const char *path, uint8_t **out, size_t *len, singa_err *err);
/* singa_csv_read's first record only (one row, no header), for its columns. */
int singa_csv_read_first(const char *path, char sep, float **vals, int *ncols, size_t **lines, singa_err *err);
/* singa_idx_read's header only: dims, count and record, no bytes (f->bytes NULL). */
int singa_idx_read_header(singa_idx *f, const char *path, singa_err *err);

#endif
