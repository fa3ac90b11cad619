/* The link between processes for the planner: named defaults for a network (the payload TCP
 * carries over gigabit Ethernet, about 118 MB/s, as bench/net.sh measured), or "local", the Unix
 * sockets processes on one host talk over, measured by a ping-pong through a socket pair (the
 * fastest of its rounds and of 3 transfers of 4 MB, as other processes' load is not the link's).  A
 * message of the runtime crosses more than the socket: the sender's copy into the message, its
 * stub's relay, the receiving stub's and the receiver's; so "local" counts the socket pair's
 * bandwidth over COPIES (bench-net's loopback allreduce row moved its 97 MB a step at about a
 * fifth of the raw socket's rate). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "singa/plan.h"

enum { PINGS = 50, BULKS = 3, BULK = 4 << 20, CHUNK = 1 << 16, COPIES = 4 };

/* The child echoes every byte of a ping and answers each bulk with a byte. */
static void echo(int fd)
{
    char b[CHUNK];
    for (int i = 0; i < PINGS; i++)
        if (read(fd, b, 1) != 1 || write(fd, b, 1) != 1)
            _exit(1);
    for (int k = 0; k < BULKS; k++) {
        for (size_t got = 0; got < BULK;) {
            ssize_t n = read(fd, b, sizeof b);
            if (n <= 0)
                _exit(1);
            got += (size_t)n;
        }
        if (write(fd, b, 1) != 1)
            _exit(1);
    }
    _exit(0);
}

/* The fastest round trip and the fastest bulk: what the socket does when the machine lets it
 * (other processes' load is not the link's). */
static int ping_pong(int fd, double *rtt, double *bulk)
{
    char b[CHUNK] = {0};
    *rtt = *bulk = 1e9;
    for (int i = 0; i < PINGS; i++) {
        double t0 = rt_now();
        if (write(fd, b, 1) != 1 || read(fd, b, 1) != 1)
            return -1;
        *rtt = fmin(*rtt, rt_now() - t0);
    }
    for (int k = 0; k < BULKS; k++) {
        double t0 = rt_now();
        for (size_t sent = 0; sent < BULK; sent += CHUNK)
            if (write(fd, b, CHUNK) != CHUNK)
                return -1;
        if (read(fd, b, 1) != 1)
            return -1;
        *bulk = fmin(*bulk, rt_now() - t0);
    }
    return 0;
}

static int measure_local(singa_plan_link *l)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        echo(sv[1]);
    }
    close(sv[1]);
    double rtt, bulk;
    int rc = pid > 0 ? ping_pong(sv[0], &rtt, &bulk) : -1;
    close(sv[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    if (rc < 0)
        return -1;
    l->latency = rtt / 2;
    l->bandwidth = BULK / fmax(bulk - rtt / 2, 1e-6) / COPIES;
    l->measured = true;
    return 0;
}

/* The local link: measured, or the documented default when the socket pair fails. */
static singa_plan_link local(void)
{
    singa_plan_link l = {0};
    if (measure_local(&l) < 0)
        l = (singa_plan_link){.bandwidth = 1.5e9, .latency = 30e-6};
    l.copies = true;
    l.copy = 1 / l.bandwidth;
    return l;
}

int singa_plan_link_parse(singa_plan_link *l, const char *spec, singa_err *err)
{
    *l = (singa_plan_link){.latency = 100e-6};
    char *end;
    double v = strtod(spec, &end);
    if (strncmp(spec, "local", 5) == 0) {
        end = (char *)spec + 5;
        *l = local();
    } else if (end != spec && v > 0 && strncmp(end, "gbit", 4) == 0) {
        l->bandwidth = v * 118e6, end += 4;
    } else if (end != spec && v > 0 && strncmp(end, "mbit", 4) == 0) {
        l->bandwidth = v * 118e3, end += 4;
    } else
        return singa_err_set(err, "--plan-link '%s': a link is local, <N>gbit or <N>mbit, optionally "
                                  "followed by ,<latency>us (e.g. 1gbit,100us)", spec);
    if (*end == ',') {
        char *us;
        double lat = strtod(end + 1, &us);
        if (us == end + 1 || lat < 0 || strcmp(us, "us") != 0)
            return singa_err_set(err, "--plan-link '%s': the latency after the comma is <N>us", spec);
        l->latency = lat * 1e-6;
    } else if (*end)
        return singa_err_set(err, "--plan-link '%s': unknown unit '%s' (local, gbit, mbit)", spec, end);
    if (!l->copies) /* the processes copy a message's bytes as on one host */
        l->copy = local().copy;
    snprintf(l->name, sizeof l->name, "%.*s", (int)(strchr(spec, ',') ? strchr(spec, ',') - spec : (long)strlen(spec)), spec);
    return 0;
}

void singa_plan_link_hosts(singa_plan_link *l, int per_nic)
{
    l->per_nic = per_nic;
    if (per_nic > 1) {
        singa_plan_link in = local();
        l->local_bandwidth = in.bandwidth, l->local_latency = in.latency;
    }
}
