/* The stub's link to the job's other processes: a ROUTER every other process sends to, a DEALER
 * to each of theirs, the meeting at the coordinator (rank 0), and heartbeats.
 *
 * The meeting: every other process binds its ROUTER (an ephemeral port by default) and sends the
 * coordinator a join with its rank, the job's size, its endpoint, its CURVE public key, its build
 * (build.c) and the job's fingerprint (the configuration's digest and the loaded plugins).  The coordinator refuses a process whose
 * answers differ from its own, and once all have joined hands every process the list of
 * endpoints.  From then on any message counts as a sign of life; a heartbeat goes to every peer
 * each fifth of the timeout, so a process silent for the whole timeout is dead (or stopped).
 * A killed process is known sooner: a monitor on each DEALER sees its connection close, and one
 * that does not come back within CLOSED_WAIT (ZeroMQ reconnects at once to a live peer) is a
 * dead process.  The same monitor lets a process that joins tell a coordinator's address where
 * something else listens (its port was taken, so rank 0 could not start) from one not yet open.
 * A process that rejoins a running job hears from the coordinator's list which ranks are lost
 * already, and counts them lost at once.
 * Processes of one host skip TCP: each ROUTER also listens on an abstract Unix socket named after
 * its tcp endpoint, and a DEALER to a peer whose address is this host's connects there.  The
 * meeting stays on tcp (a coordinator's port held by another program shows there only); after it
 * a process opens its connection to the coordinator anew, under another routing id, since the
 * coordinator's ROUTER may not have dropped the meeting's when the new one arrives.
 * Heartbeats and how a process is found lost: peers_live.c.  peers.h is what they share. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/compress.h"
#include "runtime/replica_update.h"
#include "runtime/runtime.h"
#include "runtime/bridge.h"
#include "runtime/build.h"
#include "runtime/peers.h"

/* Seconds a connection to the coordinator may stay without a ZeroMQ handshake before the address
 * counts as another program's. */
static const double HANDSHAKE_WAIT = 1;
enum {
    WATCHED = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
              ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
              ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
};

double rt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail_zmq(singa_err *err, const char *what, const char *where)
{
    return singa_err_set(err, "%s %s: %s", what, where, zmq_strerror(zmq_errno()));
}

/* Frames never exceed the largest slice's values (or their encoding: top-k of more than half takes
 * more; or an update every replica applies, replica_update.h), the largest blob a bridge from another process carries here, the list of endpoints and keys or a heartbeat's traffic, plus what CURVE adds on
 * the wire (the limit applies to wire frames). */
static int64_t max_frame(const rt_ctx *rt)
{
    size_t most = (sizeof(endpoint) + sizeof(key)) * (size_t)rt->nprocs;
    if (most < MSG_HEARTBEAT_MAX)
        most = MSG_HEARTBEAT_MAX;
    for (int k = 0; k < rt->nslices; k++) {
        size_t n = rt->slices[k].len, packed = rt_compress_bytes(&rt->c->compress, n);
        most = n * sizeof(float) > most ? n * sizeof(float) : most;
        most = packed > most ? packed : most;
        most = rt_replica_max_frame(rt, k) > most ? rt_replica_max_frame(rt, k) : most;
    }
    for (int i = 0; i < rt->nworkers; i++) {
        const singa_parts *parts = singa_job_train_net(rt->workers[i].job)->parts;
        if (parts && singa_parts_inbound_bytes(parts) > most)
            most = singa_parts_inbound_bytes(parts);
    }
    return (int64_t)most + 4096;
}

static void *new_socket(rt_peers *p, int type, singa_err *err)
{
    void *s = zmq_socket(p->rt->zmq, type);
    int zero = 0;
    int64_t max = max_frame(p->rt);
    if (!s || zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero) < 0 ||
        zmq_setsockopt(s, ZMQ_SNDHWM, &zero, sizeof zero) < 0 || zmq_setsockopt(s, ZMQ_RCVHWM, &zero, sizeof zero) < 0 ||
        zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &max, sizeof max) < 0) {
        fail_zmq(err, "cannot make a socket", "for the other processes");
        if (s)
            zmq_close(s);
        return NULL;
    }
    if (type == ZMQ_ROUTER && singa_curve_server(p->curve, s) < 0) {
        fail_zmq(err, "cannot make a CURVE server socket", "for the other processes");
        zmq_close(s);
        return NULL;
    }
    return s;
}

/* The Unix socket (abstract, so nothing is left on disk) that a ROUTER bound at tcp endpoint ep
 * listens on too; false when the name would not fit. */
static bool shortcut(const char *ep, char *buf, size_t len)
{
    return strncmp(ep, "tcp://", 6) == 0 && (size_t)snprintf(buf, len, "ipc://@singa-%s", ep + 6) < len;
}

