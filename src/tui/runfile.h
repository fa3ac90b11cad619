/* singa-tui --open FILE: a finished run's metrics file (--metrics: JSON lines, or CSV) read back
 * into the workbench's history, to look at its plots. */
#ifndef SINGA_TUI_RUNFILE_H
#define SINGA_TUI_RUNFILE_H

#include "singa/error.h"
#include "tui/series.h"

/* Every record of path into h (fresh): train records into their group's train series, test and
 * validation results into theirs; *last is the newest train record.  -1 with err naming the
 * file and line when it cannot be read or a line is not a record. */
int tui_runfile_load(const char *path, tui_history *h, tui_sample *last, singa_err *err);

#endif
