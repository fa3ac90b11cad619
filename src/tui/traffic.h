/* The traffic panel's model: rates and a short history per row, from a source's totals. */
#ifndef SINGA_TUI_TRAFFIC_H
#define SINGA_TUI_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>

#include "tui/stats.h"

#define TUI_TRAFFIC_ROWS 64
#define TUI_SPARK 32 /* rate samples kept per row */

typedef struct tui_traffic_stat {
    tui_traffic_row row;            /* the latest totals */
    double msgs_per_sec, bytes_per_sec; /* sent + received, over the last update */
    float spark[TUI_SPARK];         /* messages/s, oldest first */
    int nspark;
    bool live;                      /* in the source's latest answer */
} tui_traffic_stat;

typedef struct tui_traffic {
    tui_traffic_stat rows[TUI_TRAFFIC_ROWS];
    int n;
    double last; /* time of the last update (seconds, any clock), or < 0 */
} tui_traffic;

void tui_traffic_init(tui_traffic *t);
/* Folds in a source's answer at time `now`; rows are matched by process, type and peer, and
 * ordered busy first (messages over the last update), then idle or gone. */
void tui_traffic_update(tui_traffic *t, const tui_traffic_row *rows, int n, double now);
/* The last `width` rates as a sparkline ("▁▂▃▄▅▆▇█", or " .:-=+*#" in ASCII), UTF-8 into out. */
void tui_traffic_spark(const tui_traffic_stat *s, int width, bool unicode, char *out, size_t len);

#endif
