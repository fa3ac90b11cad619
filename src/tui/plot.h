/* Line plots of the metric history over steps, into a canvas: braille dots (2 x 4 per cell)
 * with box-drawing axes, or ASCII. */
#ifndef SINGA_TUI_PLOT_H
#define SINGA_TUI_PLOT_H

#include <stdbool.h>

#include "tui/canvas.h"
#include "tui/series.h"

typedef struct tui_plot_view {
    int metric;    /* TUI_LOSS or TUI_ACC */
    bool logy;     /* a log10 y axis */
    double x0, x1; /* the steps shown, x0 < x1 */
    bool unicode;  /* braille and box drawing, else ASCII */
    bool no_steps; /* the plot below shows the same steps: no row of step labels */
} tui_plot_view;

/* Draws the metric of every series in the rectangle (x, y, w, h) of c: y labels, axes and
 * step labels, train series as lines, test and validation results as marks, one colour per
 * worker group.  Needs w >= 16 and h >= 4 (else it writes a short note). */
void tui_plot_draw(tui_canvas *c, int x, int y, int w, int h, const tui_history *hist, const tui_plot_view *v);
/* One row naming the series (mark, phase, group) with their latest loss/accuracy. */
void tui_plot_legend(tui_canvas *c, int x, int y, int w, const tui_history *hist, bool unicode);
/* The mark a phase's series is drawn with. */
uint32_t tui_plot_mark(singa_phase phase, bool unicode);
/* A number in at most 7 characters ("0.4213", "1.2e-05", "12k"). */
void tui_plot_num(char *buf, size_t len, double v);

#endif
