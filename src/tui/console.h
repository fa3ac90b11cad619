/* The Lua console: a REPL in the job's own Lua state, on the UI thread. */
#ifndef SINGA_TUI_CONSOLE_H
#define SINGA_TUI_CONSOLE_H

#include <lua.h>
#include <pthread.h>
#include <stdbool.h>
#include <wchar.h>

#include "tui/log.h"

#define TUI_INPUT_MAX 1024
#define TUI_HISTORY_MAX 200
#define TUI_CHUNK_MAX 16384
#define TUI_QUEUE_MAX 16

typedef struct tui_console {
    lua_State *co;            /* a coroutine of the job's state: its own stack */
    int co_ref;
    int env_ref;              /* the chunks' _ENV: the globals, plus `singa` when a script kept it local */
    lua_State *check;         /* a private state that only compiles: incomplete input, syntax errors */
    pthread_mutex_t *lock;    /* the job state's lock (singa_lua_opts.lock) */
    tui_log *out;             /* the transcript */
    wchar_t input[TUI_INPUT_MAX];
    int len, cursor;
    char chunk[TUI_CHUNK_MAX]; /* earlier lines of a multi-line chunk */
    char *queued[TUI_QUEUE_MAX]; /* complete chunks waiting for the lock, oldest first */
    int nqueued;
    char *history[TUI_HISTORY_MAX];
    int nhistory, browse;     /* browse: the entry Up/Down shows (nhistory: the new line) */
    int scroll;               /* transcript lines scrolled back from the end */
} tui_console;

/* L: the job's state, with its lock held by the caller; log: the transcript. */
int tui_console_init(tui_console *c, lua_State *L, pthread_mutex_t *lock, tui_log *transcript);
void tui_console_free(tui_console *c);
/* A key while the console has the focus; false when it does not use it. */
bool tui_console_key(tui_console *c, int is_key_code, wint_t ch);
/* Evaluates the queued chunks once the job's state is free; returns true when it did. */
bool tui_console_poll(tui_console *c);
/* The prompt ("lua> " or, inside a multi-line chunk, "  >> "). */
const char *tui_console_prompt(const tui_console *c);
/* Queues a chunk as if typed (tests and the workbench's own commands). */
void tui_console_submit(tui_console *c, const char *line);

#endif
