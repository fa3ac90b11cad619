/* Loss and accuracy curves as SVG (singa.plot, and the workbench's `w`): a series per worker
 * group and phase, read from a metrics file (--metrics: JSON lines or CSV) or handed over by the
 * workbench, written atomically. */
#ifndef SINGA_LUA_LPLOT_H
#define SINGA_LUA_LPLOT_H

#include <lua.h>

#include "singa/error.h"
#include "singa/layer.h"

enum { SINGA_PLOT_LOSS, SINGA_PLOT_ACC, SINGA_PLOT_METRICS };

typedef struct singa_plot_series {
    int group;
    singa_phase phase;
    int n, cap;
    double *step;
    double *v[SINGA_PLOT_METRICS]; /* NAN: not reported at that step */
} singa_plot_series;

typedef struct singa_plot {
    singa_plot_series *s;
    int n, cap;
} singa_plot;

void singa_plot_free(singa_plot *p);
/* Adds a point to the series of (group, phase), made when new; -1 when out of memory. */
int singa_plot_add(singa_plot *p, int group, singa_phase phase, double step, double loss, double acc);
/* Reads a metrics file; errors name the file and the line. */
int singa_plot_read(singa_plot *p, const char *path, singa_err *err);
/* Writes the curves as SVG to path (through a temporary file renamed over it). */
int singa_plot_svg(const singa_plot *p, const char *title, const char *path, singa_err *err);
/* singa.plot(metrics_file, out_svg): raises on failure. */
int singa_lua_plot(lua_State *L);

#endif
