/* The workbench's parts that need no terminal: the sample ring (many producer threads, one
 * consumer, never blocking), the metric series and their bounded memory, the plot rendered as
 * ASCII, the log store, the traffic model's rates, sparklines and order. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tui/canvas.h"
#include "tui/log.h"
#include "tui/plot.h"
#include "tui/ring.h"
#include "tui/series.h"
#include "tui/snapshot.h"
#include "tui/traffic.h"

#define PRODUCERS 4
#define PER_PRODUCER 100000

typedef struct producer {
    tui_ring *ring;
    int group;
    int pushed;
    bool retry; /* push again until there is room (the test's consumer keeps up) */
    atomic_int *finished;
} producer;

static void *produce(void *arg)
{
    producer *p = arg;
    for (int i = 0; i < PER_PRODUCER; i++) {
        tui_sample s = {.kind = TUI_SAMPLE_STEP, .group = p->group, .step = i};
        bool in;
        while (!(in = tui_ring_push(p->ring, &s)) && p->retry)
            sched_yield();
        p->pushed += in;
    }
    atomic_fetch_add(p->finished, 1);
    return NULL;
}

static void test_ring(void)
{
    tui_ring *r = tui_ring_new(5);
    ok(r != NULL, "a ring is created");
    tui_sample s = {.step = 0}, out;
    int pushed = 0;
    for (int i = 0; i < 10; i++) {
        s.step = i;
        pushed += tui_ring_push(r, &s);
    }
    ok(pushed == 8 && tui_ring_dropped(r) == 2, "capacity 5 rounds up to 8; two more pushes are dropped, not waited for");
    bool order = true;
    for (int i = 0; i < 8; i++)
        order = order && tui_ring_pop(r, &out) && out.step == i;
    ok(order && !tui_ring_pop(r, &out), "the consumer gets the samples in order, then nothing");
    tui_ring_free(r);

    /* Worker groups push concurrently while the consumer drains. */
    for (int retry = 1; retry >= 0; retry--) {
        r = tui_ring_new(1024);
        producer p[PRODUCERS];
        pthread_t t[PRODUCERS];
        atomic_int finished = 0;
        for (int i = 0; i < PRODUCERS; i++) {
            p[i] = (producer){r, i, 0, retry, &finished};
            pthread_create(&t[i], NULL, produce, &p[i]);
        }
        int got[PRODUCERS] = {0}, last[PRODUCERS] = {-1, -1, -1, -1};
        bool monotonic = true, sane = true;
        for (;;) {
            bool all = atomic_load(&finished) == PRODUCERS; /* then one last drain */
            while (tui_ring_pop(r, &out)) {
                if (out.group < 0 || out.group >= PRODUCERS) {
                    sane = false;
                    continue;
                }
                monotonic = monotonic && out.step > last[out.group];
                last[out.group] = out.step;
                got[out.group]++;
            }
            if (all)
                break;
        }
        for (int i = 0; i < PRODUCERS; i++)
            pthread_join(t[i], NULL);
        int total_got = 0, total_pushed = 0;
        for (int i = 0; i < PRODUCERS; i++) {
            total_got += got[i];
            total_pushed += p[i].pushed;
        }
        const char *mode = retry ? "producers that retry" : "producers that never wait";
        if (retry)
            ok(total_got == PRODUCERS * PER_PRODUCER && sane, "%s: all %d samples arrive once", mode, total_got);
        else
            ok(sane && total_got == total_pushed && (uint64_t)(PRODUCERS * PER_PRODUCER - total_pushed) == tui_ring_dropped(r),
               "%s: what was pushed arrives once (%d), the rest is counted as dropped (%llu)", mode, total_got,
               (unsigned long long)tui_ring_dropped(r));
        ok(monotonic, "%s: each producer's samples arrive in the order it pushed them", mode);
        tui_ring_free(r);
    }
}

typedef struct writer {
    tui_snapshot *snap;
    atomic_bool done;
} writer;

static void *write_steps(void *arg)
{
    writer *w = arg;
    for (int i = 1; i <= 2000000; i++) {
        tui_sample x = {.step = i, .total_steps = 2 * i, .loss = (float)i, .images_per_sec = 3.0 * i, .eta = -i};
        tui_snapshot_write(w->snap, &x);
    }
    atomic_store(&w->done, true);
    return NULL;
}

