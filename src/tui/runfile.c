/* The records are the ones lsinga.c's on_record writes: {"step": N, "phase": "train", "group":
 * G, "loss": x, "accuracy": y, ...} per line, or the CSV columns step,phase,group,loss,accuracy
 * first.  Fields this reader does not know are skipped, so a file with more of them still opens;
 * a line that lacks one of the first five is an error naming it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/runfile.h"

#define LINE_MAX_LEN 65536

/* The number after "key": (null: NAN); false when the key is missing or holds no number. */
static bool json_num(const char *line, const char *key, double *v)
{
    char pat[32];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    if (!p)
        return false;
    p += strlen(pat);
    p += strspn(p, " \t");
    if (strncmp(p, "null", 4) == 0) {
        *v = NAN;
        return true;
    }
    char *end;
    *v = strtod(p, &end);
    return end != p;
}

static bool parse_phase(const char *s, size_t len, singa_phase *ph)
{
    static const struct { const char *name; singa_phase phase; } names[] = {
        {"train", SINGA_PHASE_TRAIN}, {"test", SINGA_PHASE_TEST}, {"validation", SINGA_PHASE_VALIDATION}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i].name) == len && strncmp(s, names[i].name, len) == 0) {
            *ph = names[i].phase;
            return true;
        }
    return false;
}

static bool parse_json(const char *line, tui_sample *x)
{
    double step, group, loss, acc;
    const char *p = strstr(line, "\"phase\":");
    size_t n = strlen(line);
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\r'))
        n--;
    if (line[0] != '{' || n < 2 || line[n - 1] != '}' || !p || !json_num(line, "step", &step) ||
        !json_num(line, "group", &group) || !json_num(line, "loss", &loss) || !json_num(line, "accuracy", &acc))
        return false;
    p += strlen("\"phase\":");
    p += strspn(p, " \t");
    const char *q = *p == '"' ? strchr(p + 1, '"') : NULL;
    singa_phase ph;
    if (!q || !parse_phase(p + 1, (size_t)(q - p - 1), &ph))
        return false;
    *x = (tui_sample){.kind = TUI_SAMPLE_RECORD, .phase = (uint8_t)ph, .group = (int)group, .step = (int)step,
                      .loss = (float)loss, .accuracy = (float)acc};
    return true;
}

/* step,phase,group,loss,accuracy[,...]: empty cells are values not reported. */
static bool parse_csv(char *line, tui_sample *x)
{
    char *cell[5], *p = line;
    for (int i = 0; i < 5; i++) {
        cell[i] = p;
        size_t n = strcspn(p, ",\r");
        if (i < 4 && p[n] != ',')
            return false;
        bool last = p[n] != ',';
        p[n] = 0;
        p += n + !last;
    }
    char *end;
    singa_phase ph;
    double v[5];
    for (int i = 0; i < 5; i++) {
        if (i == 1)
            continue;
        v[i] = *cell[i] || i < 3 ? strtod(cell[i], &end) : NAN;
        if ((*cell[i] || i < 3) && (end == cell[i] || *end))
            return false;
    }
    if (!parse_phase(cell[1], strlen(cell[1]), &ph))
        return false;
    *x = (tui_sample){.kind = TUI_SAMPLE_RECORD, .phase = (uint8_t)ph, .group = (int)v[2], .step = (int)v[0],
                      .loss = (float)v[3], .accuracy = (float)v[4]};
    return true;
}

int tui_runfile_load(const char *path, tui_history *h, tui_sample *last, singa_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return singa_err_set(err, "cannot open %s: %s", path, strerror(errno));
    char *line = malloc(LINE_MAX_LEN);
    int rc = line ? 0 : singa_err_set(err, "out of memory");
    int lineno = 0, records = 0, csv = -1;
    tui_history_clear(h);
    *last = (tui_sample){.kind = TUI_SAMPLE_STEP};
    while (rc == 0 && fgets(line, LINE_MAX_LEN, f)) {
        lineno++;
        size_t n = strlen(line);
        bool whole = n > 0 && line[n - 1] == '\n';
        line[strcspn(line, "\n")] = 0;
        if (!line[0])
            continue;
        if (csv < 0) {
            csv = strncmp(line, "step,phase,group,loss,accuracy", 30) == 0;
            if (csv)
                continue;
        }
        tui_sample x;
        if ((!whole && !feof(f)) || !(csv ? parse_csv(line, &x) : parse_json(line, &x)) || x.group < 0 ||
            x.group >= TUI_MAX_GROUPS) {
            rc = singa_err_set(err, "%s:%d: not a metrics record (singa-tui --metrics writes %s)", path, lineno,
                               csv ? "step,phase,group,loss,accuracy,..." : "{\"step\": N, \"phase\": \"train\", \"group\": G, \"loss\": x, \"accuracy\": y, ...}");
            break;
        }
        if (x.phase == SINGA_PHASE_TRAIN) { /* a display record: one point of the train series */
            x.kind = TUI_SAMPLE_STEP;
            *last = x;
        }
        if (tui_history_add_sample(h, &x) < 0) {
            rc = singa_err_set(err, "%s:%d: out of memory", path, lineno);
            break;
        }
        records++;
    }
    if (rc == 0 && ferror(f))
        rc = singa_err_set(err, "cannot read %s: %s", path, strerror(errno));
    if (rc == 0 && !records)
        rc = singa_err_set(err, "%s: no metrics records (write them with singa-tui --metrics %s -e FILE)", path, path);
    free(line);
    fclose(f);
    return rc;
}
