/* Messages of the runtime (SINGA's Msg): a fixed 44-byte header frame, then an optional payload
 * frame of float values.  Between threads of one process a message may instead carry the
 * address of a buffer both sides share (`ptr`); such a message from another process is a forgery
 * and is dropped, as is anything that does not decode. */
#ifndef SINGA_DIST_MSG_H
#define SINGA_DIST_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zmq.h>

typedef enum {
    MSG_HELLO = 1,  /* a thread to its stub: connected */
    MSG_PUT,        /* a slice's initial values, to its server */
    MSG_GET,        /* a slice's values, once the server has them */
    MSG_UPDATE,     /* gradients of a slice (to a server) or of a param (worker to stub) */
    MSG_SYNC,       /* a slice's delta since the last sync, to its master server group */
    MSG_GET_REPLY,
    MSG_UPDATE_REPLY, /* the slice (param) is updated to version `step` */
    MSG_SYNC_REPLY, /* the master's values */
    MSG_READY,      /* stub to worker: params in place, train */
    MSG_DONE,       /* worker to stub: trained; stub to coordinator: its workers are done */
    MSG_FINISHED,   /* worker 0.0 to stub: its final test is done, everyone may stop */
    MSG_STOP,       /* stop now; the payload says why when it is an error */
    MSG_ABORT,      /* a thread failed; the payload is the message */
    MSG_METRIC,     /* a worker's display window, to its group's worker 0 */
    MSG_JOIN,       /* a process to the coordinator: its rank, endpoint and job fingerprint */
    MSG_PEERS,      /* the coordinator to every process: all endpoints */
    MSG_HEARTBEAT,
    MSG_NTYPES
} msg_type;

typedef enum { ENT_STUB, ENT_WORKER, ENT_SERVER } msg_entity;

typedef struct msg_addr {
    uint8_t kind;           /* msg_entity */
    uint16_t group, id, proc;
} msg_addr;

enum { MSG_HEADER_BYTES = 44, MSG_MAGIC = 0x31474e53 /* "SNG1" */ };
enum { MSG_F_VALUES = 1, MSG_F_PTR = 2 };

typedef struct msg {
    uint8_t type, flags;
    msg_addr src, dst;
    int32_t slice;   /* slice, or param for worker <-> stub */
    int32_t step;    /* the step of an update, the version of a reply */
    uint32_t count;  /* gradient contributions summed into an update */
    uint64_t ptr;    /* MSG_F_PTR: a buffer of this process */
} msg;

const char *msg_type_name(int type);
void msg_encode(const msg *m, uint8_t out[MSG_HEADER_BYTES]);
/* Fails on a wrong size, magic, type or entity. */
int msg_decode(msg *m, const void *buf, size_t len);

/* Sends [identity] header [payload]; the payload (may be NULL) is copied. */
int msg_send(void *sock, const char *identity, const msg *m, const void *payload, size_t nbytes);
/* Receives one message: the identity frame when `router`, the header, and the payload into
 * `payload` (initialised here; the caller closes it).  Returns 0, 1 for a malformed message
 * (drained and dropped), -1 when the socket fails (ETERM ...); a signal is no failure. */
int msg_recv(void *sock, bool router, char *identity, size_t idlen, msg *m, zmq_msg_t *payload);

#endif
