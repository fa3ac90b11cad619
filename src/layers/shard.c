/* SINGA's record files as data sets.  Every record is decoded once at load time, so a file that
 * does not parse, or whose records differ in shape, is refused before training starts with the
 * record's key and byte offset; a batch decodes its records again (a few fields each), which
 * keeps the data set in memory at its file size. */
#include <stdlib.h>
#include <string.h>

#include "layers/datafile.h"
#include "layers/shard.h"

/* Decodes tuple i's value; errors name the file, key and offset. */
static int decode(const singa_kvfile *f, size_t i, singa_image_record *r, singa_err *err)
{
    const singa_kv *kv = &f->kv[i];
    if (singa_image_record_decode(r, f->bytes + kv->val_at, kv->val_len, kv->val_at, err) == 0)
        return 0;
    char key[80];
    return singa_err_prefix(err, "file '%s': record %zu (key '%s', tuple at byte offset %zu) does not parse: ", f->path,
                            i + 1, singa_kvfile_key(f, i, key, sizeof key), kv->at);
}

int singa_shard_load(singa_shard *s, const char *path, bool folder, singa_err *err)
{
    memset(s, 0, sizeof *s);
    if (singa_kvfile_open(&s->file, path, folder, err) < 0)
        return -1;
    const singa_kvfile *f = &s->file;
    if (f->count == 0) {
        singa_err_set(err, "file '%s' holds no records", f->path);
        goto fail;
    }
    for (size_t i = 0; i < f->count; i++) {
        singa_image_record r;
        if (decode(f, i, &r, err) < 0)
            goto fail;
        if (i == 0) {
            s->first = r;
            s->size = singa_image_record_size(&r);
            continue;
        }
        if (r.ndim != s->first.ndim || memcmp(r.shape, s->first.shape, (size_t)r.ndim * sizeof r.shape[0]) != 0) {
            char key[80], key0[80], a[96], b[96];
            singa_err_set(err, "file '%s': record %zu (key '%s', tuple at byte offset %zu) has shape %s but the first "
                               "record (key '%s') has %s; every record must have the same shape",
                          f->path, i + 1, singa_kvfile_key(f, i, key, sizeof key), f->kv[i].at,
                          singa_image_record_shape_str(&r, a, sizeof a), singa_kvfile_key(f, 0, key0, sizeof key0),
                          singa_image_record_shape_str(&s->first, b, sizeof b));
            goto fail;
        }
    }
    return 0;
fail:
    singa_shard_free(s);
    return -1;
}

void singa_shard_free(singa_shard *s) { singa_kvfile_free(&s->file); }

void singa_shard_record(const singa_shard *s, size_t i, singa_image_record *r)
{
    decode(&s->file, i, r, NULL);
}

int singa_shard_mean(const char *path, size_t size, float *out, singa_err *err)
{
    singa_image_record r;
    uint8_t *bytes = NULL;
    size_t len;
    singa_kvfile f = {0};
    /* A KVFile opens with an 8-byte key length, small enough that its high bytes are 0; a bare
     * record opens with a tag, and tag byte 0 or a 0 after it cannot start a valid record. */
    if (singa_file_read(path, &bytes, &len, err) < 0)
        return -1;
    bool kv = len >= 8 && memcmp(bytes + 1, "\0\0\0\0\0\0\0", 7) == 0;
    int rc = -1;
    if (kv) {
        free(bytes);
        bytes = NULL;
        if (singa_kvfile_open(&f, path, false, err) < 0)
            return -1;
        rc = f.count ? decode(&f, 0, &r, err) : singa_err_set(err, "file '%s' holds no record", f.path);
    } else if (singa_image_record_decode(&r, bytes, len, 0, err) < 0) {
        singa_err_prefix(err, "file '%s' is not a serialized record (v0.1) nor a KVFile (v0.3): ", path);
    } else {
        rc = 0;
    }
    if (rc == 0 && singa_image_record_size(&r) != size)
        rc = singa_err_set(err, "file '%s' holds %zu values; want %zu, one per value of a record", path,
                           singa_image_record_size(&r), size);
    if (rc == 0)
        singa_image_record_values(&r, out);
    singa_kvfile_free(&f);
    free(bytes);
    return rc;
}
