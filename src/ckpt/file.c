/* Checkpoint files: see include/singa/checkpoint.h for the format and the crash-safety rules. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "singa/checkpoint.h"
#include "ckpt/load.h"

#define MAGIC "SINGACKP"
#define TRAILER "SINGAEND"
#define VERSION 1u

static size_t dtype_size(int dtype) { return dtype == SINGA_CKPT_F32 ? 4 : dtype == SINGA_CKPT_U8 ? 1 : 8; }

void singa_ckpt_init(singa_ckpt *c, uint64_t step)
{
    memset(c, 0, sizeof *c);
    c->step = step;
}

int singa_ckpt_add(singa_ckpt *c, const char *name, int dtype, int ndim, const int *dims,
                   const void *data, singa_err *err)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 32;
        singa_ckpt_entry *e = realloc(c->entries, cap * sizeof *e);
        if (!e)
            return singa_err_set(err, "out of memory");
        c->entries = e;
        c->cap = cap;
    }
    singa_ckpt_entry *e = &c->entries[c->n];
    memset(e, 0, sizeof *e);
    if (!(e->name = strdup(name)))
        return singa_err_set(err, "out of memory");
    e->dtype = dtype;
    e->ndim = ndim;
    e->bytes = dtype_size(dtype);
    for (int i = 0; i < ndim; i++) {
        e->dims[i] = (uint32_t)dims[i];
        e->bytes *= (size_t)dims[i];
    }
    e->data = (void *)data;
    c->n++;
    return 0;
}

const singa_ckpt_entry *singa_ckpt_find(const singa_ckpt *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->entries[i].name, name) == 0)
            return &c->entries[i];
    return NULL;
}

void singa_ckpt_free(singa_ckpt *c, int owns_data)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->entries[i].name);
        if (owns_data)
            free(c->entries[i].data);
    }
    free(c->entries);
    memset(c, 0, sizeof *c);
}

/* A writer that keeps the running CRC of everything written, for the trailer. */
typedef struct wr {
    FILE *f;
    uLong crc;
    int failed;
} wr;

static void put(wr *w, const void *p, size_t n)
{
    if (!w->failed && fwrite(p, 1, n, w->f) != n)
        w->failed = 1;
    w->crc = crc32_z(w->crc, p, n);
}

static void put_u(wr *w, uint64_t v, int bytes)
{
    uint8_t b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    put(w, b, (size_t)bytes);
}

int singa_ckpt_fsync_dir(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = 0;
    else
        snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int singa_ckpt_write(const singa_ckpt *c, const char *path, singa_err *err)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    wr w = {.f = fopen(tmp, "wb"), .crc = crc32_z(0, NULL, 0)};
    if (!w.f)
        return singa_err_set(err, "checkpoint '%s': cannot create: %s", tmp, strerror(errno));
    put(&w, MAGIC, 8);
    put_u(&w, VERSION, 4);
    put_u(&w, c->n, 4);
    put_u(&w, c->step, 8);
    for (size_t i = 0; i < c->n; i++) {
        const singa_ckpt_entry *e = &c->entries[i];
        size_t len = strlen(e->name);
        put_u(&w, len, 2);
        put(&w, e->name, len);
        put_u(&w, (uint64_t)e->dtype, 1);
        put_u(&w, (uint64_t)e->ndim, 1);
        for (int d = 0; d < e->ndim; d++)
            put_u(&w, e->dims[d], 4);
        put_u(&w, e->bytes, 8);
        put_u(&w, crc32_z(crc32_z(0, NULL, 0), e->data, e->bytes), 4);
        put(&w, e->data, e->bytes);
    }
    uLong total = w.crc;
    put(&w, TRAILER, 8);
    put_u(&w, total, 4);
    int failed = w.failed || fflush(w.f) != 0 || fsync(fileno(w.f)) != 0;
    int saved = errno;
    failed |= fclose(w.f) != 0;
    if (failed) {
        unlink(tmp);
        return singa_err_set(err, "checkpoint '%s': write failed: %s", tmp, strerror(saved ? saved : EIO));
    }
    if (rename(tmp, path) != 0) {
        saved = errno;
        unlink(tmp);
        return singa_err_set(err, "checkpoint '%s': rename failed: %s", path, strerror(saved));
    }
    if (singa_ckpt_fsync_dir(path) != 0)
        return singa_err_set(err, "checkpoint '%s': syncing its directory failed: %s", path, strerror(errno));
    return 0;
}

/* A bounds-checked reader over the file's bytes. */
typedef struct rd {
    const uint8_t *p;
    size_t len, off;
} rd;

static int get(rd *r, void *out, size_t n)
{
    if (r->len - r->off < n)
        return -1;
    memcpy(out, r->p + r->off, n);
    r->off += n;
    return 0;
}

