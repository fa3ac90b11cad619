/* The runtime's message header and payloads (src/runtime/msg.c): every type's fields survive the
 * wire, each in the field its row of msg_types names, and nothing else does; the header keeps its
 * 56 bytes; what does not decode is refused; heartbeats round-trip; and every leg of the stub's
 * table (runtime/protocol.h) names a known type, kinds and a way in. */
#include <string.h>

#include "runtime/protocol.h"
#include "tap.h"

static msg full(int type, uint8_t src_kind, uint8_t dst_kind)
{
    return (msg){.type = (uint8_t)type, .flags = MSG_F_VALUES | MSG_F_LAST, .src = {src_kind, 1, 2, 3},
                 .dst = {dst_kind, 4, 5, 6}, .step = 77, .slice = 11, .param = 12, .server = 13, .layer = 14,
                 .count = 3, .edge = 5, .lost = true, .of_step = true, .ptr = 99, .offset = 7, .len = 8};
}

/* Whether d kept of m exactly what m's type carries. */
static int kept(const msg *m, const msg *d)
{
    const msg_kind *k = &msg_types[m->type];
    bool leg_param = m->src.kind == ENT_WORKER || m->dst.kind == ENT_WORKER;
    bool slice = k->index == MSG_IX_SLICE || (k->index == MSG_IX_LEG && !leg_param);
    bool param = k->index == MSG_IX_LEG && leg_param;
    return d->type == m->type && d->flags == m->flags && d->src.kind == m->src.kind && d->src.proc == 3 &&
           d->dst.group == 4 && d->dst.id == 5 && d->step == 77 && d->ptr == 99 && d->offset == 7 && d->len == 8 &&
           d->slice == (slice ? 11 : 0) && d->param == (param ? 12 : 0) &&
           d->server == (k->index == MSG_IX_SERVER ? 13 : 0) && d->layer == (k->index == MSG_IX_LAYER ? 14 : 0) &&
           d->count == (k->arg == MSG_ARG_COUNT ? 3u : 0u) && d->edge == (k->arg == MSG_ARG_EDGE ? 5 : 0) &&
           d->lost == (k->arg == MSG_ARG_LOST) && d->of_step == (k->arg == MSG_ARG_OF_STEP) && !d->frame && !d->loan;
}

static void header(void)
{
    int bad = 0, named = 0;
    for (int t = 1; t < MSG_NTYPES; t++)
        for (int leg = 0; leg < 2; leg++) {
            msg m = full(t, leg ? ENT_WORKER : ENT_STUB, ENT_SERVER), d;
            uint8_t buf[MSG_HEADER_BYTES];
            msg_encode(&m, buf);
            if (msg_decode(&d, buf, sizeof buf) != 0 || !kept(&m, &d)) {
                printf("# %s (%s leg) does not round-trip\n", msg_type_name(t), leg ? "worker" : "server");
                bad++;
            }
            named += strcmp(msg_type_name(t), "unknown") != 0;
        }
    ok(bad == 0, "every type's header fields round-trip, each in its own field, the others zero");
    ok(named == 2 * (MSG_NTYPES - 1), "every type has a name");
    msg m = full(MSG_UPDATE, ENT_WORKER, ENT_STUB), d;
    uint8_t buf[MSG_HEADER_BYTES + 1];
    msg_encode(&m, buf);
    ok(msg_decode(&d, buf, MSG_HEADER_BYTES + 1) < 0 && msg_decode(&d, buf, MSG_HEADER_BYTES - 1) < 0,
       "a header of another size is refused");
    struct { int at; uint8_t value; const char *what; } breaks[] = {
        {0, 0, "magic"}, {4, 0, "type 0"}, {4, MSG_NTYPES, "an unknown type"}, {5, 0x80, "an unknown flag"},
        {6, 3, "an unknown sender kind"}, {13, 3, "an unknown addressee kind"}};
    for (size_t i = 0; i < sizeof breaks / sizeof *breaks; i++) {
        msg_encode(&m, buf);
        buf[breaks[i].at] = breaks[i].value;
        ok(msg_decode(&d, buf, MSG_HEADER_BYTES) < 0, "a header with %s is refused", breaks[i].what);
    }
}