/* A reader never sees a half-written sample, and the steps it sees only go up. */
static void test_snapshot(void)
{
    tui_snapshot snap;
    tui_snapshot_init(&snap);
    tui_sample x;
    ok(!tui_snapshot_read(&snap, &x), "an empty snapshot reads as nothing");
    writer w = {.snap = &snap};
    atomic_init(&w.done, false);
    pthread_t t;
    pthread_create(&t, NULL, write_steps, &w);
    long reads = 0;
    int last = 0;
    bool whole = true, rising = true;
    while (!atomic_load(&w.done)) {
        if (!tui_snapshot_read(&snap, &x))
            continue;
        reads++;
        whole = whole && x.total_steps == 2 * x.step && x.loss == (float)x.step && x.images_per_sec == 3.0 * x.step &&
                x.eta == -x.step;
        rising = rising && x.step >= last;
        last = x.step;
    }
    pthread_join(t, NULL);
    ok(whole, "while a thread writes, every read is one whole sample (%ld reads)", reads);
    ok(rising, "the steps read never go back");
    ok(tui_snapshot_read(&snap, &x) && x.step == 2000000, "the last write is what stays");
}

static void test_series(void)
{
    tui_history h;
    tui_history_init(&h);
    for (int s = 1; s <= 100000; s++)
        tui_history_add(&h, 0, SINGA_PHASE_TRAIN, s, 1.0f + 1.0f / (float)s, NAN);
    tui_history_add(&h, 1, SINGA_PHASE_TRAIN, 5, 2, 0.5f);
    tui_history_add(&h, 0, SINGA_PHASE_TEST, 1000, 0.9f, 0.7f);
    ok(h.n == 3 && h.series[0]->group == 0 && h.series[0]->phase == SINGA_PHASE_TRAIN &&
           h.series[1]->phase == SINGA_PHASE_TEST && h.series[2]->group == 1,
       "series are kept per group and phase, sorted by group then phase");
    const tui_series *t = h.series[0];
    ok(tui_series_len(t) <= TUI_SERIES_CAP + 1 && tui_series_len(t) > TUI_SERIES_CAP / 2,
       "100000 steps are kept in at most %d points (%d)", TUI_SERIES_CAP, tui_series_len(t));
    int steps = 0;
    bool ordered = true;
    for (int i = 0; i < tui_series_len(t); i++) {
        steps += tui_series_at(t, i).n;
        ordered = ordered && (i == 0 || tui_series_at(t, i).step > tui_series_at(t, i - 1).step);
    }
    ok(steps == 100000 && ordered, "the points cover every step once, in order");
    tui_point first = tui_series_at(t, 0);
    ok(first.v[TUI_LOSS] > 1.0f && first.v[TUI_LOSS] < 2.0f && isnan(first.v[TUI_ACC]),
       "a point holds the mean of its steps (%g); a metric never reported stays NAN", first.v[TUI_LOSS]);
    ok(fabsf(tui_series_recent(t, TUI_LOSS) - 1.0f) < 1e-3f, "the latest value averages the last steps");
    ok(h.first_step == 1 && h.last_step == 100000, "the history knows its step range");
    tui_history_clear(&h);
    ok(h.n == 0, "clearing empties it");
}

/* The legend of h drawn `w` columns wide, as ASCII text. */
static void legend_line(const tui_history *h, int w, char *out, size_t len)
{
    tui_canvas c;
    tui_canvas_init(&c, w, 1);
    tui_plot_legend(&c, 0, 0, w, h, false);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    tui_canvas_write(&c, f);
    fclose(f);
    snprintf(out, len, "%s", buf);
    out[strcspn(out, "\n")] = 0;
    free(buf);
    tui_canvas_free(&c);
}

