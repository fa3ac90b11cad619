/* A metrics file is what write.c writes: either JSON lines, one flat object per
 * result ({"step": N, "phase": "train", "group": G, "loss": x, "accuracy": y, ...}) with, in a
 * distributed job, a line of the workers' step times among them (no "phase": not a result), or
 * CSV whose header begins step,phase,group,loss,accuracy.  images_per_sec and seconds are read
 * when present (by name: a CSV's header says which columns they are); further fields are ignored, so newer
 * files still open; a missing loss or accuracy (a net without one), JSON null and an empty CSV
 * cell are NAN.  Lines may be of any length: the workers' line grows with the workers. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metricsfile/metricsfile.h"

#define CSV_HEADER "step,phase,group,loss,accuracy"

static int phase_named(const char *s, size_t len, singa_phase *out)
{
    static const struct { const char *name; singa_phase phase; } names[] = {
        {"train", SINGA_PHASE_TRAIN}, {"test", SINGA_PHASE_TEST}, {"validation", SINGA_PHASE_VALIDATION}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i].name) == len && strncmp(names[i].name, s, len) == 0) {
            *out = names[i].phase;
            return 0;
        }
    return -1;
}

/* A number, or NAN for null and, when empty_ok, for an empty CSV cell; *end after it. */
static int number(const char *s, bool empty_ok, const char **end, double *out)
{
    s += strspn(s, " \t");
    if (strncmp(s, "null", 4) == 0) {
        *out = NAN, *end = s + 4;
        return 0;
    }
    if (empty_ok && (*s == ',' || !*s)) {
        *out = NAN, *end = s;
        return 0;
    }
    char *e;
    errno = 0;
    *out = strtod(s, &e);
    *end = e;
    return e == s || errno ? -1 : 0;
}

/* Steps and groups are counts: whole, in [0, max]. */
static int count(double v, int max, int *out)
{
    if (!(v >= 0 && v <= max && v == floor(v)))
        return -1;
    *out = (int)v;
    return 0;
}

/* Where the value of "key" begins in a flat JSON object, or NULL. */
static const char *json_value(const char *line, const char *key)
{
    size_t n = strlen(key);
    for (const char *k = strstr(line, key); k; k = strstr(k + 1, key)) {
        if (k == line || k[-1] != '"' || k[n] != '"')
            continue;
        const char *v = k + n + 1;
        v += strspn(v, " \t");
        if (*v == ':')
            return v + 1 + strspn(v + 1, " \t");
    }
    return NULL;
}

/* The JSON number of key, ending at a comma or the closing brace; missing or null: NAN. */
static int json_number(const char *line, const char *key, double *out)
{
    const char *v = json_value(line, key), *end;
    if (!v) {
        *out = NAN;
        return 0;
    }
    if (number(v, false, &end, out) < 0)
        return -1;
    end += strspn(end, " \t");
    return *end == ',' || *end == '}' ? 0 : -1;
}

/* 1: a result in *r; 0: not a result (skipped); -1: *why the line is not a record. */
static int json_record(const char *line, size_t len, singa_metrics_record *r, const char **why)
{
    if (line[0] != '{' || line[len - 1] != '}')
        return *why = "not a metrics record (singa-tui --metrics writes one JSON object per line)", -1;
    const char *v = json_value(line, "phase");
    if (!v)
        return 0;
    const char *q = *v == '"' ? strchr(v + 1, '"') : NULL;
    if (!q || phase_named(v + 1, (size_t)(q - v - 1), &r->phase) < 0)
        return *why = "\"phase\" is not \"train\", \"test\" or \"validation\"", -1;
    double step, group;
    if (!json_value(line, "step") || json_number(line, "step", &step) < 0 || isnan(step))
        return *why = "no number \"step\"", -1;
    if (!json_value(line, "group") || json_number(line, "group", &group) < 0 || isnan(group))
        return *why = "no number \"group\"", -1;
    if (count(step, INT_MAX, &r->step) < 0)
        return *why = "\"step\" is not a whole number of steps", -1;
    if (count(group, 65535, &r->group) < 0)
        return *why = "\"group\" is not a whole number from 0 to 65535", -1;
    if (json_number(line, "loss", &r->loss) < 0)
        return *why = "\"loss\" is not a number", -1;
    if (json_number(line, "accuracy", &r->accuracy) < 0)
        return *why = "\"accuracy\" is not a number", -1;
    if (json_number(line, "images_per_sec", &r->images_per_sec) < 0)
        return *why = "\"images_per_sec\" is not a number", -1;
    if (json_number(line, "seconds", &r->seconds) < 0)
        return *why = "\"seconds\" is not a number", -1;
    return 1;
}

