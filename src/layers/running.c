/* The report of a fault: which layer this thread was running (running.h), written with write(2)
 * alone, since it runs in a signal handler. */
#include <string.h>
#include <unistd.h>

#include "layers/running.h"

__thread singa_running singa_running_now __attribute__((tls_model("initial-exec")));

static void put(int fd, const char *s)
{
    ssize_t ignored = write(fd, s, strlen(s));
    (void)ignored;
}

void singa_layer_running_report(int fd)
{
    const singa_running r = singa_running_now;
    if (!r.layer) {
        put(fd, "outside any layer's setup, forward and backward");
        return;
    }
    put(fd, "in ");
    put(fd, r.stage);
    put(fd, " of layer '");
    put(fd, r.layer->name);
    put(fd, "' (");
    put(fd, r.layer->type->name);
    if (r.plugin) {
        put(fd, ") of plugin ");
        put(fd, r.plugin);
    } else {
        put(fd, ", built in)");
    }
}