static void test_plot(void)
{
    tui_history h;
    tui_history_init(&h);
    for (int s = 0; s < 200; s++)
        tui_history_add(&h, 0, SINGA_PHASE_TRAIN, s, 2.0f * expf(-s / 40.0f) + 0.1f, (float)s / 200);
    tui_history_add(&h, 0, SINGA_PHASE_TEST, 100, 0.5f, 0.5f);
    tui_canvas c;
    tui_canvas_init(&c, 60, 16);
    tui_plot_view v = {.metric = TUI_LOSS, .x0 = 0, .x1 = 199, .unicode = false};
    tui_plot_draw(&c, 0, 0, 60, 16, &h, &v);
    /* the row of the first and of the last column of data */
    int first_row = -1, last_row = -1;
    for (int y = 0; y < 14; y++) {
        tui_cell *a = tui_canvas_at(&c, 8, y), *b = tui_canvas_at(&c, 59, y);
        if (a->ch && a->ch != ' ' && first_row < 0)
            first_row = y;
        if (b->ch && b->ch != ' ')
            last_row = y;
    }
    ok(first_row >= 0 && last_row > first_row, "a falling loss starts high and ends low (rows %d -> %d)", first_row, last_row);
    bool marked = false;
    for (int i = 0; i < c.w * c.h; i++)
        marked = marked || c.cells[i].ch == 'o';
    ok(marked, "a test result is drawn as a mark");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tui_canvas_write(&c, f);
    fclose(f);
    ok(strstr(buf, "loss") && strstr(buf, "199") && strstr(buf, "+---"), "the text form has the axis, its name and step labels");
    bool ascii = true;
    for (size_t i = 0; i < len; i++)
        ascii = ascii && (unsigned char)buf[i] < 128;
    ok(ascii, "the ASCII plot is plain ASCII");
    free(buf);

    tui_canvas_clear(&c);
    v.logy = true;
    tui_plot_draw(&c, 0, 0, 60, 16, &h, &v);
    f = open_memstream(&buf, &len);
    tui_canvas_write(&c, f);
    fclose(f);
    ok(strstr(buf, "loss (log)") != NULL, "the log scale says so");
    free(buf);

    tui_canvas_clear(&c);
    v = (tui_plot_view){.metric = TUI_LOSS, .x0 = 0, .x1 = 199, .unicode = true};
    tui_plot_draw(&c, 0, 0, 60, 16, &h, &v);
    bool braille = false;
    for (int i = 0; i < c.w * c.h; i++)
        braille = braille || (c.cells[i].ch >= 0x2800 && c.cells[i].ch <= 0x28FF);
    ok(braille, "with Unicode the lines are braille dots");

    tui_history_clear(&h);
    tui_canvas_clear(&c);
    tui_plot_draw(&c, 0, 0, 60, 16, &h, &v);
    f = open_memstream(&buf, &len);
    tui_canvas_write(&c, f);
    fclose(f);
    ok(strstr(buf, "no values yet") != NULL, "without values the plot says so");
    free(buf);
    tui_canvas_free(&c);

    /* Two worker groups and a test series, in the order a job reports them. */
    tui_history_add(&h, 0, SINGA_PHASE_TRAIN, 1, 0.339f, 0.877f);
    tui_history_add(&h, 0, SINGA_PHASE_TEST, 1, 2.3199f, 0.13f);
    tui_history_add(&h, 1, SINGA_PHASE_TRAIN, 1, 0.342f, 0.872f);
    char wide[128], narrow[128];
    legend_line(&h, 100, wide, sizeof wide);
    legend_line(&h, 48, narrow, sizeof narrow);
    ok(strstr(wide, "train g0 0.339/87.7%") && strstr(wide, "train g1 0.342/87.2%") && strstr(wide, "test g0 2.3199/13.0%"),
       "the legend has an entry per worker group and phase (%s)", wide);
    ok(strstr(wide, "train g1") < strstr(wide, "test g0"), "... the training series first");
    ok(strstr(narrow, "train g0 0.339") && strstr(narrow, "train g1 0.342") && !strchr(narrow, '%') &&
           !strstr(narrow, "test"),
       "short of room, it drops the accuracies and then the last entries, never a group's loss (%s)", narrow);
    tui_history_clear(&h);

    char num[16];
    tui_plot_num(num, sizeof num, 0.5);
    ok(strcmp(num, "0.5") == 0, "numbers lose trailing zeros (%s)", num);
    tui_plot_num(num, sizeof num, 1.25e-5);
    ok(strcmp(num, "1.2e-05") == 0 || strcmp(num, "1.3e-05") == 0, "small numbers use an exponent (%s)", num);
}

