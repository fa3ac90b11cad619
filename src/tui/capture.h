/* While the workbench owns the terminal, whatever the job writes to standard output or error
 * (Lua's print, io.write, messages of the engine or of a plugin) becomes lines of its log, and
 * standard input reads nothing. */
#ifndef SINGA_TUI_CAPTURE_H
#define SINGA_TUI_CAPTURE_H

#include "singa/error.h"
#include "tui/log.h"

typedef struct tui_capture tui_capture;

/* Points descriptors 1 and 2 at a pipe that a thread of its own moves into `log`, and 0 at
 * /dev/null.  The terminal must already be on descriptors of its own (term.c). */
int tui_capture_start(tui_capture **out, tui_log *log, singa_err *err);
/* Puts 0, 1 and 2 back, moves the last lines into the log and stops the thread. */
void tui_capture_stop(tui_capture *c);

#endif
