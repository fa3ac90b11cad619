/* singa-tui --procs N: the job's N processes on this machine.  The program runs itself N times
 * with SINGA_RANK/SINGA_SIZE set (as mpirun or srun would set theirs) and the coordinator on a
 * free loopback port, then waits.  Rank 0 decides the job's fate: the runtime itself ends every
 * rank when one is lost from a synchronous job, and goes on without a lost worker group in an
 * asynchronous one, so the launcher only reports each failure, and once rank 0 has ended gives
 * the others a grace period before terminating them.  The exit status is rank 0's when it is not
 * 0, else that of the first other rank that failed: its exit status, or 128 + the signal that
 * killed it (an asynchronous job that went on without a lost process did not run as asked).  A
 * signal to the launcher goes to every rank, and ranks die with the launcher.
 *
 * With the workbench (`--procs N FILE`), rank 0 is the workbench on this terminal and the others
 * run FILE headless, their output in a file each, named when they fail.
 *
 * An elastic job (`--elastic MIN`, or cluster.elastic): the ranks left after a loss end with
 * SINGA_EXIT_LOST when the job may go on (they know its min and max_restarts); the launcher
 * ends the others (a hung one) shortly after and starts the job again on as many processes as
 * ended so, with $SINGA_RESTART (its number) and $SINGA_RESTART_LOST (the ranks lost), which
 * make the job resume and fit its topology to the processes left. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app/procs.h"
#include "singa/job.h"

static pid_t *children;
static int nchildren;

static void forward(int sig)
{
    for (int i = 0; i < nchildren; i++)
        if (children[i] > 0)
            kill(children[i], sig);
}

/* A loopback port nobody listens on now (rank 0 binds it a moment later). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Where a headless rank's output goes when rank 0 is the workbench. */
static void log_path(char *buf, size_t len, int rank)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, len, "%s/singa-tui.%d.rank%d.log", dir && *dir ? dir : "/tmp", (int)getpid(), rank);
}

static pid_t start_rank(int rank, int n, char **args, bool quiet)
{
    char log[4096];
    log_path(log, sizeof log, rank);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    if (quiet) { /* the workbench owns the terminal */
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            close(fd);
        }
        int in = open("/dev/null", O_RDONLY);
        if (in >= 0) {
            dup2(in, STDIN_FILENO);
            close(in);
        }
    }
    char r[16], s[16];
    snprintf(r, sizeof r, "%d", rank);
    snprintf(s, sizeof s, "%d", n);
    setenv("SINGA_RANK", r, 1);
    setenv("SINGA_SIZE", s, 1);
    signal(SIGINT, SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    execv("/proc/self/exe", args);
    fprintf(stderr, "singa-tui: cannot run rank %d: %s\n", rank, strerror(errno));
    _exit(127);
}

static bool workbench; /* rank 0 is the workbench: the others' output is in files */

static void describe(int rank, pid_t pid, int status)
{
    char log[4096] = "";
    if (workbench && rank > 0) {
        char path[4000];
        log_path(path, sizeof path, rank);
        snprintf(log, sizeof log, "; its output: %s", path);
    }
    if (WIFSIGNALED(status))
        fprintf(stderr, "singa-tui: rank %d (pid %d) was killed by signal %d (%s)%s\n", rank, (int)pid,
                WTERMSIG(status), strsignal(WTERMSIG(status)), log);
    else
        fprintf(stderr, "singa-tui: rank %d (pid %d) exited with status %d%s\n", rank, (int)pid, WEXITSTATUS(status),
                log);
}

/* Waits for every rank: after rank 0 has exited, `grace` seconds more (after a rank ended for a
 * lost process, 3), then terminates the rest (and kills them 2 s later); after rank 0 was killed
 * the others end by themselves, as after any other rank's death (cluster.replicas: they go on).  Each rank's status
 * goes to status[rank]. */
