/* The layout: two columns between the title bar and the footer, each a stack of panels by
 * their class's `order`.  Going down a column, a panel gets the rows it asks for as long as
 * the panels below it keep their min_rows; the last takes what is left.
 *
 *   +-1 Loss / accuracy-------------------+-4 Progress--------+
 *   | legend, loss plot, accuracy plot     | step, speed, ETA  |
 *   +-2 Message traffic-------------------+-3 Topology--------+
 *   | per type and peer                    | processes, groups |
 *   |                                      +-7 Workers---------+
 *   |                                      | step times, slow  |
 *   +-5 Log-------------------------------+-6 Lua console-----+
 *   | the job's output                     | transcript, input |
 */
#include "tui/app.h"

#define LEFT_PERCENT 62

/* Column c's panels, top first; returns how many. */
static int stack(int c, int *order)
{
    int n = 0;
    for (int p = 0; p < TUI_P_COUNT; p++) {
        if (tui_panels[p]->column != c)
            continue;
        int i = n++;
        for (; i > 0 && tui_panels[order[i - 1]]->order > tui_panels[p]->order; i--)
            order[i] = order[i - 1];
        order[i] = p;
    }
    return n;
}

/* The heights of a column's n panels in rows rows. */
static void heights(const tui_app *a, const int *order, int n, int rows, int H, int *h)
{
    int left = rows;
    for (int i = 0; i < n - 1; i++) {
        const tui_panel_class *p = tui_panels[order[i]];
        int below = 0;
        for (int k = i + 1; k < n; k++)
            below += tui_panels[order[k]]->min_rows;
        h[i] = p->rows ? p->rows(a, (tui_room){rows, left, H}) : p->min_rows;
        if (h[i] > left - below)
            h[i] = left - below < p->min_rows ? p->min_rows : left - below;
        left -= h[i];
        for (int k = i - 1; h[i] && left < TUI_LAST_ROWS && k >= 0; k--)
            if (tui_panels[order[k]]->lend_rows && h[k] > tui_panels[order[k]]->lend_rows) {
                h[k]--;
                left++;
                break;
            }
    }
    h[n - 1] = left;
}

void tui_layout(const tui_app *a, int W, int H, tui_rect r[TUI_P_COUNT])
{
    int lw = W * LEFT_PERCENT / 100;
    for (int c = 0; c < 2; c++) {
        int order[TUI_P_COUNT], h[TUI_P_COUNT], n = stack(c, order);
        if (n == 0)
            continue;
        heights(a, order, n, H - 2, H, h);
        for (int i = 0, y = 1; i < n; y += h[i++])
            r[order[i]] = (tui_rect){c ? lw : 0, y, c ? W - lw : lw, h[i]};
    }
}
