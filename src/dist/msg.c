/* Encoding and the framing of messages, little-endian on the wire whatever the host. */
#include <errno.h>
#include <string.h>

#include "dist/msg.h"

static const char *const type_names[MSG_NTYPES] = {
    [MSG_HELLO] = "hello",   [MSG_PUT] = "put",           [MSG_GET] = "get",
    [MSG_UPDATE] = "update", [MSG_SYNC] = "sync",         [MSG_GET_REPLY] = "get-reply",
    [MSG_UPDATE_REPLY] = "update-reply", [MSG_SYNC_REPLY] = "sync-reply", [MSG_READY] = "ready",
    [MSG_DONE] = "done",     [MSG_FINISHED] = "finished", [MSG_STOP] = "stop",         [MSG_ABORT] = "abort",
    [MSG_METRIC] = "metric", [MSG_JOIN] = "join",         [MSG_PEERS] = "peers",
    [MSG_HEARTBEAT] = "heartbeat",
};

const char *msg_type_name(int type)
{
    return type > 0 && type < MSG_NTYPES ? type_names[type] : "unknown";
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    return put16(put16(p, (uint16_t)v), (uint16_t)(v >> 16));
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
    return put32(put32(p, (uint32_t)v), (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

static uint8_t *put_addr(uint8_t *p, const msg_addr *a)
{
    *p++ = a->kind;
    return put16(put16(put16(p, a->group), a->id), a->proc);
}

static const uint8_t *get_addr(const uint8_t *p, msg_addr *a)
{
    a->kind = *p++;
    a->group = get16(p);
    a->id = get16(p + 2);
    a->proc = get16(p + 4);
    return p + 6;
}

void msg_encode(const msg *m, uint8_t out[MSG_HEADER_BYTES])
{
    uint8_t *p = put32(out, MSG_MAGIC);
    *p++ = m->type;
    *p++ = m->flags;
    p = put_addr(put_addr(p, &m->src), &m->dst);
    p = put32(put32(put32(p, (uint32_t)m->slice), (uint32_t)m->step), m->count);
    put64(p, m->ptr);
}

int msg_decode(msg *m, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    if (len != MSG_HEADER_BYTES || get32(p) != MSG_MAGIC)
        return -1;
    p += 4;
    m->type = *p++;
    m->flags = *p++;
    p = get_addr(get_addr(p, &m->src), &m->dst);
    m->slice = (int32_t)get32(p);
    m->step = (int32_t)get32(p + 4);
    m->count = get32(p + 8);
    m->ptr = get64(p + 12);
    if (m->type == 0 || m->type >= MSG_NTYPES || m->src.kind > ENT_SERVER || m->dst.kind > ENT_SERVER ||
        (m->flags & ~(MSG_F_VALUES | MSG_F_PTR)))
        return -1;
    return 0;
}

int msg_send(void *sock, const char *identity, const msg *m, const void *payload, size_t nbytes)
{
    uint8_t head[MSG_HEADER_BYTES];
    msg_encode(m, head);
    if (identity && zmq_send(sock, identity, strlen(identity), ZMQ_SNDMORE) < 0)
        return -1;
    if (zmq_send(sock, head, sizeof head, payload ? ZMQ_SNDMORE : 0) < 0)
        return -1;
    return payload && zmq_send(sock, payload, nbytes, 0) < 0 ? -1 : 0;
}

/* Reads and discards the rest of a multi-part message. */
static void drain(void *sock)
{
    int more;
    size_t len = sizeof more;
    while (zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &len) == 0 && more) {
        zmq_msg_t part;
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, sock, 0) < 0) {
            zmq_msg_close(&part);
            return;
        }
        zmq_msg_close(&part);
    }
}

static bool has_more(void *sock)
{
    int more = 0;
    size_t len = sizeof more;
    return zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &len) == 0 && more;
}

int msg_recv(void *sock, bool router, char *identity, size_t idlen, msg *m, zmq_msg_t *payload)
{
    zmq_msg_t part;
    zmq_msg_init(payload);
    zmq_msg_init(&part);
    int n;
    while ((n = zmq_msg_recv(&part, sock, 0)) < 0 && zmq_errno() == EINTR) /* nothing read yet: retry */
        ;
    if (router) {
        if (n < 0) {
            zmq_msg_close(&part);
            return -1;
        }
        size_t len = (size_t)n < idlen - 1 ? (size_t)n : idlen - 1;
        memcpy(identity, zmq_msg_data(&part), len);
        identity[len] = 0;
        zmq_msg_close(&part);
        if (!has_more(sock))
            return 1;
        zmq_msg_init(&part); /* the parts of a message arrive together: no EINTR from here */
        n = zmq_msg_recv(&part, sock, 0);
    }
    if (n < 0) {
        zmq_msg_close(&part);
        return -1;
    }
    int bad = msg_decode(m, zmq_msg_data(&part), (size_t)n);
    zmq_msg_close(&part);
    if (bad) {
        drain(sock);
        return 1;
    }
    if (has_more(sock)) {
        if (zmq_msg_recv(payload, sock, 0) < 0)
            return -1;
        if (has_more(sock)) { /* more frames than a message has */
            drain(sock);
            return 1;
        }
    }
    return 0;
}