/* Whether the tcp endpoint ep is in this network namespace: a loopback address, or one of its
 * interfaces'.  Abstract Unix sockets belong to a network namespace, so its shortcut is reachable. */
static bool same_host(const char *ep)
{
    char host[INET6_ADDRSTRLEN + 2];
    const char *colon = strrchr(ep, ':');
    if (strncmp(ep, "tcp://", 6) != 0 || !colon || colon - (ep + 6) >= (ptrdiff_t)sizeof host)
        return false;
    snprintf(host, sizeof host, "%.*s", (int)(colon - (ep + 6)), ep + 6);
    if (strcmp(host, "localhost") == 0)
        return true;
    struct in_addr a4;
    struct in6_addr a6;
    bool v4 = inet_pton(AF_INET, host, &a4) == 1;
    size_t hl = strlen(host);
    if (!v4 && hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
        host[hl - 1] = 0;
        memmove(host, host + 1, hl - 1);
    }
    if (!v4 && inet_pton(AF_INET6, host, &a6) != 1)
        return false; /* a name: never worth a lookup here */
    if ((v4 && (ntohl(a4.s_addr) >> 24) == 127) || (!v4 && IN6_IS_ADDR_LOOPBACK(&a6)))
        return true;
    struct ifaddrs *all, *i;
    bool found = false;
    if (getifaddrs(&all) < 0)
        return false;
    for (i = all; i && !found; i = i->ifa_next) {
        const struct sockaddr *sa = i->ifa_addr;
        if (sa && v4 && sa->sa_family == AF_INET)
            found = memcmp(&((const struct sockaddr_in *)(const void *)sa)->sin_addr, &a4, sizeof a4) == 0;
        else if (sa && !v4 && sa->sa_family == AF_INET6)
            found = memcmp(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, &a6, sizeof a6) == 0;
    }
    freeifaddrs(all);
    return found;
}

/* The routing id of this process's connections that carry the job: its id with a '+', so that they
 * never share one with its connection to the meeting, which may not yet be gone at the coordinator
 * when they open. */
static void job_id(const char *id, char *buf, size_t len) { snprintf(buf, len, "%s+", id); }

/* A DEALER to rank r's ROUTER: over its Unix socket when r is on this host (the kernel's TCP costs
 * as much CPU as the copies: about 1.2x the images/s of data-parallel on 2 processes), except for
 * the meeting, over tcp, which must tell the coordinator from another program on its port. */
static int connect_to(rt_peers *p, int r, bool meeting, singa_err *err)
{
    char at[64], ipc[sizeof(endpoint) + 16], id[sizeof(ident) + 1];
    snprintf(at, sizeof at, "inproc://singa-peer-%p-%u", (void *)p, p->connections++);
    if (meeting)
        snprintf(id, sizeof id, "%s", p->ids[p->rt->rank]);
    else
        job_id(p->ids[p->rt->rank], id, sizeof id);
    if (!(p->dealer[r] = new_socket(p, ZMQ_DEALER, err)))
        return -1;
    if (zmq_setsockopt(p->dealer[r], ZMQ_ROUTING_ID, id, strlen(id)) < 0)
        return fail_zmq(err, "cannot name the connection to", p->endpoints[r]);
    if (zmq_socket_monitor(p->dealer[r], at, WATCHED) < 0 || !(p->monitor[r] = zmq_socket(p->rt->zmq, ZMQ_PAIR)) ||
        zmq_connect(p->monitor[r], at) < 0)
        return fail_zmq(err, "cannot watch the connection to", p->endpoints[r]);
    if (rt_curve_client(p->curve, p->dealer[r], p->keys[r]) < 0)
        return fail_zmq(err, "cannot use the CURVE key of", p->endpoints[r]);
    bool local = !meeting && same_host(p->endpoints[r]) && shortcut(p->endpoints[r], ipc, sizeof ipc);
    if (zmq_connect(p->dealer[r], local ? ipc : p->endpoints[r]) < 0)
        return fail_zmq(err, "cannot connect to", p->endpoints[r]);
    return 0;
}

static void disconnect(rt_peers *p, int r)
{
    zmq_socket_monitor(p->dealer[r], NULL, 0);
    zmq_close(p->dealer[r]); /* linger 0 */
    zmq_close(p->monitor[r]);
    p->dealer[r] = p->monitor[r] = NULL;
}