static int get_u(rd *r, uint64_t *v, int bytes)
{
    uint8_t b[8];
    if (get(r, b, (size_t)bytes) < 0)
        return -1;
    *v = 0;
    for (int i = 0; i < bytes; i++)
        *v |= (uint64_t)b[i] << (8 * i);
    return 0;
}

static int read_file(const char *path, uint8_t **buf, size_t *len, singa_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return singa_err_set(err, "checkpoint '%s': cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !(*buf = malloc((size_t)st.st_size + 1))) {
        fclose(f);
        return singa_err_set(err, "checkpoint '%s': cannot read", path);
    }
    *len = fread(*buf, 1, (size_t)st.st_size, f);
    int bad = ferror(f) || *len != (size_t)st.st_size;
    fclose(f);
    if (bad) {
        free(*buf);
        return singa_err_set(err, "checkpoint '%s': read error", path);
    }
    return 0;
}

/* Its header: magic, version, entry count, step. */
static int read_header(rd *r, const char *path, uint64_t *count, uint64_t *step, singa_err *err)
{
    char magic[8];
    uint64_t version;
    if (get(r, magic, 8) < 0 || memcmp(magic, MAGIC, 8) != 0)
        return singa_err_set(err, "checkpoint '%s': not a singa checkpoint (bad magic)", path);
    if (get_u(r, &version, 4) < 0 || get_u(r, count, 4) < 0 || get_u(r, step, 8) < 0)
        return singa_err_set(err, "checkpoint '%s': truncated header", path);
    if (version != VERSION)
        return singa_err_set(err, "checkpoint '%s': format version %llu, this program reads version %u", path,
                             (unsigned long long)version, VERSION);
    return 0;
}

/* Entry i (from 0), verified against its CRC, added to c with a copy of its payload. */
static int read_entry(rd *r, singa_ckpt *c, const char *path, uint64_t i, singa_err *err)
{
    uint64_t nlen, dtype, ndim, bytes, crc, dim;
    char name[65536];
    if (get_u(r, &nlen, 2) < 0 || get(r, name, nlen) < 0)
        return singa_err_set(err, "checkpoint '%s': truncated in entry %llu", path, (unsigned long long)i + 1);
    name[nlen] = 0;
    int dims[4];
    if (get_u(r, &dtype, 1) < 0 || get_u(r, &ndim, 1) < 0 || dtype > 3 || ndim > 4)
        return singa_err_set(err, "checkpoint '%s': tensor '%s': bad header", path, name);
    size_t want = dtype_size((int)dtype);
    for (uint64_t d = 0; d < ndim; d++) {
        if (get_u(r, &dim, 4) < 0)
            return singa_err_set(err, "checkpoint '%s': tensor '%s': truncated", path, name);
        dims[d] = (int)dim;
        want *= dim;
    }
    if (get_u(r, &bytes, 8) < 0 || get_u(r, &crc, 4) < 0 || bytes != want || r->len - r->off < bytes)
        return singa_err_set(err, "checkpoint '%s': tensor '%s': truncated or inconsistent size", path, name);
    if (crc32_z(crc32_z(0, NULL, 0), r->p + r->off, bytes) != crc)
        return singa_err_set(err, "checkpoint '%s': tensor '%s': CRC mismatch (the data is corrupt)", path, name);
    void *data = malloc(bytes ? bytes : 1);
    if (!data || singa_ckpt_add(c, name, (int)dtype, (int)ndim, dims, data, err) < 0) {
        free(data);
        return singa_err_set(err, "checkpoint '%s': out of memory", path);
    }
    get(r, data, bytes);
    return 0;
}

/* The trailer, and the CRC of every byte before it, which end the file. */
static int read_trailer(rd *r, const char *path, singa_err *err)
{
    size_t body = r->off;
    char magic[8];
    uint64_t total;
    if (get(r, magic, 8) < 0 || memcmp(magic, TRAILER, 8) != 0 || get_u(r, &total, 4) < 0)
        return singa_err_set(err, "checkpoint '%s': truncated (no trailer)", path);
    if (crc32_z(crc32_z(0, NULL, 0), r->p, body) != total || r->off != r->len)
        return singa_err_set(err, "checkpoint '%s': file CRC mismatch or trailing bytes (the file is corrupt)", path);
    return 0;
}

int singa_ckpt_read(singa_ckpt *c, const char *path, singa_err *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    singa_ckpt_init(c, 0);
    if (read_file(path, &buf, &len, err) < 0)
        return -1;
    rd r = {buf, len, 0};
    uint64_t count = 0, step = 0;
    int rc = read_header(&r, path, &count, &step, err);
    c->step = step;
    for (uint64_t i = 0; rc == 0 && i < count; i++)
        rc = read_entry(&r, c, path, i, err);
    if (rc == 0)
        rc = read_trailer(&r, path, err);
    free(buf);
    if (rc < 0)
        singa_ckpt_free(c, 1);
    return rc;
}
