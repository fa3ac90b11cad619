/* The terminal.  ncurses runs on duplicates of stdin and stdout, so that descriptors 0, 1 and 2
 * can be handed to the job (capture.c) and nothing the job prints reaches the screen.
 *
 * Restoring on signals: a handler may only use async-signal-safe calls, so endwin() is out.
 * tui_term_open computes the bytes that undo ncurses's modes (leave the alternate screen, show
 * the cursor, reset attributes, keypad off) and saves the terminal's modes; the handler points
 * ncurses's descriptor at /dev/null, writes those bytes, sets the modes back with tcsetattr,
 * says which signal it was on the real stderr, calls the handler it replaced (singa-tui's report
 * of which layer faulted), and dies of the signal with its default action.  These, with the
 * handlers they replace (put back on close), are the program's only mutable globals, because a
 * signal handler gets no argument to find them through. */
#include <fcntl.h>
#include <langinfo.h>
#include <pthread.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

#include "tui/term.h"

static int g_tty_fd = -1;             /* the terminal, for the handler */
static int g_err_fd = -1;             /* the real stderr (2 is the job's then) */
static struct termios g_modes;        /* the terminal's modes before ncurses */
static char g_undo[256];              /* bytes that undo ncurses's screen modes */
static size_t g_undo_len;

static const int g_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NSIGNALS (int)(sizeof g_signals / sizeof *g_signals)
static struct sigaction g_old[NSIGNALS];

/* Async-signal-safe: dup, open, write and tcsetattr only.  The other threads run on until the
 * process ends, and exit() flushes ncurses's stream after this: so the descriptor ncurses writes
 * to becomes /dev/null first, and the undo bytes go to the terminal through a duplicate, last. */
static void undo_modes(void)
{
    if (g_tty_fd < 0)
        return;
    int tty = dup(g_tty_fd), null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, g_tty_fd);
        close(null);
    }
    if (tty >= 0) {
        ssize_t ignored = write(tty, g_undo, g_undo_len);
        (void)ignored;
        tcsetattr(tty, TCSAFLUSH, &g_modes);
        close(tty);
    }
}

static void restore_and_die(int sig)
{
    undo_modes();
    if (g_err_fd >= 0) {
        dup2(g_err_fd, 2); /* a sanitizer's or the shell's report goes to the terminal too */
        char num[12];
        int at = sizeof num, n = sig;
        do
            num[--at] = (char)('0' + n % 10);
        while ((n /= 10) && at > 0);
        static const char pre[] = "singa-tui: signal ", post[] = "; the terminal is restored\n";
        ssize_t ignored = write(2, pre, sizeof pre - 1) + write(2, num + at, sizeof num - (size_t)at) +
                          write(2, post, sizeof post - 1);
        (void)ignored;
    }
    /* For a fault, the handler this one replaced (singa-tui's report of which layer faulted:
     * src/app/crash.c) runs on the terminal given back.  Not for the others: the handler
     * replaced there is ncurses's, which would exit(1). */
    bool fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
    for (int i = 0; fault && i < NSIGNALS; i++)
        if (g_signals[i] == sig && !(g_old[i].sa_flags & SA_SIGINFO) && g_old[i].sa_handler != SIG_DFL &&
            g_old[i].sa_handler != SIG_IGN)
            g_old[i].sa_handler(sig);
    signal(sig, SIG_DFL);
    raise(sig); /* delivered when the handler returns; a fault re-executes and dies anyway */
}

static void add_undo(const char *capname)
{
    char *s = tigetstr(capname);
    if (!s || s == (char *)-1)
        return;
    size_t n = strlen(s);
    if (g_undo_len + n < sizeof g_undo) {
        memcpy(g_undo + g_undo_len, s, n);
        g_undo_len += n;
    }
}