/* The next event of rank r's connection, or 0 when none is waiting. */
static int next_event(rt_peers *p, int r)
{
    zmq_msg_t m;
    int event = 0;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, p->monitor[r], ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&m);
        return 0;
    }
    if (zmq_msg_size(&m) >= 2) {
        uint16_t e;
        memcpy(&e, zmq_msg_data(&m), sizeof e);
        event = e;
    }
    while (zmq_msg_more(&m)) { /* the endpoint */
        zmq_msg_close(&m);
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, p->monitor[r], 0) < 0)
            break;
    }
    zmq_msg_close(&m);
    return event;
}

/* What every process of one job must agree on. */
static void fingerprint(const rt_ctx *rt, char *buf, size_t len)
{
    snprintf(buf, len, "%016llx", (unsigned long long)rt->fingerprint);
}

/* Waits until sock has a message or the deadline passes: 1, 0, -1 on failure. */
static int wait_readable(void *sock, double deadline)
{
    for (;;) {
        double left = deadline - rt_now();
        if (left <= 0)
            return 0;
        zmq_pollitem_t it = {sock, 0, ZMQ_POLLIN, 0};
        int rc = zmq_poll(&it, 1, (long)(left * 1000) + 1);
        if (rc > 0)
            return 1;
        if (rc < 0 && zmq_errno() != EINTR)
            return -1;
    }
}

/* The coordinator refuses the job: every process that joined hears why. */
static int refuse(rt_peers *p, const bool *joined, singa_err *err)
{
    char reason[sizeof err->msg + 32];
    snprintf(reason, sizeof reason, "rank 0: %s", err->msg);
    int linger = 2000; /* the router closes with 0: give these time to leave on a loaded machine */
    zmq_setsockopt(p->router, ZMQ_LINGER, &linger, sizeof linger);
    for (int r = 1; r < p->rt->nprocs; r++)
        if (joined[r]) {
            msg m = {.type = MSG_STOP, .src = {ENT_STUB, 0, 0, 0}, .dst = {ENT_STUB, 0, 0, (uint16_t)r}};
            msg_send(p->router, p->ids[r], &m, reason, strlen(reason));
        }
    return -1;
}

/* Whether a routing id is rank's: "p<rank>", or "p<rank>-<pid>" from a process that rejoins. */
static bool id_of(const char *id, int rank)
{
    char first[16];
    int n = snprintf(first, sizeof first, "p%d", rank);
    return strncmp(id, first, (size_t)n) == 0 && (id[n] == 0 || id[n] == '-');
}

/* A join's payload: "<rank> <size> <fingerprint> <endpoint> <public key> <build>\n<plugins>" (a
 * build before build checks sends none: it is refused as another build).  Returns the rank;
 * -1 with the reason in err when a process of ours must be refused; -2 for what no process of
 * ours sends (a malformed join, or one whose rank is not its connection's), dropped like any
 * garbage, since without CURVE anyone may connect. */
static int check_join(rt_peers *p, const char *id, const char *text, const bool *joined, singa_err *err)
{
    const rt_ctx *rt = p->rt;
    int rank, size, used = 0;
    char fp[32], mine[32], ep[sizeof(endpoint)], pub[sizeof(key)], build[RT_BUILD_MAX] = "";
    if (sscanf(text, "%d %d %31s %127s %40s%n", &rank, &size, fp, ep, pub, &used) != 5)
        return -2;
    const char *rest = text + used;
    size_t blen = 0;
    if (*rest == ' ')
        blen = strcspn(++rest, "\n");
    if (blen >= sizeof build || rest[blen] != '\n')
        return -2;
    memcpy(build, rest, blen);
    const char *plugins = rest + blen + 1;
    fingerprint(rt, mine, sizeof mine);
    if (!id_of(id, rank) || strlen(id) >= sizeof(ident))
        return -2;
    if (rank < 1 || rank >= rt->nprocs)
        return singa_err_set(err, "a process joined as rank %d, which is not one of ranks 1..%d", rank, rt->nprocs - 1);
    if (joined && joined[rank])
        return singa_err_set(err, "two processes joined as rank %d (was the job launched twice?)", rank);
    if (size != rt->nprocs)
        return singa_err_set(err, "rank %d was launched as one of %d processes, but rank 0 as one of %d", rank, size,
                             rt->nprocs);
    if (rt_build_check(rank, build, !joined, err) < 0)
        return -1;
    if (strcmp(plugins, rt->plugins) != 0)
        return singa_err_set(err, "rank %d loaded the plugins [%s], but rank 0 loaded [%s]: every process must load "
                                  "the same plugins",
                             rank, plugins, rt->plugins);
    if (strcmp(fp, mine) != 0)
        return singa_err_set(err, "rank %d runs a different job (fingerprint %s, rank 0's is %s): every process must "
                                  "run the same job script with the same arguments",
                             rank, fp, mine);
    snprintf(p->endpoints[rank], sizeof(endpoint), "%s", ep);
    snprintf(p->keys[rank], sizeof(key), "%s", pub);
    snprintf(p->ids[rank], sizeof(ident), "%s", id);
    return rank;
}