static void heartbeats(void)
{
    uint8_t buf[MSG_HEARTBEAT_MAX];
    msg_heartbeat h = {.progress = 123456, .busy = true, .carries = MSG_BEAT_CONTROL, .pause = true, .lr_scale = 0.5}, d;
    size_t n = msg_heartbeat_encode(&h, buf);
    ok(msg_heartbeat_decode(&d, buf, n, true) == 0 && d.carries == MSG_BEAT_CONTROL && d.progress == 123456 &&
           d.busy && d.pause && !d.stop && d.lr_scale == 0.5,
       "rank 0's heartbeat carries its host's controls");
    ok(msg_heartbeat_decode(&d, buf, n, false) == -2, "controls from another rank are refused (%d bytes)", (int)n);
    h.lr_scale = -1;
    n = msg_heartbeat_encode(&h, buf);
    ok(msg_heartbeat_decode(&d, buf, n, true) == -2 && d.progress == 123456, "a negative lr scale is refused, "
       "the sender's life kept");
    h = (msg_heartbeat){.progress = 9, .carries = MSG_BEAT_TRAFFIC, .nrows = 2};
    strcpy(h.rows[0].type, "update");
    strcpy(h.rows[1].peer, "server 0.0");
    h.rows[1].bytes_sent = 1u << 20;
    h.nworkers = 1;
    h.workers[0] = (singa_worker_time){.group = 1, .id = 2, .host = "node7", .steps = 40, .window = 20,
                                       .compute = 0.25, .send = 0.5, .wait = 1, .bridge = 2};
    n = msg_heartbeat_encode(&h, buf);
    ok(msg_heartbeat_decode(&d, buf, n, false) == 0 && d.carries == MSG_BEAT_TRAFFIC && d.nrows == 2 &&
           strcmp(d.rows[0].type, "update") == 0 && d.rows[1].bytes_sent == 1u << 20 && !d.busy,
       "another rank's heartbeat carries its traffic rows");
    ok(d.nworkers == 1 && d.workers[0].group == 1 && d.workers[0].id == 2 && strcmp(d.workers[0].host, "node7") == 0 &&
           d.workers[0].steps == 40 && d.workers[0].window == 20 && d.workers[0].work == 0.75 && d.workers[0].step == 3.75,
       "and its workers' step times");
    h.workers[0].window = SINGA_STEP_WINDOW + 1;
    ok(msg_heartbeat_decode(&d, buf, msg_heartbeat_encode(&h, buf), false) == -2, "a window longer than %d is refused",
       SINGA_STEP_WINDOW);
    h.workers[0].window = 20;
    n = msg_heartbeat_encode(&h, buf);
    ok(msg_heartbeat_decode(&d, buf, n - 1, false) == -2, "a torn traffic row is refused");
    buf[4] = 2;
    ok(msg_heartbeat_decode(&d, buf, n, false) == -1 && msg_heartbeat_decode(&d, buf, 4, false) == -1,
       "a heartbeat without a life part is refused");
}

static const rt_leg_row legs[] = {RT_STUB_LEGS(RT_LEG_ROW)};

static void table(void)
{
    int bad = 0, remote = 0;
    for (size_t i = 0; i < sizeof legs / sizeof *legs; i++) {
        const rt_leg_row *l = &legs[i];
        if (l->type < 0 || l->type >= MSG_NTYPES || !l->to || (l->to & ~RT_ANYONE) || !l->from ||
            (l->from & ~RT_ANYONE) || !l->via || (l->via & ~(RT_HERE | RT_OUT | RT_PEER))) {
            printf("# leg %zu (%s) is malformed\n", i, msg_type_name(l->type));
            bad++;
        }
        remote += (l->via & RT_PEER) != 0;
    }
    ok(bad == 0, "every leg of the stub's table names a type, kinds and a way in");
    ok(remote > 0, "%d legs come from other processes, for the fuzzer", remote);
}

int main(void)
{
    header();
    heartbeats();
    table();
    return done_testing();
}
