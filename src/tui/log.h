/* A store of text lines shared between threads: the job's log and the console's transcript. */
#ifndef SINGA_TUI_LOG_H
#define SINGA_TUI_LOG_H

#include <stddef.h>
#include <stdint.h>

#define TUI_LINE_MAX 256 /* bytes per stored line; longer lines continue on the next */

typedef enum tui_line_kind {
    TUI_LINE_AUTO,   /* tui_log_add: classify by the text (errors, warnings) */
    TUI_LINE_PLAIN,
    TUI_LINE_ERROR,
    TUI_LINE_WARN,
    TUI_LINE_INPUT,  /* console: what the user typed */
    TUI_LINE_RESULT, /* console: values of an expression */
    TUI_LINE_NOTE,   /* the workbench's own messages */
} tui_line_kind;

typedef struct tui_log tui_log;

/* Keeps the newest `capacity` lines; NULL when out of memory. */
tui_log *tui_log_new(int capacity);
void tui_log_free(tui_log *log);
/* Any thread.  Splits the text at newlines; drops terminal escape sequences and other control
 * characters, keeps what follows the last carriage return of a line and expands tabs. */
void tui_log_add(tui_log *log, tui_line_kind kind, const char *text);
void tui_log_addf(tui_log *log, tui_line_kind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Lines ever added; line i (counting from 0) is kept while i >= total - capacity. */
uint64_t tui_log_total(tui_log *log);
uint64_t tui_log_first(tui_log *log);
/* Copies line i into buf (NUL-terminated) and returns its kind, or -1 when it is not kept. */
int tui_log_get(tui_log *log, uint64_t i, char *buf, size_t len);
/* The kind TUI_LINE_AUTO gives `text`. */
tui_line_kind tui_log_classify(const char *text);

#endif