/* Reads one message at the coordinator: a join that counts (accepted: joined[rank]; refused:
 * the process hears why, and the first reason goes to err) returns 1, anything else 0. */
static int take_join(rt_peers *p, bool *joined, bool *bad, singa_err *err)
{
    char id[32];
    msg m;
    zmq_msg_t payload;
    int counts = 0;
    if (msg_recv(p->router, true, id, sizeof id, &m, &payload) == 0 && m.type == MSG_JOIN) {
        char text[sizeof(endpoint) + 4096];
        size_t n = zmq_msg_size(&payload) < sizeof text - 1 ? zmq_msg_size(&payload) : sizeof text - 1;
        memcpy(text, zmq_msg_data(&payload), n);
        text[n] = 0;
        singa_err why;
        int r = check_join(p, id, text, joined, &why); /* garbage is dropped before a rejoin is refused */
        if (r >= 0 && m.step >= 0)
            r = singa_err_set(&why, "rank %d asked to rejoin (SINGA_REJOIN) a job that is only starting", r);
        counts = r != -2;
        if (r >= 0) {
            joined[r] = true;
        } else if (r == -2) {
            singa_stats_drop(p->rt->stats);
        } else {
            msg stop = {.type = MSG_STOP, .src = {ENT_STUB, 0, 0, 0}, .dst = m.src};
            msg_send(p->router, id, &stop, why.msg, strlen(why.msg));
            if (!*bad)
                *err = why;
            *bad = true;
        }
    } else {
        singa_stats_drop(p->rt->stats);
    }
    zmq_msg_close(&payload);
    return counts;
}

/* Hands every other process the list of endpoints and keys, one line per rank. */
static int send_peers(rt_peers *p, singa_err *err)
{
    const rt_ctx *rt = p->rt;
    size_t len = 0, cap = (sizeof(endpoint) + sizeof(key) + sizeof(ident) + 8) * (size_t)rt->nprocs + 64;
    char *list = malloc(cap);
    if (!list)
        return singa_err_set(err, "out of memory");
    for (int r = 0; r < rt->nprocs; r++)
        len += (size_t)snprintf(list + len, cap - len, "%s %s %s%s\n", p->endpoints[r], p->keys[r], p->ids[r],
                                p->dead[r] ? " lost" : "");
    len += (size_t)snprintf(list + len, cap - len, "clock %.9f\n", rt_now()); /* the others' traces align to it */
    /* At the meeting every process waits for the list at its DEALER to the coordinator; later only
     * one that rejoins does, and hears last: the others, whose stubs read their ROUTERs, know it
     * first. */
    bool later = p->joining >= 0;
    for (int last = 0; last < 2; last++)
        for (int r = 1; r < rt->nprocs; r++) {
            msg m = {.type = MSG_PEERS, .src = {ENT_STUB, 0, 0, 0}, .dst = {ENT_STUB, 0, 0, (uint16_t)r},
                     .step = r == p->joining ? p->rt->resume_step : -1};
            if (p->dead[r] || (later && (r == p->joining) != last))
                continue;
            if (later && r != p->joining)
                msg_send(p->dealer[r], NULL, &m, list, len);
            else
                msg_send(p->router, p->ids[r], &m, list, len);
        }
    free(list);
    return 0;
}

/* Waits for every other rank's join.  A bad one is refused at once, and the meeting goes on so
 * that every process can hear the reason before the coordinator fails. */
static int meet_as_coordinator(rt_peers *p, singa_err *err)
{
    rt_ctx *rt = p->rt;
    bool *joined = calloc((size_t)rt->nprocs, sizeof *joined), bad = false;
    if (!joined)
        return singa_err_set(err, "out of memory");
    double deadline = rt_now() + rt->c->join_timeout;
    for (int answers = 1; answers < rt->nprocs;) {
        int ready = wait_readable(p->router, deadline);
        if (ready <= 0) {
            char list[256] = "";
            for (int r = 1, len = 0; r < rt->nprocs && len < (int)sizeof list - 16; r++)
                if (!joined[r])
                    len += snprintf(list + len, sizeof list - (size_t)len, "%s%d", len ? ", " : "", r);
            if (!bad)
                singa_err_set(err, ready < 0 ? "the coordinator's socket failed while ranks %s were joining"
                                             : "ranks %s did not join the coordinator at %s within %g s (join_timeout)",
                              list, rt->launch.coordinator, rt->c->join_timeout);
            bad = true;
            break;
        }
        answers += take_join(p, joined, &bad, err);
    }
    int rc = bad ? refuse(p, joined, err) : send_peers(p, err);
    free(joined);
    return rc;
}