static void test_log(void)
{
    tui_log *log = tui_log_new(4);
    tui_log_add(log, TUI_LINE_AUTO, "one\ntwo\x1b[31m red\x1b[0m\n");
    tui_log_add(log, TUI_LINE_AUTO, "bad-job.lua:4: job: unknown field 'train_step'; error");
    tui_log_add(log, TUI_LINE_AUTO, "progress 10%\rprogress 20%\tdone");
    char line[TUI_LINE_MAX];
    ok(tui_log_total(log) == 4 && tui_log_first(log) == 0, "lines are split at newlines");
    ok(tui_log_get(log, 1, line, sizeof line) == TUI_LINE_PLAIN && strcmp(line, "two red") == 0,
       "escape sequences are dropped (%s)", line);
    ok(tui_log_get(log, 2, line, sizeof line) == TUI_LINE_ERROR, "errors are recognised");
    ok(tui_log_get(log, 3, line, sizeof line) >= 0 && strcmp(line, "progress 20%    done") == 0,
       "a carriage return keeps what follows it; tabs expand (%s)", line);
    tui_log_add(log, TUI_LINE_NOTE, "five");
    ok(tui_log_first(log) == 1 && tui_log_get(log, 0, line, sizeof line) < 0, "the oldest line goes when it is full");
    char longline[700];
    memset(longline, 'x', sizeof longline - 1);
    longline[sizeof longline - 1] = 0;
    uint64_t before = tui_log_total(log);
    tui_log_add(log, TUI_LINE_PLAIN, longline);
    ok(tui_log_total(log) - before == 3, "a long line continues on further lines");
    tui_log_free(log);
}

static void test_traffic(void)
{
    tui_traffic t;
    tui_traffic_init(&t);
    tui_traffic_row r = {.type = "kUpdate", .peer = "server 0/0", .msgs_sent = 100, .bytes_sent = 1000};
    tui_traffic_update(&t, &r, 1, 10.0);
    r.msgs_sent = 300;
    r.msgs_recv = 100;
    r.bytes_sent = 5000;
    tui_traffic_update(&t, &r, 1, 12.0);
    ok(t.n == 1 && fabs(t.rows[0].msgs_per_sec - 150) < 1e-9 && fabs(t.rows[0].bytes_per_sec - 2000) < 1e-9,
       "rates come from the difference of totals (%g msgs/s)", t.n ? t.rows[0].msgs_per_sec : 0);
    r.msgs_sent = 310;
    tui_traffic_update(&t, &r, 1, 13.0);
    char spark[64];
    tui_traffic_spark(&t.rows[0], 8, false, spark, sizeof spark);
    ok(strlen(spark) == 2 && spark[0] == '#' && spark[1] != '#', "the sparkline scales to its peak (%s)", spark);
    tui_traffic_update(&t, NULL, 0, 14.0);
    ok(t.n == 1 && !t.rows[0].live, "a row the source no longer reports is kept, marked gone");

    /* Busy rows first, each part in its order: idle "hello" rows, then two that get busy. */
    tui_traffic_init(&t);
    tui_traffic_row rows[4] = {{.type = "hello", .peer = "worker 0.0", .msgs_recv = 1},
                               {.type = "hello", .peer = "server 0.0", .msgs_recv = 1},
                               {.type = "update", .peer = "server 0.0"},
                               {.type = "update-reply", .peer = "server 0.0"}};
    tui_traffic_update(&t, rows, 4, 1.0);
    rows[2].msgs_sent = rows[3].msgs_recv = 500;
    tui_traffic_update(&t, rows, 4, 2.0);
    ok(t.n == 4 && strcmp(t.rows[0].row.type, "update") == 0 && strcmp(t.rows[1].row.type, "update-reply") == 0 &&
           strcmp(t.rows[2].row.peer, "worker 0.0") == 0 && strcmp(t.rows[3].row.peer, "server 0.0") == 0,
       "rows with messages come first, each part in its order (%s, %s, %s %s, ...)", t.rows[0].row.type,
       t.rows[1].row.type, t.rows[2].row.type, t.rows[2].row.peer);
    rows[3].msgs_recv = 900;
    tui_traffic_update(&t, rows, 4, 3.0);
    ok(strcmp(t.rows[0].row.type, "update-reply") == 0 && t.rows[0].msgs_per_sec == 400 &&
           strcmp(t.rows[1].row.type, "update") == 0 && t.rows[1].msgs_per_sec == 0,
       "a row that goes quiet moves behind the busy ones, its rate going with it (%s %g msgs/s first)",
       t.rows[0].row.type, t.rows[0].msgs_per_sec);
}

int main(void)
{
    test_ring();
    test_snapshot();
    test_series();
    test_plot();
    test_log();
    test_traffic();
    return done_testing();
}
