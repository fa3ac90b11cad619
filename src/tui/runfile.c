/* The records come from metricsfile/metricsfile.h's reader, which the SVG plots share: here they
 * become the samples of the workbench's history, as a live job's would. */
#include <math.h>

#include "metricsfile/metricsfile.h"
#include "tui/runfile.h"

#define QUOTE(x) #x
#define QUOTED(x) QUOTE(x)

typedef struct loading {
    tui_history *h;
    tui_sample *last;
} loading;

static int add_record(void *ud, const singa_metrics_record *r, const char **why)
{
    loading *l = ud;
    if (r->group >= TUI_MAX_GROUPS)
        return *why = "the workbench shows at most " QUOTED(TUI_MAX_GROUPS) " groups", -1;
    tui_sample x = {.kind = TUI_SAMPLE_RECORD, .phase = (uint8_t)r->phase, .group = r->group, .step = r->step,
                    .loss = (float)r->loss, .accuracy = (float)r->accuracy, .images_per_sec = r->images_per_sec,
                    .lr = NAN, .elapsed = r->seconds, .eta = NAN, .seconds = r->seconds};
    if (r->phase == SINGA_PHASE_TRAIN) { /* a display record: one point of the train series */
        x.kind = TUI_SAMPLE_STEP;
        *l->last = x;
    }
    if (tui_history_add_sample(l->h, &x) < 0)
        return *why = "out of memory", -1;
    return 0;
}

int tui_runfile_load(const char *path, tui_history *h, tui_sample *last, singa_err *err)
{
    tui_history_clear(h);
    *last = (tui_sample){.kind = TUI_SAMPLE_STEP};
    return singa_metrics_file_read(path, add_record, &(loading){h, last}, err);
}