/* Whether the coordinator's address holds a coordinator: a connection there that fails its
 * ZeroMQ handshake, or stays without one for HANDSHAKE_WAIT, is to another program (rank 0 then
 * found its port taken and ended), or to a coordinator that refuses this process's CURVE keys.
 * *since: when the first connection came (0: none yet; -1: a handshake succeeded). */
static int check_coordinator(rt_peers *p, double *since, singa_err *err)
{
    const char *at = p->rt->launch.coordinator;
    for (int e; (e = next_event(p, 0)) != 0;) {
        if (e == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            *since = -1;
        else if (e == ZMQ_EVENT_CONNECTED && *since == 0)
            *since = rt_now();
        else if (e == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
            return singa_err_set(err, "the coordinator at %s refused this process's CURVE key: is its public key in "
                                      "rank 0's public_keys_dir?", at);
        else if ((e == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || e == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) && *since >= 0)
            return singa_err_set(err, "the coordinator's address %s answers, but its ZeroMQ handshake failed: is the "
                                      "port taken by another program (rank 0 cannot listen there then), or, with "
                                      "CURVE, rank 0's key not the one this process expects?", at);
    }
    if (*since > 0 && rt_now() - *since > HANDSHAKE_WAIT)
        return singa_err_set(err, "the coordinator's address %s accepts connections but does not speak ZeroMQ "
                                  "within %g s: is the port taken by another program (rank 0 cannot listen there "
                                  "then)?", at, HANDSHAKE_WAIT);
    return 0;
}

void rt_peers_forget(rt_peers *p, int r)
{
    if (p->dealer[r] && p->dead[r])
        disconnect(p, r);
}

/* Rank r rejoined at ep: a new connection to it, and it counts as alive and new.  step: the one
 * its groups go on from, at rank 0, which counts the rejoin (else -1). */
static int revive(rt_peers *p, int r, int step, singa_err *err)
{
    if (p->dealer[r])
        disconnect(p, r); /* what waited for the lost one is void */
    p->dead[r] = p->hung[r] = p->gone[r] = false;
    p->closed[r] = p->still[r] = 0;
    p->progress[r] = 0;
    p->seen[r] = rt_now();
    if (connect_to(p, r, false, err) < 0)
        return -1;
    singa_stats_rejoined(p->rt->stats, r, step);
    return 0;
}

/* The coordinator's list of endpoints, keys and ids: takes the other ranks'; after the meeting
 * (known), a rank whose id changed rejoined and is connected anew.  Returns how many lines were
 * well formed (all of them: nprocs). */
static int take_peers(rt_peers *p, const char *data, size_t len, bool known)
{
    int got = 0;
    for (size_t at = 0; got < p->rt->nprocs && at < len; got++) {
        const char *nl = memchr(data + at, '\n', len - at);
        char line[sizeof(endpoint) + sizeof(key) + sizeof(ident) + 8], ep[sizeof(endpoint)], pub[sizeof(key)],
            mark[8] = "";
        ident id;
        size_t l = nl ? (size_t)(nl - (data + at)) : 0;
        if (!nl || l == 0 || l >= sizeof line)
            break;
        snprintf(line, sizeof line, "%.*s", (int)l, data + at);
        if (sscanf(line, "%127s %40s %31s %7s", ep, pub, id, mark) < 3 || !id_of(id, got))
            break;
        /* a process that rejoins is told the ranks lost: its servers ask no lost group for values */
        if (!known && p->rt->launch.rejoin && strcmp(mark, "lost") == 0 && got != 0 && got != p->rt->rank) {
            p->gone[got] = true;
            singa_stats_lost(p->rt->stats, got);
        }
        bool changed = strcmp(id, p->ids[got]) != 0;
        if (got != p->rt->rank && got != 0 && (!known || changed)) {
            snprintf(p->endpoints[got], sizeof(endpoint), "%s", ep);
            snprintf(p->keys[got], sizeof(key), "%s", pub);
            snprintf(p->ids[got], sizeof(ident), "%s", id);
            singa_err err;
            if (known && revive(p, got, -1, &err) < 0)
                rt_log(p->rt, "cannot reconnect to rank %d, which rejoined: %s", got, err.msg);
            else if (known)
                rt_log(p->rt, "rank %d rejoined at %s", got, ep);
        }
        at += l + 1;
    }
    return got;
}

/* The line "clock <seconds>" after the list: rank 0's clock when it sent it.  The offset to it
 * is off by the time the list took on the way (about a millisecond on a loaded machine's
 * loopback).  Not NTP's two legs: the join's leg includes setting up the connection, up to
 * ZeroMQ's reconnect interval when rank 0 listens late, which made it tens of ms worse. */
static void take_clock(rt_ctx *rt, const char *data, size_t len)
{
    for (size_t i = 0; i + 7 < len; i++)
        if (memcmp(data + i, "\nclock ", 7) == 0) {
            char at[40];
            size_t n = len - i - 7 < sizeof at - 1 ? len - i - 7 : sizeof at - 1;
            memcpy(at, data + i + 7, n);
            at[n] = 0;
            rt->clock_offset = strtod(at, NULL) - rt_now();
            return;
        }
}

/* The join (check_join reads it).  A process that rejoins says the step its groups go on from;
 * the coordinator answers with the one the job's puts and gets carry. */
static void send_join(rt_peers *p)
{
    const rt_ctx *rt = p->rt;
    char text[sizeof(endpoint) + sizeof(key) + RT_BUILD_MAX + 4096], fp[32], build[RT_BUILD_MAX];
    fingerprint(rt, fp, sizeof fp);
    rt_build(build, sizeof build);
    int n = snprintf(text, sizeof text, "%d %d %s %s %s %s\n%s", rt->rank, rt->nprocs, fp, p->endpoints[rt->rank],
                     p->keys[rt->rank], build, rt->plugins);
    msg join = {.type = MSG_JOIN, .src = {ENT_STUB, 0, 0, (uint16_t)rt->rank}, .dst = {ENT_STUB, 0, 0, 0},
                .step = rt->launch.rejoin ? rt->resume_step : -1};
    msg_send(p->dealer[0], NULL, &join, text, (size_t)n);
}

static int meet_as_member(rt_peers *p, singa_err *err)
{
    rt_ctx *rt = p->rt;
    snprintf(p->endpoints[0], sizeof(endpoint), "%s", rt->launch.coordinator);
    snprintf(p->keys[0], sizeof(key), "%s", p->curve ? rt_curve_coordinator(p->curve) : "-");
    if (connect_to(p, 0, true, err) < 0)
        return -1;
    send_join(p);
    double deadline = rt_now() + rt->c->join_timeout, since = 0;
    for (;;) {
        double until = since > 0 && since + HANDSHAKE_WAIT < deadline ? since + HANDSHAKE_WAIT : deadline;
        zmq_pollitem_t it[2] = {{p->dealer[0], 0, ZMQ_POLLIN, 0}, {p->monitor[0], 0, ZMQ_POLLIN, 0}};
        double left = until - rt_now();
        if (zmq_poll(it, 2, left > 0 ? (long)(left * 1000) + 1 : 0) < 0 && zmq_errno() != EINTR)
            return fail_zmq(err, "cannot wait for the coordinator at", rt->launch.coordinator);
        if (check_coordinator(p, &since, err) < 0)
            return -1;
        if (!(it[0].revents & ZMQ_POLLIN)) {
            if (rt_now() < deadline)
                continue;
            return singa_err_set(err, "no answer from the coordinator (rank 0) at %s within %g s (join_timeout): is it "
                                      "running, at that address, and reachable?",
                                 rt->launch.coordinator, rt->c->join_timeout);
        }
        msg m;
        zmq_msg_t payload;
        int rc = msg_recv(p->dealer[0], false, NULL, 0, &m, &payload);
        const char *data = zmq_msg_data(&payload);
        size_t len = zmq_msg_size(&payload);
        if (rc == 0 && m.type == MSG_STOP) {
            singa_err_set(err, "the coordinator refused this process: %.*s", (int)len, data);
            zmq_msg_close(&payload);
            return -1;
        }
        int got = rc == 0 && m.type == MSG_PEERS ? take_peers(p, data, len, false) : 0;
        if (got == rt->nprocs)
            take_clock(rt, data, len);
        zmq_msg_close(&payload);
        if (got == rt->nprocs && rt->launch.rejoin && m.step >= 0) {
            rt->rejoined_at = rt->resume_step;
            rt->resume_step = m.step; /* the step the job's puts and gets carry */
        }
        if (got < rt->nprocs) {
            singa_stats_drop(rt->stats);
            continue;
        }
        /* Met: the job's messages go by a connection of their own, over the shortcut when there
         * is one. */
        disconnect(p, 0);
        return connect_to(p, 0, false, err);
    }
}

int rt_peers_open(rt_ctx *rt, rt_peers **out, singa_err *err)
{
    rt_peers *p = calloc(1, sizeof *p);
    size_t n = (size_t)rt->nprocs;
    *out = p;
    if (!p || !(p->dealer = calloc(n, sizeof *p->dealer)) || !(p->endpoints = calloc(n, sizeof *p->endpoints)) ||
        !(p->keys = calloc(n, sizeof *p->keys)) || !(p->seen = calloc(n, sizeof *p->seen)) ||
        !(p->monitor = calloc(n, sizeof *p->monitor)) || !(p->closed = calloc(n, sizeof *p->closed)) ||
        !(p->progress = calloc(n, sizeof *p->progress)) || !(p->still = calloc(n, sizeof *p->still)) ||
        !(p->dead = calloc(n, sizeof *p->dead)) || !(p->hung = calloc(n, sizeof *p->hung)) || !(p->gone = calloc(n, sizeof *p->gone)) ||
        !(p->ids = calloc(n, sizeof *p->ids)))
        return singa_err_set(err, "out of memory");
    p->rt = rt;
    p->joining = -1;
    for (int r = 0; r < rt->nprocs; r++)
        snprintf(p->ids[r], sizeof(ident), "p%d", r);
    if (rt->launch.rejoin)
        snprintf(p->ids[rt->rank], sizeof(ident), "p%d-%ld", rt->rank, (long)getpid());
    if (rt_curve_start(rt, &p->curve, err) < 0)
        return -1;
    snprintf(p->keys[rt->rank], sizeof(key), "%s", rt_curve_public(p->curve));
    if (!(p->router = new_socket(p, ZMQ_ROUTER, err)))
        return -1;
    char at[sizeof(endpoint)];
    if (rt->rank == 0)
        snprintf(at, sizeof at, "%s", rt->launch.coordinator);
    else
        snprintf(at, sizeof at, "tcp://%s:*", rt->launch.bind);
    if (zmq_bind(p->router, at) < 0)
        return singa_err_set(err, "cannot listen on %s%s: %s", at, rt->rank == 0 ? " (the coordinator's address)" : "",
                             zmq_strerror(zmq_errno()));
    size_t len = sizeof(endpoint);
    zmq_getsockopt(p->router, ZMQ_LAST_ENDPOINT, p->endpoints[rt->rank], &len);
    if (rt->rank == 0)
        snprintf(p->endpoints[0], sizeof(endpoint), "%s", rt->launch.coordinator);
    char ipc[sizeof(endpoint) + 16];
    if (shortcut(p->endpoints[rt->rank], ipc, sizeof ipc) && zmq_bind(p->router, ipc) < 0)
        return singa_err_set(err, "cannot listen on %s (this host's processes' way past TCP): %s", ipc,
                             zmq_strerror(zmq_errno()));
    if (rt->rank == 0 ? meet_as_coordinator(p, err) < 0 : meet_as_member(p, err) < 0) {
        if (rt->rank != 0 && p->dealer[0]) /* its join, unsent to no coordinator, would hold the exit */
            disconnect(p, 0);
        return -1;
    }
    for (int r = 0; r < rt->nprocs; r++)
        if (r != rt->rank && !p->dealer[r] && !p->gone[r] && connect_to(p, r, false, err) < 0)
            return -1;
    double t = rt_now();
    for (int r = 0; r < rt->nprocs; r++)
        p->seen[r] = t;
    return 0;
}

void rt_peers_close(rt_peers *p)
{
    if (!p)
        return;
    /* The last words (the result, a stop) get out to the living and to a hung peer; after a
     * failure some peer may be dead unknown to us, and messages waiting for it hold the exit, so
     * not for long. */
    int linger = rt_failed(p->rt) ? 500 : 2000, zero = 0;
    for (int r = 0; p->dealer && r < p->rt->nprocs; r++)
        if (p->dealer[r]) {
            zmq_socket_monitor(p->dealer[r], NULL, 0);
            zmq_setsockopt(p->dealer[r], ZMQ_LINGER, p->dead[r] && !p->hung[r] ? &zero : &linger, sizeof linger);
            zmq_close(p->dealer[r]);
        }
    for (int r = 0; p->monitor && r < p->rt->nprocs; r++)
        if (p->monitor[r])
            zmq_close(p->monitor[r]);
    if (p->router)
        zmq_close(p->router);
    singa_curve_stop(p->curve);
    free(p->dealer);
    free(p->endpoints);
    free(p->keys);
    free(p->seen);
    free(p->monitor);
    free(p->closed);
    free(p->progress);
    free(p->still);
    free(p->dead);
    free(p->hung);
    free(p->gone);
    free(p->ids);
    free(p);
}

int rt_peers_items(rt_peers *p, zmq_pollitem_t *items)
{
    int n = 0;
    items[n++] = (zmq_pollitem_t){p->router, 0, ZMQ_POLLIN, 0};
    for (int r = 0; r < p->rt->nprocs; r++)
        if (p->monitor[r])
            items[n++] = (zmq_pollitem_t){p->monitor[r], 0, ZMQ_POLLIN, 0};
    return n;
}

void rt_peers_watch(rt_peers *p, const zmq_pollitem_t *items)
{
    for (int r = 0, k = 1; r < p->rt->nprocs; r++) {
        if (!p->monitor[r] || !(items[k++].revents & ZMQ_POLLIN))
            continue;
        for (int e; (e = next_event(p, r)) != 0;)
            if (e == ZMQ_EVENT_DISCONNECTED && !p->closed[r])
                p->closed[r] = rt_now();
            else if (e == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
                p->closed[r] = 0;
    }
}

const char *rt_peers_endpoint(const rt_peers *p, int rank) { return p->endpoints[rank]; }

bool rt_peers_dead(const rt_peers *p, int rank) { return p->dead[rank]; }

void rt_peers_send(rt_peers *p, int rank, const msg *m, const void *payload, size_t nbytes)
{
    if (rank >= 0 && rank < p->rt->nprocs && p->dealer[rank] && !p->dead[rank])
        msg_send(p->dealer[rank], NULL, m, payload, nbytes);
}

/* Rank 0: a join while the job runs, from a process that rejoins.  What peers.c can tell (the rank
 * is not lost, the process was not started to rejoin, another job) is refused here; else the stub
 * decides (3). */
static int take_rejoin(rt_peers *p, const char *id, const msg *m, zmq_msg_t *payload)
{
    char text[sizeof(endpoint) + 4096];
    size_t n = zmq_msg_size(payload) < sizeof text - 1 ? zmq_msg_size(payload) : sizeof text - 1;
    memcpy(text, zmq_msg_data(payload), n);
    text[n] = 0;
    int rank = -1, r = -1;
    singa_err why;
    if (sscanf(text, "%d", &rank) != 1 || !id_of(id, rank))
        return 1;
    if (rank >= 1 && rank < p->rt->nprocs && !p->dead[rank])
        singa_err_set(&why, "rank %d is not lost: it still takes part in the job, so it cannot rejoin", rank);
    else if (m->step < 0)
        singa_err_set(&why, "rank %d joined a job that runs already: a lost process rejoins with SINGA_REJOIN=1", rank);
    else
        r = check_join(p, id, text, NULL, &why);
    if (r == -2)
        return 1;
    if (r >= 0) {
        p->joining = r;
        p->joining_step = m->step;
        return 3;
    }
    msg stop = {.type = MSG_STOP, .src = {ENT_STUB, 0, 0, 0}, .dst = m->src};
    msg_send(p->router, id, &stop, why.msg, strlen(why.msg));
    rt_log(p->rt, "refused a process that asked to rejoin: %s", why.msg);
    return 2;
}

int rt_peers_joining(const rt_peers *p, int *step)
{
    *step = p->joining_step;
    return p->joining;
}

int rt_peers_admit(rt_peers *p, singa_err *err)
{
    int rc = revive(p, p->joining, p->joining_step, err) < 0 ? -1 : send_peers(p, err);
    p->joining = -1;
    return rc;
}

void rt_peers_refuse(rt_peers *p, const char *why)
{
    int r = p->joining;
    msg stop = {.type = MSG_STOP, .src = {ENT_STUB, 0, 0, 0}, .dst = {ENT_STUB, 0, 0, (uint16_t)r}};
    msg_send(p->router, p->ids[r], &stop, why, strlen(why));
    rt_log(p->rt, "refused rank %d, which asked to rejoin: %s", r, why);
    p->joining = -1;
}

int rt_peers_recv(rt_peers *p, msg *m, zmq_msg_t *payload)
{
    char id[32];
    int rc = msg_recv(p->router, true, id, sizeof id, m, payload);
    if (rc != 0)
        return rc;
    int r = m->src.proc;
    if (m->type == MSG_JOIN && p->rt->rank == 0 && p->joining < 0)
        return take_rejoin(p, id, m, payload);
    char expected[sizeof(ident) + 1];
    if (r < p->rt->nprocs)
        job_id(p->ids[r], expected, sizeof expected);
    if (r >= p->rt->nprocs || r == p->rt->rank || p->dead[r] || strcmp(id, expected) != 0 ||
        m->dst.proc != p->rt->rank || (m->flags & MSG_F_PTR) || m->type == MSG_JOIN)
        return 1;
    if (m->type == MSG_PEERS) /* rank 0's word that a lost process rejoined */
        return r == 0 && take_peers(p, zmq_msg_data(payload), zmq_msg_size(payload), true) == p->rt->nprocs ? 2 : 1;
    p->seen[r] = rt_now();
    return m->type == MSG_HEARTBEAT ? peers_take_beat(p, r, payload) : 0;
}

