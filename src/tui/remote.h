/* What travels between a job that listens (monitor.c) and an attached workbench (attach.c): the
 * same things the workbench's state is fed from when it runs the job itself.  One ZeroMQ frame
 * per message: a type byte, then the payload, a struct of this file (both ends are the same
 * program: the hello checks the version and the structs' sizes).
 *
 * The messages are the rows of TUI_REMOTE_MESSAGES, as the runtime's are RT_STUB_LEGS: a row
 * says how long the payload may be and how it is tidied once received (tui_remote_decode), and
 * names the function each end handles it with (NULL: that end ignores it).  The handlers are
 * attach.c's and monitor.c's own; each builds its table of them from the rows.
 *
 *   type       from     payload                 what the workbench does with it
 *   HELLO      both     tui_remote_hello        the attach asks (control?); the job answers
 *   STATUS     job      tui_remote_status       the script's status (tui_script.st, paused)
 *   SAMPLE     job      tui_sample[]            steps or records into the ring (history)
 *   LATEST     job      tui_sample              a group's newest step (tui_script.latest)
 *   LOG        job      kind byte + text        a line of the job's log
 *   STATS      job      tui_remote_stats        traffic rows, workers' times, topology (tui_stats)
 *   END        job      -                       the job's process is ending
 *   CONTROL    attach   tui_remote_control      pause, resume, checkpoint, stop, lr scale
 *   PING       attach   -                       still here (the job forgets silent ones)
 *   BYE        attach   -                       detached
 *
 * A new panel's data is a field of tui_remote_stats (sent once a second) or a new row here. */
#ifndef SINGA_TUI_REMOTE_H
#define SINGA_TUI_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/ring.h"
#include "tui/script.h"
#include "tui/stats.h"

#define TUI_REMOTE_VERSION 4
#define TUI_REMOTE_LOG_REPLAY 1000 /* log lines a late workbench gets */

/* X(NAME, min, max, unit, tidy, at_attach, at_job): a payload of min to max bytes, a whole
 * number of units; tidy (remote.c) makes it safe to read (strings ended, counts clamped).  The
 * type byte is the row's number, from 1. */
#define TUI_REMOTE_ANY SIZE_MAX
#define TUI_REMOTE_MESSAGES(X)                                                                                  \
    X(HELLO, sizeof(tui_remote_hello), sizeof(tui_remote_hello), 1, tidy_hello, on_hello, on_hello)            \
    X(STATUS, sizeof(tui_remote_status), sizeof(tui_remote_status), 1, tidy_status, on_status, NULL)           \
    X(SAMPLE, 0, TUI_REMOTE_ANY, sizeof(tui_sample), NULL, on_samples, NULL)                                   \
    X(LATEST, sizeof(tui_sample), sizeof(tui_sample), 1, NULL, on_latest, NULL)                                \
    X(LOG, 1, TUI_REMOTE_ANY, 1, NULL, on_log, NULL)                                                           \
    X(STATS, offsetof(tui_remote_stats, nodes), sizeof(tui_remote_stats), 1, tidy_stats, on_stats, NULL)       \
    X(END, 0, TUI_REMOTE_ANY, 1, NULL, on_end, NULL)                                                           \
    X(CONTROL, sizeof(tui_remote_control), sizeof(tui_remote_control), 1, NULL, NULL, on_control)              \
    X(PING, 0, TUI_REMOTE_ANY, 1, NULL, NULL, on_ping)                                                         \
    X(BYE, 0, TUI_REMOTE_ANY, 1, NULL, NULL, on_bye)

#define TUI_REMOTE_TYPE(name, min, max, unit, tidy, at_attach, at_job) TUI_REMOTE_##name,
typedef enum tui_remote_type { TUI_REMOTE_NONE, TUI_REMOTE_MESSAGES(TUI_REMOTE_TYPE) TUI_REMOTE_COUNT } tui_remote_type;
#undef TUI_REMOTE_TYPE

typedef struct tui_remote_hello {
    uint32_t version;
    uint32_t sizes;    /* tui_remote_sizes(): the structs agree */
    uint8_t control;   /* asked for (attach) or granted (job) */
    char refused[160]; /* the job's answer: why it refuses, or "" */
} tui_remote_hello;

typedef struct tui_remote_status {
    tui_status st;
    uint8_t paused;
    uint8_t control;   /* the job lets attached workbenches steer it */
    double lr_scale;   /* singa_job_control.lr_scale */
} tui_remote_status;

typedef struct tui_remote_stats {
    int32_t ntraffic;  /* -1: the job has no distributed runtime */
    int32_t nnodes;
    uint64_t dropped;
    tui_traffic_row traffic[TUI_STATS_ROWS];
    int32_t nworkers;
    singa_worker_time workers[TUI_MAX_WORKERS]; /* the Workers panel's rows */
    int32_t nlinks;
    singa_link links[TUI_MAX_LINKS];            /* the traffic panel's bytes a step */
    tui_rejoins rejoins;                        /* the Topology panel's lost ranks and rejoins */
    tui_node nodes[TUI_MAX_NODES];             /* only the first nnodes travel */
} tui_remote_stats;

typedef enum tui_remote_what {
    TUI_CONTROL_PAUSE,
    TUI_CONTROL_RESUME,
    TUI_CONTROL_CHECKPOINT,
    TUI_CONTROL_STOP,
    TUI_CONTROL_LR_SCALE,
} tui_remote_what;

typedef struct tui_remote_control {
    uint8_t what;      /* tui_remote_what */
    double value;      /* TUI_CONTROL_LR_SCALE's scale */
} tui_remote_control;

/* A message received: its type and its payload, tidied, in memory of its own (NUL-terminated
 * past its len). */
typedef struct tui_remote_msg {
    int type;
    void *data;
    size_t len;
} tui_remote_msg;

/* Reads a frame (type byte + payload) by its row: -1 when the type is unknown, the length not
 * the row's, or memory short.  Free the message with tui_remote_msg_free. */
int tui_remote_decode(const void *frame, size_t len, tui_remote_msg *out);
void tui_remote_msg_free(tui_remote_msg *m);

uint32_t tui_remote_sizes(void);
/* Sends type + payload on sock without waiting (to `to`, a ROUTER's peer id, when to_len > 0):
 * a peer whose queue is full loses the message.  0, or -1 when it was not queued. */
int tui_remote_send(void *sock, const void *to, size_t to_len, int type, const void *payload, size_t len);

#endif
