/* The stub's protocol as a table: every leg of a message it accepts, one row each.  A leg is a
 * message type addressed to one kind of thread (or the stub itself), sent by some kinds, reaching
 * the stub from a thread of this process (HERE), from a thread here for another process (OUT) or
 * from another process's stub (PEER).  stub.c expands the rows into its dispatch table (a check
 * beyond the row's columns, then a handler); t/fuzz-peers.c into the messages it forges.  A
 * message no row takes is dropped and counted, so a new message type is routed, validated and
 * fuzzed by adding its row here (and writing its check and handler in stub.c; the handlers named
 * stub_* live in the stub's other files, declared in stub.h).
 *
 * The message types themselves, their fields and payloads: msg.h. */
#ifndef SINGA_RUNTIME_PROTOCOL_H
#define SINGA_RUNTIME_PROTOCOL_H

#include "runtime/msg.h"

/* Kinds of thread, as sender and addressee (bits of msg_entity). */
enum {
    RT_STUBS = 1 << ENT_STUB,
    RT_WORKERS = 1 << ENT_WORKER,
    RT_SERVERS = 1 << ENT_SERVER,
    RT_ANYONE = RT_STUBS | RT_WORKERS | RT_SERVERS
};
/* How a message reaches the stub. */
enum { RT_HERE = 1, RT_OUT = 2, RT_PEER = 4 };

/* X(type, to, from, via, check, handle); type 0 is any type.  The first row that matches is the
 * leg; checks and handlers are the stub's (stub.h). */