/* The columns of a CSV file that hold the optional fields (-1: none). */
typedef struct csv_columns {
    int images_per_sec, seconds;
} csv_columns;

static int column_named(const char *header, const char *name)
{
    size_t n = strlen(name);
    const char *c = header;
    for (int i = 0;; i++) {
        if (strncmp(c, name, n) == 0 && (c[n] == ',' || !c[n]))
            return i;
        if (!(c = strchr(c, ',')))
            return -1;
        c++;
    }
}

/* The number in column i (from 0) of a CSV line: NAN when empty or missing. */
static int csv_number(const char *line, int i, double *out)
{
    *out = NAN;
    const char *c = line;
    for (int k = 0; k < i && c; k++)
        c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL;
    const char *e;
    return i < 0 || !c || (number(c, true, &e, out) == 0 && (!*e || *e == ',')) ? 0 : -1;
}

/* step,phase,group,loss,accuracy[,...]: as json_record. */
static int csv_record(const char *line, const csv_columns *cols, singa_metrics_record *r, const char **why)
{
    double step, group;
    const char *e;
    if (number(line, false, &e, &step) < 0 || *e != ',' || count(step, INT_MAX, &r->step) < 0)
        return *why = "the step is not a whole number of steps", -1;
    const char *ph = e + 1, *comma = strchr(ph, ',');
    if (!comma || phase_named(ph, (size_t)(comma - ph), &r->phase) < 0)
        return *why = "the phase is not train, test or validation", -1;
    if (number(comma + 1, false, &e, &group) < 0 || *e != ',' || count(group, 65535, &r->group) < 0)
        return *why = "the group is not a whole number from 0 to 65535", -1;
    if (number(e + 1, true, &e, &r->loss) < 0 || *e != ',')
        return *why = "the loss is not a number", -1;
    if (number(e + 1, true, &e, &r->accuracy) < 0 || (*e && *e != ','))
        return *why = "the accuracy is not a number", -1;
    if (csv_number(line, cols->images_per_sec, &r->images_per_sec) < 0)
        return *why = "images_per_sec is not a number", -1;
    if (csv_number(line, cols->seconds, &r->seconds) < 0)
        return *why = "seconds is not a number", -1;
    return 1;
}

int singa_metrics_file_read(const char *path, int (*record)(void *ud, const singa_metrics_record *r, const char **why),
                            void *ud, singa_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return singa_err_set(err, "cannot open %s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int no = 0, rc = 0, csv = -1, results = 0;
    csv_columns cols = {-1, -1};
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        no++;
        while (len && isspace((unsigned char)line[len - 1]))
            line[--len] = 0;
        const char *s = line + strspn(line, " \t");
        if (!*s)
            continue;
        if (csv < 0 && strncmp(s, CSV_HEADER, strlen(CSV_HEADER)) == 0) {
            csv = 1;
            cols = (csv_columns){column_named(s, "images_per_sec"), column_named(s, "seconds")};
            continue;
        }
        singa_metrics_record r;
        const char *why = "neither a JSON record nor the CSV header " CSV_HEADER;
        int got = -1;
        if (csv >= 0 || *s == '{') {
            csv = csv > 0;
            got = csv ? csv_record(s, &cols, &r, &why) : json_record(s, (size_t)(line + len - s), &r, &why);
        }
        if (got > 0 && record(ud, &r, &why) == 0)
            results++;
        else if (got != 0)
            rc = singa_err_set(err, "%s:%d: %s", path, no, why);
    }
    if (rc == 0 && (ferror(f) || !feof(f)))
        rc = singa_err_set(err, "cannot read %s: %s", path, strerror(errno));
    if (rc == 0 && !results)
        rc = singa_err_set(err, "%s: no loss or accuracy records (singa-tui --metrics %s -e JOB writes them)", path, path);
    free(line);
    fclose(f);
    return rc;
}
