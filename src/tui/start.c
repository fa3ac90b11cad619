/* The start screen of `singa-tui` without a script: the demos (from $SINGA_DEMO_PATH, else
 * demos/ beside the program, as lua/ is found, else the installed ones) with the first comment
 * line of each, and the scripts opened recently.  Enter opens one in the workbench. */
#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"
#include "singa/singa.h"
#include "tui/app.h"
#include "tui/state.h"

#define MAX_ENTRIES 64

typedef struct entry {
    char path[TUI_PATH_MAX];
    char what[160]; /* the demo's first comment line */
    bool recent;
} entry;

/* The folder the program is in; libtool keeps the real binary in .libs/ during development. */
static void program_dir(char *dir, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    snprintf(dir, len, ".");
    if (n <= 0)
        return;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    size_t l = strlen(exe);
    if (l > 6 && strcmp(exe + l - 6, "/.libs") == 0)
        exe[l - 6] = 0;
    snprintf(dir, len, "%s", exe);
}

static void describe(const char *path, char *what, size_t len)
{
    what[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "--", 2) != 0)
            break;
        char *s = line + 2;
        while (*s == ' ' || *s == '-')
            s++;
        s[strcspn(s, "\n")] = 0;
        if (*s) {
            snprintf(what, len, "%s", s);
            break;
        }
    }
    fclose(f);
}

static int by_path(const void *x, const void *y) { return strcmp(((const entry *)x)->path, ((const entry *)y)->path); }

/* The first folder with demos of: $SINGA_DEMO_PATH, demos/ beside the program, the installed
 * ones. */
static int list_demos(entry *e, int max, char *dir, size_t len)
{
    char prog[PATH_MAX];
    program_dir(prog, sizeof prog);
    const char *env = getenv("SINGA_DEMO_PATH");
    char candidates[3][PATH_MAX + 8];
    int nc = 0;
    if (env && *env)
        snprintf(candidates[nc++], sizeof candidates[0], "%s", env);
    snprintf(candidates[nc++], sizeof candidates[0], "%s/demos", prog);
    snprintf(candidates[nc++], sizeof candidates[0], "%s", SINGA_DEMODIR);
    for (int d = 0; d < nc; d++) {
        DIR *dp = opendir(candidates[d]);
        if (!dp)
            continue;
        int n = 0;
        struct dirent *de;
        while ((de = readdir(dp)) && n < max) {
            size_t l = strlen(de->d_name);
            if (l < 5 || strcmp(de->d_name + l - 4, ".lua") != 0)
                continue;
            snprintf(e[n].path, sizeof e[n].path, "%s/%s", candidates[d], de->d_name);
            describe(e[n].path, e[n].what, sizeof e[n].what);
            e[n].recent = false;
            n++;
        }
        closedir(dp);
        if (n > 0) {
            qsort(e, (size_t)n, sizeof *e, by_path);
            snprintf(dir, len, "%s", candidates[d]);
            return n;
        }
    }
    snprintf(dir, len, "(none found in %s/demos or %s)", prog, SINGA_DEMODIR);
    return 0;
}

static void draw(tui_app *a, const entry *e, int n, int ndemos, int sel, const char *dir)
{
    int W = COLS, H = LINES, y = 0;
    erase();
    attrset(a->term.attr[TUI_R_KEY]);
    mvhline(0, 0, ' ', W);
    mvprintw(0, 1, "singa-tui %s: open a job", SINGA_VERSION);
    attrset(A_NORMAL);
    y = 2;
    /* keep the selection in view */
    int rows = H - 6, first = sel > rows - 2 ? sel - (rows - 2) : 0;
    attrset(a->term.attr[TUI_R_TITLE]);
    mvprintw(y++, 1, "Demos in %.*s", W - 12 > 0 ? W - 12 : 0, dir);
    attrset(A_NORMAL);
    for (int i = first; i < n && y < H - 2; i++) {
        if (i == ndemos) {
            y++;
            attrset(a->term.attr[TUI_R_TITLE]);
            mvprintw(y++, 1, "Recently opened");
            attrset(A_NORMAL);
            if (y >= H - 2)
                break;
        }
        const char *name = e[i].recent ? e[i].path : strrchr(e[i].path, '/') + 1;
        attrset(i == sel ? a->term.attr[TUI_R_FOCUS] | A_REVERSE : A_NORMAL);
        mvprintw(y, 1, "%c %-22.*s", i == sel ? '>' : ' ', e[i].recent ? W - 4 : 22, name);
        attrset(a->term.attr[TUI_R_DIM]);
        if (!e[i].recent && W > 30)
            mvprintw(y, 26, "%.*s", W - 27, e[i].what);
        attrset(A_NORMAL);
        y++;
    }
    if (ndemos == n) {
        y++;
        attrset(a->term.attr[TUI_R_DIM]);
        if (y < H - 2)
            mvprintw(y, 1, "No recently opened scripts.");
    }
    attrset(A_NORMAL);
    const char *hints[][2] = {{"Up/Down", "select"}, {"Enter", "open"}, {"q", "quit"}};
    int x = 0;
    for (int i = 0; i < 3; i++) {
        attrset(a->term.attr[TUI_R_KEY]);
        mvprintw(H - 1, x, "%s", hints[i][0]);
        attrset(A_NORMAL);
        x += (int)strlen(hints[i][0]);
        mvprintw(H - 1, x, " %s  ", hints[i][1]);
        x += (int)strlen(hints[i][1]) + 3;
    }
    curs_set(0);
    refresh();
}

int tui_start_screen(tui_app *a, char *file, size_t len)
{
    entry *e = calloc(MAX_ENTRIES + TUI_RECENT_MAX, sizeof *e);
    tui_recent *recent = malloc(sizeof *recent);
    if (!e || !recent) {
        free(e);
        free(recent);
        return -1;
    }
    char dir[PATH_MAX + 64];
    int ndemos = list_demos(e, MAX_ENTRIES, dir, sizeof dir), n = ndemos;
    tui_recent_load(recent);
    for (int i = 0; i < recent->n; i++) {
        snprintf(e[n].path, sizeof e[n].path, "%s", recent->path[i]);
        e[n++].recent = true;
    }
    free(recent);
    int sel = 0, rc = -1;
    bool dirty = true;
    for (;;) {
        if (dirty)
            draw(a, e, n, ndemos, sel, dir);
        dirty = false;
        struct pollfd p = {.fd = tui_term_fd(&a->term), .events = POLLIN};
        poll(&p, 1, 200);
        wint_t ch;
        int r;
        bool chosen = false, quit = false;
        while ((r = get_wch(&ch)) != ERR) {
            dirty = true;
            bool code = r == KEY_CODE_YES;
            if ((code && ch == KEY_UP) || (!code && ch == 'k'))
                sel -= sel > 0;
            else if ((code && ch == KEY_DOWN) || (!code && (ch == 'j' || ch == '\t')))
                sel += sel < n - 1;
            else if (code && ch == KEY_HOME)
                sel = 0;
            else if (code && ch == KEY_END)
                sel = n > 0 ? n - 1 : 0;
            else if ((code && ch == KEY_ENTER) || (!code && (ch == '\r' || ch == '\n')))
                chosen = n > 0;
            else if (!code && (ch == 'q' || ch == 27 || ch == 3))
                quit = true;
        }
        if (chosen) {
            snprintf(file, len, "%s", e[sel].path);
            rc = 0;
            break;
        }
        if (quit)
            break;
    }
    free(e);
    return rc;
}
