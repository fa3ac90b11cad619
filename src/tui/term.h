/* Owning the terminal: ncursesw on descriptors of its own, colours by role, and restoring the
 * terminal whatever happens (normal exit, error, signals). */
#ifndef SINGA_TUI_TERM_H
#define SINGA_TUI_TERM_H

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "singa/error.h"
#include "tui/canvas.h"

typedef struct tui_term {
    SCREEN *screen;
    FILE *out, *in;            /* the terminal: descriptors 0, 1 and 2 are the job's (capture.c) */
    bool unicode;              /* the locale is UTF-8: braille, blocks and box drawing */
    bool color;                /* the terminal has colours and NO_COLOR is not set */
    attr_t attr[TUI_R_COUNT];  /* how each role looks */
} tui_term;

/* Takes the terminal (which must be stdin and stdout): raw keys, no echo, the alternate screen,
 * and signal handlers that give it back before the process dies. */
int tui_term_open(tui_term *t, singa_err *err);
/* Gives the terminal back as it was; safe to call twice. */
void tui_term_close(tui_term *t);
/* Starts a thread (pthread_create's status) that never takes the signals meant for the UI thread
 * (SIGWINCH, and the ones that end the program): it inherits them blocked.  Faults (SIGSEGV, ...)
 * stay deliverable to the thread that faults. */
int tui_term_thread(pthread_t *thread, void *(*fn)(void *), void *arg);
/* The descriptor keys arrive on (for poll). */
int tui_term_fd(const tui_term *t);

#endif
