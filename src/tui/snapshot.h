/* The newest sample of one worker group, always current: the queue (ring.h) may drop samples
 * when the UI falls behind, but the progress panel must show the step the job is really at. */
#ifndef SINGA_TUI_SNAPSHOT_H
#define SINGA_TUI_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>

#include "tui/ring.h"

#define TUI_SNAPSHOT_WORDS ((sizeof(tui_sample) + 7) / 8)

typedef struct tui_snapshot {
    _Alignas(64) atomic_uint seq; /* odd while the writer writes; 0: never written */
    atomic_uint_least64_t words[TUI_SNAPSHOT_WORDS];
} tui_snapshot;

void tui_snapshot_init(tui_snapshot *s);
/* One writer thread per snapshot; never waits. */
void tui_snapshot_write(tui_snapshot *s, const tui_sample *x);
/* Any thread; false when nothing was written yet. */
bool tui_snapshot_read(tui_snapshot *s, tui_sample *out);

#endif