static int wait_all(int n, double grace, int *statuses)
{
    int left = n, rc0 = -1, rc = 0, escalated = 0, nheld = 0;
    /* While rank 0's workbench owns the terminal, nothing else may write on it: the others'
     * failures are told once it has ended (it shows them as dead meanwhile). */
    struct held { int rank; pid_t pid; int status; } *held = workbench ? calloc((size_t)n, sizeof *held) : NULL;
    time_t deadline = 0;
    while (left > 0) {
        int status;
        pid_t pid = waitpid(-1, &status, deadline ? WNOHANG : 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        if (pid == 0) { /* nobody ended yet */
            if (time(NULL) >= deadline) {
                forward(escalated++ ? SIGKILL : SIGTERM);
                deadline = time(NULL) + 2;
            }
            nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
            continue;
        }
        for (int i = 0; i < n; i++) {
            if (children[i] != pid)
                continue;
            children[i] = -1;
            left--;
            statuses[i] = status;
            bool exited = WIFEXITED(status);
            if (exited && WEXITSTATUS(status) == SINGA_EXIT_LOST) { /* the others follow within a second */
                if (!deadline || deadline > time(NULL) + 3)
                    deadline = time(NULL) + 3;
            } else if (!exited || WEXITSTATUS(status) != 0) {
                if (held && rc0 < 0 && i > 0)
                    held[nheld++] = (struct held){i, pid, status};
                else
                    describe(i, pid, status);
            } else if (workbench && i > 0) { /* nothing to read in a rank's output that went well */
                char log[4096];
                log_path(log, sizeof log, i);
                unlink(log);
            }
            if (i == 0) {
                rc0 = exited ? WEXITSTATUS(status) : 1;
                for (int h = 0; h < nheld; h++)
                    describe(held[h].rank, held[h].pid, held[h].status);
                nheld = 0;
                if (!deadline && exited) /* killed, it may be one a job with replicas goes on without */
                    deadline = time(NULL) + (time_t)grace;
            } else if ((!exited || WEXITSTATUS(status) != 0) && rc == 0) { /* the job may have gone on without it */
                rc = exited ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
        }
    }
    for (int h = 0; h < nheld; h++) /* rank 0 was never seen to end */
        describe(held[h].rank, held[h].pid, held[h].status);
    free(held);
    return rc0 != 0 ? (rc0 < 0 ? 1 : rc0) : rc;
}

/* The ranks an elastic job may restart without: those that ended for a lost process
 * (SINGA_EXIT_LOST) are left; returns how many, or 0 when a rank failed otherwise (an error of
 * its own: no restart).  The others, the lost, are listed in `lost`. */
static int left_after_loss(int n, const int *statuses, char *lost, size_t len)
{
    int left = 0;
    lost[0] = 0;
    for (int i = 0; i < n; i++) {
        int st = statuses[i];
        if (WIFEXITED(st) && WEXITSTATUS(st) == SINGA_EXIT_LOST)
            left++;
        else if (WIFEXITED(st) && WEXITSTATUS(st) != SINGA_EXIT_HUNG)
            return 0;
        else /* killed, or hung and then interrupted (SINGA_EXIT_HUNG) or terminated here */
            snprintf(lost + strlen(lost), len - strlen(lost), "%s%d", lost[0] ? "," : "", i);
    }
    return left;
}

/* After the ranks of run `restart` ended (statuses): how many processes the job starts again on,
 * with $SINGA_RESTART and $SINGA_RESTART_LOST set for it, or 0 when it ends, with *rc 1 where fewer
 * than --elastic MIN (cluster.elastic.min) are left rather than restart on too few. */
static int restart_on(int restart, int n, const int *statuses, int min, int *rc)
{
    char lost[256], number[16];
    int left = left_after_loss(n, statuses, lost, sizeof lost);
    const char *ranks = strchr(lost, ',') ? "ranks" : "rank", *es = left == 1 ? "" : "es";
    if (left > 0 && left < min) {
        fprintf(stderr, "singa-tui: elastic: %s %s lost, %d process%s left, fewer than cluster.elastic.min = %d: "
                "the job ends\n", ranks, lost, left, es, min);
        *rc = 1;
        return 0;
    }
    if (left == 0)
        return 0;
    if (!lost[0]) /* every rank ended to restart: the one the others gave up on came back in time */
        fprintf(stderr, "singa-tui: elastic restart %d: no process lost (a rank stalled past the others' "
                "heartbeat_timeout and came back), the job starts again on the %d processes\n", restart, left);
    else
        fprintf(stderr, "singa-tui: elastic restart %d: %s %s lost, the job starts again on the %d process%s left\n",
                restart, ranks, lost, left, es);
    snprintf(number, sizeof number, "%d", restart);
    setenv("SINGA_RESTART", number, 1);
    setenv("SINGA_RESTART_LOST", lost, 1);
    return left;
}

/* Points $SINGA_COORDINATOR at a free loopback port. */
static int pick_coordinator(void)
{
    int port = free_port();
    char addr[64];
    if (port < 0) {
        fprintf(stderr, "singa-tui: --procs: no free loopback port for the coordinator: %s\n", strerror(errno));
        return -1;
    }
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", port);
    setenv("SINGA_COORDINATOR", addr, 1);
    return 0;
}

/* The ranks' command lines: args is argv without --procs N (at procs_at) and --elastic MIN (at
 * elastic_at, when > 0), args[1] left for "--run" once the workbench restarts; with a workbench
 * (file_at > 0), the other ranks run headless: singa-tui -e FILE ARGS... */
static void rank_args(char **args, char **headless, int procs_at, int elastic_at, int file_at, int argc, char **argv)
{
    args[0] = argv[0];
    for (int i = 1, j = 2; i < argc; i++)
        if (i != procs_at && i != procs_at + 1 && (!elastic_at || (i != elastic_at && i != elastic_at + 1)))
            args[j++] = argv[i];
    if (file_at > 0) {
        headless[0] = argv[0];
        headless[1] = "-e";
        for (int i = file_at, j = 2; i < argc; i++)
            headless[j++] = argv[i];
    }
}

/* TERM and HUP go on to the ranks; INT the terminal sends to every rank itself. */
static void forward_signals(void)
{
    struct sigaction sa = {.sa_handler = forward};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGINT, SIG_IGN);
}

int singa_tui_procs(int n, int procs_at, int elastic, int elastic_at, int file_at, int argc, char **argv)
{
    char **args = calloc((size_t)argc + 2, sizeof *args), **headless = calloc((size_t)argc + 2, sizeof *headless);
    int *statuses = calloc((size_t)n, sizeof *statuses);
    if (!args || !headless || !statuses || !(children = calloc((size_t)n, sizeof *children))) {
        fprintf(stderr, "singa-tui: out of memory\n");
        return 1;
    }
    rank_args(args, headless, procs_at, elastic ? elastic_at : 0, file_at, argc, argv);
    workbench = file_at > 0;
    bool own_port = !getenv("SINGA_COORDINATOR");
    if (own_port && pick_coordinator() < 0)
        return 1;
    if (elastic) {
        char min[16];
        snprintf(min, sizeof min, "%d", elastic);
        setenv("SINGA_ELASTIC", min, 1);
    }
    forward_signals();
    char **first = args + 1;
    first[0] = argv[0];
    int rc;
    for (int restart = 1;; restart++) {
        fflush(NULL);
        for (int i = 0; i < n; i++) {
            if ((children[i] = start_rank(i, n, workbench && i > 0 ? headless : first, workbench && i > 0)) < 0) {
                fprintf(stderr, "singa-tui: cannot start rank %d: %s\n", i, strerror(errno));
                forward(SIGTERM);
                nchildren = i;
                wait_all(i, 0, statuses);
                return 1;
            }
            nchildren = i + 1;
        }
        rc = wait_all(n, 10, statuses);
        int left = restart_on(restart, n, statuses, elastic, &rc);
        if (left == 0)
            break;
        if (own_port && pick_coordinator() < 0)
            break;
        n = left;
        first = args; /* the workbench trains at once */
        args[1] = "--run";
    }
    free(args);
    free(headless);
    free(statuses);
    return rc;
}