#define RT_STUB_LEGS(X)                                                                             \
    /* to the stub itself */                                                                        \
    X(MSG_HELLO, RT_STUBS, RT_WORKERS | RT_SERVERS, RT_HERE, NULL, on_hello)                        \
    X(MSG_ABORT, RT_STUBS, RT_ANYONE, RT_HERE, NULL, on_abort)                                      \
    X(MSG_DONE, RT_STUBS, RT_WORKERS, RT_HERE, NULL, stub_on_worker_done)                           \
    X(MSG_DONE, RT_STUBS, RT_STUBS, RT_PEER, done_ok, stub_on_proc_done)                            \
    X(MSG_UPDATE, RT_STUBS, RT_WORKERS, RT_HERE, gradient_ok, stub_on_worker_update)                \
    X(MSG_GET, RT_STUBS, RT_WORKERS, RT_HERE, test_fetch_ok, on_test_fetch)                         \
    X(MSG_UPDATE_REPLY, RT_STUBS, RT_SERVERS, RT_HERE | RT_PEER, reply_ok, stub_on_update_reply)    \
    X(MSG_GET_REPLY, RT_STUBS, RT_SERVERS, RT_HERE | RT_PEER, reply_ok, stub_on_get_reply)          \
    X(MSG_FLUSH, RT_STUBS, RT_SERVERS, RT_HERE | RT_PEER, flush_report_ok, stub_on_flush_report)    \
    X(MSG_FINISHED, RT_STUBS, RT_WORKERS, RT_HERE, from_lead, stub_on_finished)                     \
    X(MSG_FINISHED, RT_STUBS, RT_STUBS, RT_PEER, from_rank0, stub_on_finished)                      \
    X(MSG_FINAL_VALUES, RT_STUBS, RT_STUBS, RT_PEER, final_values_ok, stub_on_final_values)         \
    X(MSG_BYE, RT_STUBS, RT_STUBS, RT_PEER, at_rank0, stub_on_bye)                                  \
    X(MSG_METRIC, RT_STUBS, RT_WORKERS, RT_PEER, at_rank0, on_metric)                               \
    X(MSG_RECORDED, RT_STUBS, RT_WORKERS, RT_PEER, from_rank0, stub_on_recorded)                    \
    X(MSG_STOP, RT_STUBS, RT_STUBS, RT_PEER, NULL, on_stop)                                         \
    X(MSG_GROUP_STEP, RT_STUBS, RT_WORKERS, RT_HERE, group_step_ok, on_group_step)                  \
    X(MSG_GROUP_STEP, RT_STUBS, RT_STUBS, RT_PEER, group_step_ok, on_group_step)                    \
    X(MSG_CKPT, RT_STUBS, RT_WORKERS, RT_HERE, ckpt_word_ok, on_ckpt_word)                          \
    X(MSG_CKPT, RT_STUBS, RT_STUBS, RT_PEER, ckpt_word_ok, on_ckpt_word)                            \
    X(MSG_GROW, RT_STUBS, RT_STUBS, RT_PEER, from_rank0, stub_on_grow)                              \
    /* to a server here, passed on */                                                               \
    X(MSG_PUT, RT_SERVERS, RT_STUBS, RT_PEER, server_here, forward)                                 \
    X(MSG_GET, RT_SERVERS, RT_STUBS, RT_PEER, server_here, forward)                                 \
    X(MSG_UPDATE, RT_SERVERS, RT_STUBS, RT_PEER, server_here, forward)                              \
    X(MSG_SYNC, RT_SERVERS, RT_SERVERS, RT_HERE | RT_PEER, server_here, forward)                    \
    X(MSG_SYNC_REPLY, RT_SERVERS, RT_SERVERS, RT_HERE | RT_PEER, server_here, forward)              \
    X(MSG_FLUSH, RT_SERVERS, RT_SERVERS, RT_HERE | RT_PEER, server_here, forward)                   \
    X(MSG_BACKUP, RT_SERVERS, RT_SERVERS, RT_PEER, server_here, forward)                            \
    X(MSG_BACKUP_ACK, RT_SERVERS, RT_SERVERS, RT_PEER, server_here, forward)                        \
    X(MSG_FLUSH, RT_SERVERS, RT_STUBS, RT_PEER, flush_word_ok, forward)                             \
    X(MSG_CKPT, RT_SERVERS, RT_WORKERS, RT_PEER, ckpt_ok, forward)                                  \
    X(MSG_CKPT, RT_SERVERS, RT_WORKERS, RT_HERE | RT_OUT, ckpt_request_ok, on_ckpt_request)         \
    /* to a worker here */                                                                          \
    X(MSG_CKPT_REPLY, RT_WORKERS, RT_SERVERS, RT_HERE | RT_PEER, ckpt_reply_ok, on_ckpt_reply)      \
    X(MSG_WORKER_METRICS, RT_WORKERS, RT_WORKERS, RT_HERE | RT_PEER, worker_metrics_ok, forward)    \
    X(MSG_WORKER_STATE, RT_WORKERS, RT_WORKERS, RT_PEER, worker_state_ok, forward)                  \
    X(MSG_BRIDGE, RT_WORKERS, RT_WORKERS, RT_PEER, bridge_ok, on_bridge)                            \
    X(MSG_BRIDGE_GRAD, RT_WORKERS, RT_WORKERS, RT_PEER, bridge_ok, on_bridge)                       \
    X(MSG_BRIDGE_METRICS, RT_WORKERS, RT_WORKERS, RT_PEER, bridge_ok, on_bridge)                    \
    X(MSG_BRIDGE_PROFILE, RT_WORKERS, RT_WORKERS, RT_PEER, bridge_ok, on_bridge)                    \
    /* from a thread here to another process, whatever it is (no address of this one in it) */     \
    X(0, RT_ANYONE, RT_ANYONE, RT_OUT, relay_ok, forward)

/* A row's columns without its functions, for those that read the table but not act on it (the
 * tests): `static const rt_leg_row legs[] = {RT_STUB_LEGS(RT_LEG_ROW)};`. */
typedef struct rt_leg_row {
    int type, to, from, via;
} rt_leg_row;
#define RT_LEG_ROW(type, to, from, via, check, handle) {type, to, from, via},

#endif
