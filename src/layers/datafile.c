/* Data files read whole into memory: gzip or plain files, IDX files and CSV text.  The input
 * layers keep what these return (kIDXData keeps an IDX file's bytes and converts a batch at a
 * time, so a data set costs its file size); singa.read_idx and singa.read_csv turn the same into
 * tensors, so a file means the same to a job and to singa.predict. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "layers/datafile.h"

int singa_file_read(const char *path, uint8_t **out, size_t *len, singa_err *err)
{
    *out = NULL;
    *len = 0;
    errno = 0;
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return singa_err_set(err, "file '%s': %s", path, strerror(errno ? errno : ENOENT));
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    int rc = -1;
    if (!buf) {
        singa_err_set(err, "file '%s': out of memory", path);
        goto out;
    }
    for (;;) {
        if (n == cap) {
            uint8_t *grown = cap < ((size_t)1 << 40) ? realloc(buf, 2 * cap) : NULL;
            if (!grown) {
                singa_err_set(err, "file '%s': out of memory after %zu bytes", path, n);
                goto out;
            }
            buf = grown;
            cap *= 2;
        }
        size_t want = cap - n > (1u << 30) ? (1u << 30) : cap - n;
        int r = gzread(gz, buf + n, (unsigned)want);
        if (r < 0) {
            int zerr;
            const char *zmsg = gzerror(gz, &zerr);
            singa_err_set(err, "file '%s': %s", path, zerr == Z_ERRNO ? strerror(errno) : zmsg);
            goto out;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *out = buf;
    *len = n;
    buf = NULL;
    rc = 0;
out:
    free(buf);
    gzclose(gz);
    return rc;
}

/* ---- IDX ---- */

static int read_full(gzFile f, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        int r = gzread(f, (char *)buf + got, (unsigned)(n - got > (1u << 30) ? (1u << 30) : n - got));
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got == n ? 0 : -1;
}

/* The header of an IDX file open as gz: its dims, count and record size, checked. */
static int idx_header(gzFile gz, singa_idx *f, const char *path, singa_err *err)
{
    uint8_t head[4], dimb[16];
    if (read_full(gz, head, 4) < 0 || head[0] || head[1])
        return singa_err_set(err, "file '%s': not an IDX file (bad magic)", path);
    if (head[2] != 0x08 || head[3] < 1 || head[3] > 4)
        return singa_err_set(err, "file '%s': unsupported IDX element type 0x%02x or %d dimensions (unsigned bytes, 1 to 4 dimensions supported)",
                             path, head[2], head[3]);
    f->ndim = head[3];
    if (read_full(gz, dimb, 4u * (unsigned)f->ndim) < 0)
        return singa_err_set(err, "file '%s': truncated header", path);
    f->record = 1;
    for (int i = 0; i < f->ndim; i++) {
        uint32_t d = (uint32_t)dimb[4 * i] << 24 | (uint32_t)dimb[4 * i + 1] << 16 |
                     (uint32_t)dimb[4 * i + 2] << 8 | dimb[4 * i + 3];
        if (d == 0 || d > (1u << 30))
            return singa_err_set(err, "file '%s': dimension %d is %u", path, i, d);
        f->dims[i] = (int)d;
        if (i && (f->record *= d) > (1u << 24)) /* checked each time, so it cannot wrap */
            break;
    }
    f->count = (size_t)f->dims[0];
    if (f->record > (1u << 24) || f->count * f->record > ((size_t)1 << 36))
        return singa_err_set(err, "file '%s': implausible size", path);
    return 0;
}

/* Streams the records straight into their buffer (no second copy of a large set). */
static int idx_read(singa_idx *f, const char *path, bool header_only, singa_err *err)
{
    memset(f, 0, sizeof *f);
    errno = 0;
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return singa_err_set(err, "file '%s': %s", path, strerror(errno ? errno : ENOENT));
    int rc = idx_header(gz, f, path, err);
    size_t bytes = f->count * f->record;
    if (rc == 0 && !header_only && !(f->bytes = malloc(bytes ? bytes : 1)))
        rc = singa_err_set(err, "file '%s': out of memory for %zu bytes", path, bytes);
    if (rc == 0 && !header_only && read_full(gz, f->bytes, bytes) < 0) {
        int zerr;
        const char *zmsg = gzerror(gz, &zerr);
        rc = singa_err_set(err, "file '%s': %s (expected %zu records of %zu bytes)", path, zerr < 0 ? zmsg : "truncated",
                           f->count, f->record);
    }
    gzclose(gz);
    if (rc < 0)
        singa_idx_free(f);
    return rc;
}

int singa_idx_read(singa_idx *f, const char *path, singa_err *err) { return idx_read(f, path, false, err); }

int singa_idx_read_header(singa_idx *f, const char *path, singa_err *err) { return idx_read(f, path, true, err); }

void singa_idx_free(singa_idx *f)
{
    free(f->bytes);
    f->bytes = NULL;
}

/* ---- CSV ---- */

int singa_csv_check_sep(const char *sep, singa_err *err)
{
    if (strlen(sep) != 1 || strchr("0123456789.+-eE", sep[0]))
        return singa_err_set(err, "'separator' must be one character that cannot be part of a number, got \"%s\"", sep);
    return 0;
}

/* Appends value to a growing float array. */
static int push(float **v, size_t *n, size_t *cap, float x)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        float *g = realloc(*v, c * sizeof *g);
        if (!g)
            return -1;
        *v = g;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

