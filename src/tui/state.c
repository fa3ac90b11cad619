/* State files are conveniences: any failure to read or write them is silent. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tui/state.h"

static int state_dir(char *buf, size_t len, int create)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && *xdg == '/')
        n = snprintf(buf, len, "%s/singa-tui", xdg);
    else if (home && *home)
        n = snprintf(buf, len, "%s/.local/state/singa-tui", home);
    else
        return -1;
    if (n < 0 || (size_t)n >= len)
        return -1;
    if (create) /* mkdir -p */
        for (char *p = buf + 1;; p++) {
            if (*p == '/' || *p == 0) {
                char c = *p;
                *p = 0;
                if (mkdir(buf, 0700) < 0 && errno != EEXIST)
                    return -1;
                *p = c;
                if (!c)
                    break;
            }
        }
    return 0;
}

FILE *tui_state_open(const char *name, const char *mode)
{
    char dir[TUI_PATH_MAX], path[TUI_PATH_MAX + 64];
    if (state_dir(dir, sizeof dir, mode[0] != 'r') < 0)
        return NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return fopen(path, mode);
}

static void read_list(tui_recent *r)
{
    r->n = 0;
    FILE *f = tui_state_open("recent", "r");
    if (!f)
        return;
    char line[TUI_PATH_MAX];
    while (r->n < TUI_RECENT_MAX && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (line[0] == '/')
            snprintf(r->path[r->n++], TUI_PATH_MAX, "%s", line);
    }
    fclose(f);
}

void tui_recent_load(tui_recent *r)
{
    read_list(r);
    int kept = 0;
    for (int i = 0; i < r->n; i++)
        if (access(r->path[i], R_OK) == 0 && kept++ != i)
            memcpy(r->path[kept - 1], r->path[i], TUI_PATH_MAX);
    r->n = kept;
}

void tui_recent_add(const char *script)
{
    char abs[PATH_MAX];
    if (!realpath(script, abs))
        return;
    tui_recent *r = malloc(sizeof *r);
    if (!r)
        return;
    read_list(r);
    FILE *f = tui_state_open("recent", "w");
    if (f) {
        fprintf(f, "%s\n", abs);
        for (int i = 0, n = 1; i < r->n && n < TUI_RECENT_MAX; i++)
            if (strcmp(r->path[i], abs) != 0) {
                fprintf(f, "%s\n", r->path[i]);
                n++;
            }
        fclose(f);
    }
    free(r);
}
