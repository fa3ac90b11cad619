/* SINGA's DataShard (v0.1) and KVFile (v0.2-v0.3) share one layout: tuples of
 *   [size_t keylen][key][size_t vallen][value]
 * one after another, with no header, index or checksum, in the writer's byte order and size_t
 * width; SINGA ran on x86-64, so that is 8 bytes little-endian here, whatever the host.  Readers
 * went through the tuples in order and wrapped to the first at the end.  The file is read whole
 * and indexed once, so the input layers can reach record i directly (for shuffling and for a
 * checkpointed cursor). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "layers/datafile.h"
#include "layers/kvfile.h"

static uint64_t load64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static const char *printable(const uint8_t *k, size_t len, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t j = 0; j < len && n + 5 < cap; j++) {
        bool plain = k[j] >= 0x20 && k[j] < 0x7f && k[j] != '\'' && k[j] != '\\';
        n += (size_t)snprintf(buf + n, cap - n, plain ? "%c" : "\\x%02x", k[j]);
    }
    if (n + 5 >= cap && cap > 4)
        strcpy(buf + cap - 4, "...");
    return buf;
}

const char *singa_kvfile_key(const singa_kvfile *f, size_t i, char *buf, size_t cap)
{
    return printable(f->bytes + f->kv[i].key_at, f->kv[i].key_len, buf, cap);
}

/* Indexes the tuples.  A truncated one is named by its key when that was read whole, else by
 * the key before it. */
static int index_tuples(singa_kvfile *f, singa_err *err)
{
    size_t cap = 0, pos = 0;
    char key[80];
    while (pos < f->len) {
        size_t at = pos, left = f->len - pos;
        const char *what = NULL;
        uint64_t klen = 0, vlen = 0;
        if (left < 8)
            what = "key length";
        else if ((klen = load64(f->bytes + pos)) > left - 8)
            what = "key";
        else if (f->len - (pos += 8 + (size_t)klen) < 8)
            what = "value length";
        else if ((vlen = load64(f->bytes + pos)) > f->len - pos - 8)
            what = "value";
        if (what) {
            bool own = what[0] == 'v';
            if (own)
                printable(f->bytes + at + 8, (size_t)klen, key, sizeof key);
            else if (f->count)
                singa_kvfile_key(f, f->count - 1, key, sizeof key);
            return singa_err_set(err, "file '%s': tuple %zu at byte offset %zu (%s '%s') is truncated: its %s runs "
                                      "past the end of the file (%zu bytes), so this is not a complete DataShard/KVFile",
                                 f->path, f->count + 1, at, own ? "key" : "after key", own || f->count ? key : "", what,
                                 f->len);
        }
        if (f->count == cap) {
            cap = cap ? 2 * cap : 1024;
            singa_kv *g = realloc(f->kv, cap * sizeof *g);
            if (!g)
                return singa_err_set(err, "file '%s': out of memory at tuple %zu", f->path, f->count + 1);
            f->kv = g;
        }
        f->kv[f->count++] = (singa_kv){.at = at, .key_at = at + 8, .key_len = (size_t)klen, .val_at = pos + 8,
                                       .val_len = (size_t)vlen};
        pos += 8 + (size_t)vlen;
    }
    return 0;
}

int singa_kvfile_open(singa_kvfile *f, const char *path, bool folder, singa_err *err)
{
    memset(f, 0, sizeof *f);
    struct stat st;
    bool exists = stat(path, &st) == 0, dir = exists ? S_ISDIR(st.st_mode) : folder;
    size_t n = strlen(path) + sizeof "/shard.dat";
    if (!(f->path = malloc(n)))
        return singa_err_set(err, "out of memory");
    snprintf(f->path, n, dir ? "%s/shard.dat" : "%s", path);
    if (singa_file_read(f->path, &f->bytes, &f->len, err) < 0 || index_tuples(f, err) < 0) {
        singa_kvfile_free(f);
        return -1;
    }
    return 0;
}

void singa_kvfile_free(singa_kvfile *f)
{
    free(f->path);
    free(f->bytes);
    free(f->kv);
    memset(f, 0, sizeof *f);
}
