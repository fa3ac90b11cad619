/* Files the workbench keeps between runs, in $XDG_STATE_HOME/singa-tui (by default
 * ~/.local/state/singa-tui): recently opened scripts and the console's history. */
#ifndef SINGA_TUI_STATE_H
#define SINGA_TUI_STATE_H

#include <stdio.h>

#define TUI_RECENT_MAX 10
#define TUI_PATH_MAX 1024

/* Opens the state file `name` (mode as fopen's; writing creates the folder); NULL when there
 * is no state folder or the file cannot be opened. */
FILE *tui_state_open(const char *name, const char *mode);

typedef struct tui_recent {
    int n;
    char path[TUI_RECENT_MAX][TUI_PATH_MAX]; /* newest first, absolute */
} tui_recent;

/* The recently opened scripts that still exist. */
void tui_recent_load(tui_recent *r);
/* Puts `script` first (made absolute) and saves the list. */
void tui_recent_add(const char *script);

#endif
