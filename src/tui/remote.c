/* The wire's two helpers, shared by the job's monitor and the attached workbench. */
#include <string.h>
#include <zmq.h>

#include "tui/remote.h"

uint32_t tui_remote_sizes(void)
{
    return (uint32_t)(sizeof(tui_remote_status) * 31u + sizeof(tui_sample) * 7u + sizeof(tui_remote_stats));
}

int tui_remote_send(void *sock, const void *to, size_t to_len, int type, const void *payload, size_t len)
{
    zmq_msg_t m;
    if (zmq_msg_init_size(&m, len + 1) < 0)
        return -1;
    unsigned char *p = zmq_msg_data(&m);
    p[0] = (unsigned char)type;
    if (len)
        memcpy(p + 1, payload, len);
    if (to_len && zmq_send(sock, to, to_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&m);
        return -1;
    }
    int rc = zmq_msg_send(&m, sock, ZMQ_DONTWAIT);
    if (rc < 0)
        zmq_msg_close(&m);
    return rc < 0 ? -1 : 0;
}