static void set_roles(tui_term *t)
{
    static const short series[TUI_NSERIES] = {COLOR_CYAN, COLOR_YELLOW, COLOR_MAGENTA, COLOR_GREEN, COLOR_BLUE, COLOR_RED};
    attr_t *a = t->attr;
    for (int i = 0; i < TUI_R_COUNT; i++)
        a[i] = A_NORMAL;
    a[TUI_R_DIM] = A_DIM;
    a[TUI_R_TITLE] = A_BOLD;
    a[TUI_R_INPUT] = A_BOLD;
    a[TUI_R_KEY] = A_REVERSE;
    if (!t->color) { /* monochrome: weight and inversion only */
        a[TUI_R_FOCUS] = A_REVERSE | A_BOLD;
        a[TUI_R_ERROR] = A_BOLD;
        a[TUI_R_WARN] = A_UNDERLINE;
        for (int i = 1; i < TUI_NSERIES; i++)
            a[TUI_R_SERIES + i] = i % 2 ? A_BOLD : A_UNDERLINE;
        return;
    }
    /* -1: the terminal's own background (use_default_colors) */
    init_pair(1, COLOR_RED, -1);
    init_pair(2, COLOR_YELLOW, -1);
    init_pair(3, COLOR_GREEN, -1);
    init_pair(4, COLOR_CYAN, -1);
    init_pair(5, COLOR_BLACK, COLOR_CYAN);
    for (int i = 0; i < TUI_NSERIES; i++) {
        init_pair((short)(10 + i), series[i], -1);
        a[TUI_R_SERIES + i] = COLOR_PAIR(10 + i);
    }
    a[TUI_R_ERROR] = COLOR_PAIR(1) | A_BOLD;
    a[TUI_R_WARN] = COLOR_PAIR(2);
    a[TUI_R_OK] = COLOR_PAIR(3);
    a[TUI_R_FOCUS] = COLOR_PAIR(4) | A_BOLD;
    a[TUI_R_KEY] = COLOR_PAIR(5);
}

int tui_term_open(tui_term *t, singa_err *err)
{
    memset(t, 0, sizeof *t);
    if (tcgetattr(STDIN_FILENO, &g_modes) < 0)
        return singa_err_set(err, "the workbench needs a terminal (standard input is not one)");
    /* LC_CTYPE only: LC_NUMERIC would change how Lua reads and prints numbers. */
    setlocale(LC_CTYPE, "");
    t->unicode = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    int in = dup(STDIN_FILENO), out = dup(STDOUT_FILENO);
    t->in = in >= 0 ? fdopen(in, "r") : NULL;
    t->out = out >= 0 ? fdopen(out, "w") : NULL;
    if (!t->in || !t->out) {
        tui_term_close(t);
        return singa_err_set(err, "cannot duplicate the terminal's descriptors");
    }
    if (!(t->screen = newterm(NULL, t->out, t->in))) {
        const char *term = getenv("TERM");
        tui_term_close(t);
        return singa_err_set(err, "cannot use the terminal (TERM=%s): try TERM=xterm-256color", term ? term : "(unset)");
    }
    raw();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    const char *nc = getenv("NO_COLOR");
    t->color = has_colors() && !(nc && *nc);
    if (t->color) {
        start_color();
        use_default_colors();
    }
    set_roles(t);

    g_undo_len = 0;
    add_undo("rmcup");
    add_undo("cnorm");
    add_undo("sgr0");
    add_undo("rmkx");
    g_tty_fd = fileno(t->out);
    g_err_fd = dup(STDERR_FILENO);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = restore_and_die;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NSIGNALS; i++)
        sigaction(g_signals[i], &sa, &g_old[i]);
    /* A script that calls os.exit ends the process from its own thread (the workbench opens
     * once per process, so this registers once). */
    atexit(undo_modes);
    return 0;
}

void tui_term_close(tui_term *t)
{
    if (t->screen) {
        for (int i = 0; i < NSIGNALS; i++)
            sigaction(g_signals[i], &g_old[i], NULL);
        g_tty_fd = -1;
        if (g_err_fd >= 0)
            close(g_err_fd);
        g_err_fd = -1;
        endwin();
        delscreen(t->screen);
        t->screen = NULL;
    }
    if (t->out)
        fclose(t->out);
    if (t->in)
        fclose(t->in);
    t->out = t->in = NULL;
}

int tui_term_fd(const tui_term *t) { return fileno(t->in); }

int tui_term_thread(pthread_t *thread, void *(*fn)(void *), void *arg)
{
    static const int async[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH, SIGTSTP, SIGCONT};
    sigset_t set, old;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof async / sizeof *async; i++)
        sigaddset(&set, async[i]);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    int rc = pthread_create(thread, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
