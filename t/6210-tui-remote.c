/* The workbench's remote protocol (src/tui/remote.h): each row of TUI_REMOTE_MESSAGES takes
 * payloads of its length only, and what it takes is safe to read (strings ended, counts within
 * the arrays), whatever bytes came off the wire. */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tui/remote.h"

/* A frame of type `type` with `len` bytes of payload, every byte `fill`. */
static int decode(int type, size_t len, int fill, tui_remote_msg *m)
{
    unsigned char *f = malloc(len + 1);
    f[0] = (unsigned char)type;
    memset(f + 1, fill, len);
    int rc = tui_remote_decode(f, len + 1, m);
    free(f);
    return rc;
}

static bool takes(int type, size_t len)
{
    tui_remote_msg m;
    int rc = decode(type, len, 0, &m);
    tui_remote_msg_free(&m);
    return rc == 0 && m.type == type;
}

int main(void)
{
    ok(TUI_REMOTE_HELLO == 1 && TUI_REMOTE_BYE == 10 && TUI_REMOTE_COUNT == 11, "the types keep their wire numbers (1 to 10)");
    ok(takes(TUI_REMOTE_HELLO, sizeof(tui_remote_hello)) && !takes(TUI_REMOTE_HELLO, sizeof(tui_remote_hello) - 1) &&
       !takes(TUI_REMOTE_HELLO, sizeof(tui_remote_hello) + 1), "a hello is taken at its size only");
    ok(takes(TUI_REMOTE_STATUS, sizeof(tui_remote_status)) && !takes(TUI_REMOTE_STATUS, 3), "a status at its size only");
    ok(takes(TUI_REMOTE_CONTROL, sizeof(tui_remote_control)) && !takes(TUI_REMOTE_CONTROL, 0), "a control at its size only");
    ok(takes(TUI_REMOTE_SAMPLE, 0) && takes(TUI_REMOTE_SAMPLE, 3 * sizeof(tui_sample)) &&
       !takes(TUI_REMOTE_SAMPLE, sizeof(tui_sample) + 1), "samples in whole samples only");
    ok(takes(TUI_REMOTE_LOG, 1) && !takes(TUI_REMOTE_LOG, 0), "a log line needs its kind");
    ok(takes(TUI_REMOTE_STATS, offsetof(tui_remote_stats, nodes)) && takes(TUI_REMOTE_STATS, sizeof(tui_remote_stats)) &&
       !takes(TUI_REMOTE_STATS, offsetof(tui_remote_stats, nodes) - 1) && !takes(TUI_REMOTE_STATS, sizeof(tui_remote_stats) + 1),
       "stats from no nodes to all of them");
    ok(takes(TUI_REMOTE_END, 0) && takes(TUI_REMOTE_PING, 5) && takes(TUI_REMOTE_BYE, 0), "end, ping and bye at any length");
    tui_remote_msg m;
    ok(decode(0, 4, 0, &m) < 0 && decode(TUI_REMOTE_COUNT, 4, 0, &m) < 0 && decode(255, 4, 0, &m) < 0 &&
       tui_remote_decode("", 0, &m) < 0, "unknown types and empty frames are refused");

    ok(decode(TUI_REMOTE_HELLO, sizeof(tui_remote_hello), 'x', &m) == 0 &&
       strlen(((tui_remote_hello *)m.data)->refused) == sizeof ((tui_remote_hello *)0)->refused - 1,
       "a hello's refusal ends within its array");
    tui_remote_msg_free(&m);
    ok(decode(TUI_REMOTE_LOG, 40, 'y', &m) == 0 && strlen((char *)m.data) == 40, "a log line's text ends after its bytes");
    tui_remote_msg_free(&m);

    /* stats of 2 nodes, with counts and strings off the wire as garbage */
    size_t len = offsetof(tui_remote_stats, nodes) + 2 * sizeof(tui_node);
    unsigned char *f = calloc(1, len + 1);
    tui_remote_stats *st = calloc(1, sizeof *st);
    memset(st, 'z', sizeof *st);
    st->nnodes = 9;
    st->nworkers = -3;
    st->nlinks = 1 << 20;
    f[0] = TUI_REMOTE_STATS;
    memcpy(f + 1, st, len);
    ok(tui_remote_decode(f, len + 1, &m) == 0, "garbage stats of 2 nodes are taken");
    const tui_remote_stats *d = m.data;
    ok(d->nnodes == 2 && d->nworkers == 0 && d->nlinks == TUI_MAX_LINKS,
       "their counts stay within what came and the arrays (%d nodes, %d workers, %d links)", d->nnodes, d->nworkers,
       d->nlinks);
    ok(strlen(d->traffic[TUI_STATS_ROWS - 1].peer) < sizeof d->traffic[0].peer && strlen(d->nodes[1].host) < sizeof d->nodes[1].host &&
       strlen(d->rejoins.lost) < sizeof d->rejoins.lost, "their strings end within their arrays");
    ok(d->nodes[2].process == 0, "the nodes that did not come read as zeros");
    tui_remote_msg_free(&m);
    st->nworkers = 2;
    memcpy(f + 1, st, len);
    ok(tui_remote_decode(f, len + 1, &m) == 0 && ((tui_remote_stats *)m.data)->workers[1].straggler == true &&
       strlen(((tui_remote_stats *)m.data)->workers[1].host) < sizeof st->workers[1].host,
       "a worker's flag off the wire is a bool, its host a string");
    tui_remote_msg_free(&m);
    free(st);
    free(f);
    return done_testing();
}