/* Parses the text (NUL-terminated, len bytes) into rows of `ncols` numbers. */
static int parse(const char *path, char *text, size_t len, char sep, int skip, float **vals, size_t *rows,
                 int *ncols, size_t **lines, singa_err *err)
{
    size_t n = 0, cap = 0, line = 0, lines_cap = 0;
    long first_line = 0;
    *ncols = 0;
    *rows = 0;
    for (char *p = text, *end = text + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *eol = nl ? nl : end;
        line++;
        if (eol > p && eol[-1] == '\r')
            eol[-1] = '\0';
        *eol = '\0';
        char *s = p;
        p = eol + 1;
        if (line <= (size_t)skip)
            continue; /* the header */
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            continue; /* a blank line */
        int cols = 0;
        for (char *field = s;; cols++) {
            char *stop = strchr(field, sep);
            if (stop)
                *stop = '\0';
            char *num_end;
            float v = strtof(field, &num_end);
            while (*num_end == ' ' || *num_end == '\t')
                num_end++;
            if (num_end == field || *num_end || !isfinite(v)) {
                while (*field == ' ' || *field == '\t')
                    field++;
                free(*vals);
                *vals = NULL;
                if (!*field)
                    return singa_err_set(err, "file '%s' line %zu, column %d: empty field", path, line, cols + 1);
                return singa_err_set(err, "file '%s' line %zu, column %d: '%.40s' is not a finite number", path, line,
                                     cols + 1, field);
            }
            if (push(vals, &n, &cap, v) < 0) {
                free(*vals);
                *vals = NULL;
                return singa_err_set(err, "file '%s': out of memory at line %zu", path, line);
            }
            if (!stop) {
                cols++;
                break;
            }
            field = stop + 1;
        }
        if (*ncols == 0) {
            *ncols = cols;
            first_line = (long)line;
        } else if (cols != *ncols) {
            free(*vals);
            *vals = NULL;
            return singa_err_set(err, "file '%s' line %zu has %d columns but line %ld has %d", path, line, cols,
                                 first_line, *ncols);
        }
        if (lines && *rows == lines_cap) {
            size_t c = lines_cap ? 2 * lines_cap : 1024;
            size_t *g = realloc(*lines, c * sizeof *g);
            if (!g) {
                free(*vals);
                *vals = NULL;
                return singa_err_set(err, "file '%s': out of memory at line %zu", path, line);
            }
            *lines = g;
            lines_cap = c;
        }
        if (lines)
            (*lines)[*rows] = line;
        (*rows)++;
    }
    return 0;
}

/* The file's text up to the end of its first line that is not blank (or the whole file). */
static int first_line(const char *path, uint8_t **out, size_t *len, singa_err *err)
{
    errno = 0;
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return singa_err_set(err, "file '%s': %s", path, strerror(errno ? errno : ENOENT));
    size_t n = 0, cap = 0;
    uint8_t *buf = NULL;
    bool text = false; /* a character that is not blank seen */
    for (int got = 1; got > 0;) {
        if (n + 65536 > cap) {
            uint8_t *g = realloc(buf, cap = 2 * cap + 65536);
            if (!g) {
                free(buf);
                gzclose(gz);
                return singa_err_set(err, "file '%s': out of memory", path);
            }
            buf = g;
        }
        got = gzread(gz, buf + n, 65536);
        for (int i = 0; i < got; i++, n++) {
            if (buf[n] == '\n' && text) {
                got = 0;
                break;
            }
            text |= !strchr(" \t\r\n", buf[n]);
        }
    }
    gzclose(gz);
    *out = buf;
    *len = n;
    return 0;
}

static int csv_read(const char *path, char sep, int skip, bool first, float **vals, size_t *rows, int *ncols,
                    size_t **lines, singa_err *err)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    *vals = NULL;
    if (lines)
        *lines = NULL;
    if ((first ? first_line(path, &bytes, &len, err) : singa_file_read(path, &bytes, &len, err)) < 0)
        return -1;
    char *text = realloc(bytes, len + 1); /* room for the terminating NUL */
    if (!text) {
        free(bytes);
        return singa_err_set(err, "file '%s': out of memory", path);
    }
    text[len] = '\0';
    if (memchr(text, '\0', len)) {
        free(text);
        return singa_err_set(err, "file '%s' is not a text file (it holds a NUL byte)", path);
    }
    int rc = parse(path, text, len, sep, skip, vals, rows, ncols, lines, err);
    free(text);
    if (rc == 0 && *rows == 0) {
        free(*vals);
        *vals = NULL;
        rc = singa_err_set(err, "file '%s' holds no records (it is empty or blank%s)", path, skip ? " after its header" : "");
    }
    if (rc < 0 && lines) {
        free(*lines);
        *lines = NULL;
    }
    return rc;
}

int singa_csv_read(const char *path, char sep, int skip, float **vals, size_t *rows, int *ncols, size_t **lines,
                   singa_err *err)
{
    return csv_read(path, sep, skip, false, vals, rows, ncols, lines, err);
}

int singa_csv_read_first(const char *path, char sep, float **vals, int *ncols, size_t **lines, singa_err *err)
{
    size_t rows;
    return csv_read(path, sep, 0, true, vals, &rows, ncols, lines, err);
}
