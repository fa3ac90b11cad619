/* A fault (a plugin's NULL pointer, a division by zero in a layer) used to end singa-tui with
 * nothing but the shell's "Segmentation fault".  The handler says which signal and which layer
 * was running, in which stage and from which plugin file, then dies of the same signal with its
 * default action, so the exit status (128 + signal) and a core dump stay what they were.  It
 * writes with write(2) only (async-signal-safe) and is installed with SA_RESETHAND: a second
 * fault, in the handler itself, kills at once.  The workbench's own handler (src/tui/term.c)
 * gives the terminal back first, then calls this one. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "app/crash.h"
#include "singa/layer.h"

static const struct {
    int sig;
    const char *name;
} faults[] = {
    {SIGSEGV, "SIGSEGV (segmentation fault)"},
    {SIGBUS, "SIGBUS (bus error)"},
    {SIGFPE, "SIGFPE (arithmetic fault)"},
};

static void put(const char *s)
{
    ssize_t ignored = write(STDERR_FILENO, s, strlen(s));
    (void)ignored;
}

static void report_and_die(int sig)
{
    put("singa-tui: ");
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
        if (faults[i].sig == sig)
            put(faults[i].name);
    put(" ");
    singa_layer_running_report(STDERR_FILENO);
    put("\n");
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns */
}

void singa_tui_crash_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = report_and_die;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++)
        sigaction(faults[i].sig, &sa, NULL);
}
