/* singa-tui's command line as one table, as tmux's commands are: each option is a row of its
 * name, its argument, its --help text and its handler; parsing and --help read the table, and
 * t/3140 and t/3145 check the man page's OPTIONS against --help and --help against the table.
 * To add an option: a row here (its handler beside it) and its item in docs/singa-tui.1.in. */
#include <lualib.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/ckpt_cli.h"
#include "app/cli.h"
#include "app/keygen.h"
#include "app/modes.h"
#include "app/plan_cli.h"
#include "app/plugin_cli.h"
#include "paths.h"
#include "singa/singa.h"

/* What a handler returns besides an exit status. */
enum { GO_ON = -1, STOP = -2 /* the rest of argv is the script's */ };

typedef struct option {
    const char *name, *alias; /* "--help", "-h" */
    const char *arg;          /* what follows it in --help: one word per argument it takes */
    /* Takes the option at argv[i] (its arguments after it): GO_ON, STOP or an exit status.  NULL:
     * the argument is stored at `field`, a const char * of singa_cli. */
    int (*handler)(singa_cli *c, int i);
    size_t field;
    const char *help; /* --help's text: lines after the first are indented under it */
} option;

static int opt_help(singa_cli *c, int i)
{
    (void)c, (void)i;
    singa_cli_usage(stdout);
    return 0;
}

static int opt_version(singa_cli *c, int i)
{
    (void)c, (void)i;
    printf("singa-tui %s (%s, OpenBLAS %s)\n", SINGA_VERSION, LUA_RELEASE, singa_blas_core());
    return 0;
}

static int opt_check_plugin(singa_cli *c, int i) { return singa_tui_check_plugin(c->argv[i + 1]); }
static int opt_ckpt_info(singa_cli *c, int i) { return singa_tui_ckpt_info(c->argv[i + 1]); }
static int opt_ckpt_gather(singa_cli *c, int i) { return singa_tui_ckpt_gather(c->argv[i + 1], c->argv[i + 2]); }
static int opt_curve_keygen(singa_cli *c, int i) { return singa_tui_curve_keygen(c->argv[i + 1]); }

static int opt_test(singa_cli *c, int i)
{
    (void)i;
    c->test = true;
    return GO_ON;
}

static int opt_run(singa_cli *c, int i)
{
    (void)i;
    c->tui.run = true;
    return GO_ON;
}

static int opt_control(singa_cli *c, int i)
{
    (void)i;
    c->tui.control = true;
    return GO_ON;
}

/* -e, --dot and --summary: the script, whose arguments follow it. */
static int script(singa_cli *c, int i)
{
    c->script = c->argv[i + 1];
    c->first_arg = i + 2;
    return STOP;
}

static int opt_e(singa_cli *c, int i) { return script(c, i); }

static int opt_dot(singa_cli *c, int i)
{
    c->dot = true;
    return script(c, i);
}

static int opt_summary(singa_cli *c, int i)
{
    c->summary = true;
    return script(c, i);
}

static int opt_convert(singa_cli *c, int i)
{
    c->convert = true;
    c->script = c->argv[i + 1];
    return STOP;
}

/* A count of processes, 1..1024, or 0. */
static int count(const char *s)
{
    char *end;
    long n = strtol(s, &end, 10);
    return end == s || *end || n < 1 || n > 1024 ? 0 : (int)n;
}

static int opt_procs(singa_cli *c, int i)
{
    if (!(c->procs = count(c->argv[i + 1]))) {
        fprintf(stderr, "singa-tui: --procs needs a number of processes (1..1024), got '%s'\n", c->argv[i + 1]);
        return 2;
    }
    c->procs_at = i;
    return GO_ON;
}

static int opt_elastic(singa_cli *c, int i)
{
    if (!(c->elastic = count(c->argv[i + 1]))) {
        fprintf(stderr, "singa-tui: --elastic needs the fewest processes the job goes on with (1..N of "
                        "--procs N), got '%s'\n", c->argv[i + 1]);
        return 2;
    }
    c->elastic_at = i;
    return GO_ON;
}

static int opt_plan(singa_cli *c, int i)
{
    (void)i;
    c->plan = true;
    return GO_ON;
}

static int opt_plan_cores(singa_cli *c, int i)
{
    if (!(c->plan_args.cores = count(c->argv[i + 1]))) {
        fprintf(stderr, "singa-tui: --plan-cores needs each host's cores (1..1024), got '%s'\n", c->argv[i + 1]);
        return 2;
    }
    return GO_ON;
}

static int opt_simulate(singa_cli *c, int i)
{
    if (!(c->plan_args.simulate = count(c->argv[i + 1])) || c->plan_args.simulate < 2) {
        fprintf(stderr, "singa-tui: --simulate needs a number of processes (2..1024), got '%s'\n", c->argv[i + 1]);
        return 2;
    }
    return GO_ON;
}

static const option options[] = {
    {"-e", NULL, "FILE", opt_e, 0,
     "run the Lua script FILE headless; ARGS are visible to it as `arg`\n"
     "(note: in the `lua` program -e runs a string; here it runs a file);\n"
     "a SINGA job.conf runs as singa.train(singa.import_conf(FILE))"},
    {"--convert", NULL, "FILE", opt_convert, 0,
     "print the SINGA job.conf FILE as a Lua job script that runs the same job"},
    {"--metrics", NULL, "FILE", NULL, offsetof(singa_cli, metrics),
     "write one record per display, test and validation result to FILE:\n"
     "CSV if FILE ends in .csv, otherwise JSON lines"},
    {"--trace", NULL, "FILE", NULL, offsetof(singa_cli, trace),
     "write the timeline of every job the script trains to FILE as Chrome\n"
     "trace-event JSON (Perfetto, chrome://tracing): the last 50 steps"},
    {"--trace-steps", NULL, "A:B", NULL, offsetof(singa_cli, trace_steps),
     "with --trace: steps A to B instead"},
    {"--test", NULL, NULL, opt_test, 0,
     "do not train: the script's first singa.train(job) loads the newest\n"
     "checkpoint in the job's checkpoint_path, runs test_steps batches of\n"
     "the kTest net, prints the test metrics and ends the script"},
    {"--dot", NULL, "FILE", opt_dot, 0,
     "do not train: print the net of the script's first singa.train(job) as\n"
     "Graphviz DOT, partitioned over a worker group (singa.graph), and end"},
    {"--summary", NULL, "FILE", opt_summary, 0,
     "do not train: print the summary of the net of the script's first\n"
     "singa.train(job) (layers, output shapes, param counts) and end"},
    {"--export-onnx", NULL, "OUT", NULL, offsetof(singa_cli, export_onnx),
     "do not train: write the model of the script's first singa.train(job)\n"
     "(its kTest net, newest checkpoint) to OUT as ONNX, print what it wrote, end"},
    {"--check-plugin", NULL, "FILE", opt_check_plugin, 0,
     "load the plugin FILE (a .so) and gradient-check every layer\n"
     "type it registers; exits non-zero when a check fails"},
    {"--ckpt-info", NULL, "PATH", opt_ckpt_info, 0,
     "print a checkpoint of any topology (a file, one file of a distributed\n"
     "step, or a folder's newest whole step): its step, topology, params\n"
     "with shapes, updater slots and files; exits non-zero naming a file\n"
     "that is missing, truncated or corrupt"},
    {"--ckpt-gather", NULL, "PATH OUT", opt_ckpt_gather, 0,
     "write the checkpoint PATH names (e.g. a distributed job's\n"
     "folder) as one plain checkpoint file OUT, which a plain job resumes"},
    {"--curve-keygen", NULL, "NAME", opt_curve_keygen, 0,
     "write a CURVE key pair for cluster.curve: NAME.key (secret, mode\n"
     "600) and NAME.pub (public), making missing folders (mode 700);\n"
     "existing files are not overwritten"},
    {"--plan", NULL, NULL, opt_plan, 0,
     "do not train: profile the script's first singa.train(job) on this\n"
     "machine (a few steps on its data) and print the configurations its net\n"
     "allows over --procs N processes (default 2) or one per --hosts host\n"
     "(--procs N --hosts: N processes spread over the hosts),\n"
     "ranked by predicted images/s, with the Lua to put in the job"},
    {"--hosts", NULL, "HOSTS", NULL, offsetof(singa_cli, plan_args.hosts),
     "with --plan: plan for one process on each host of HOSTS, a comma-\n"
     "separated list (H1,H2,...), over a 1 Gbit/s link; with --procs N, N\n"
     "processes spread over them (the first hosts one more when N does not\n"
     "divide), the processes of a host over the local link and its cores"},
    {"--plan-cores", NULL, "C", opt_plan_cores, 0,
     "with --plan: each host has C cores (default: this machine's), which its\n"
     "processes share"},
    {"--plan-out", NULL, "FILE", NULL, offsetof(singa_cli, plan_args.out),
     "with --plan: write the table as JSON lines to FILE, one record per\n"
     "configuration (cluster, images_per_sec, step_seconds, wire_bytes,\n"
     "memory_bytes)"},
    {"--plan-link", NULL, "LINK", NULL, offsetof(singa_cli, plan_args.link),
     "with --plan: the link between processes: local (measured over a Unix\n"
     "socket pair; the default on one host), 1gbit (the default with --hosts),\n"
     "<N>gbit or <N>mbit, optionally ,<latency>us"},
    {"--simulate", NULL, "N", opt_simulate, 0,
     "with --plan: rank the configurations of N processes on the same\n"
     "measured compute and link"},
    {"--run", NULL, NULL, opt_run, 0,
     "in the workbench, train at once instead of waiting for the r key"},
    {"--procs", NULL, "N", opt_procs, 0,
     "run the job as N processes on this machine (ranks 0..N-1 over loopback\n"
     "tcp); the job's cluster must place its threads in N processes.  Without\n"
     "-e, rank 0 is the workbench and the others run headless"},
    {"--elastic", NULL, "MIN", opt_elastic, 0,
     "with --procs N: when a process of the (synchronous) job dies or hangs,\n"
     "the job starts again from its newest checkpoint on the processes left,\n"
     "while at least MIN are (cluster.elastic's min; max_restarts times)"},
    {"--listen", NULL, "ADDR", NULL, offsetof(singa_cli, listen),
     "with -e: the job listens at ADDR (e.g. tcp://127.0.0.1:7070) for\n"
     "workbenches that attach (in a distributed job, rank 0 does); a job's\n"
     "cluster.monitor = { address = ADDR, control = BOOL } does the same"},
    {"--control", NULL, NULL, opt_control, 0,
     "with --listen: attached workbenches may pause, checkpoint, scale the\n"
     "learning rate and stop the job; with --attach: ask to (only a job\n"
     "that allows it agrees)"},
    {"--attach", NULL, "ADDR", NULL, offsetof(singa_cli, tui.attach),
     "open the workbench on the job listening at ADDR: its panels, from the\n"
     "start of its run; q detaches and the job goes on"},
    {"--curve-key", NULL, "FILE", NULL, offsetof(singa_cli, tui.curve_key),
     "with --attach to a job with cluster.curve: the secret key file of the\n"
     "job's key pair (its public key must be in the job's public_keys_dir)"},
    {"--open", NULL, "FILE", NULL, offsetof(singa_cli, tui.open),
     "open a finished run's metrics file (--metrics) in the workbench"},
    {"--help", "-h", NULL, opt_help, 0,
     "show this help"},
    {"--version", NULL, NULL, opt_version, 0,
     "show the version"},
};

#define NOPTIONS (sizeof options / sizeof *options)

/* The arguments the option takes: the words of its `arg`. */
static int nargs(const option *o)
{
    int n = o->arg ? 1 : 0;
    for (const char *s = o->arg; s && *s; s++)
        n += *s == ' ';
    return n;
}

/* An option without a handler: its argument, at its field. */
static int store(singa_cli *c, const option *o, int i)
{
    *(const char **)((char *)c + o->field) = c->argv[i + 1];
    return GO_ON;
}

static const option *find(const char *name)
{
    for (size_t k = 0; k < NOPTIONS; k++)
        if (strcmp(name, options[k].name) == 0 || (options[k].alias && strcmp(name, options[k].alias) == 0))
            return &options[k];
    return NULL;
}

void singa_cli_usage(FILE *f)
{
    fputs("usage: singa-tui [options] -e FILE [ARGS...]\n"
          "       singa-tui [options] [--run] [FILE [ARGS...]]\n"
          "\n",
          f);
    for (size_t k = 0; k < NOPTIONS; k++) {
        const option *o = &options[k];
        char left[64];
        snprintf(left, sizeof left, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
                 o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(f, "  %-14s  ", left);
        const char *s = o->help, *nl;
        for (; (nl = strchr(s, '\n')); s = nl + 1)
            fprintf(f, "%.*s\n%18s", (int)(nl - s), s, "");
        fprintf(f, "%s\n", s);
    }
    fputs("\n"
          "A job script calls singa.train{...}: see docs/02-jobs-and-layers.md for the job format.\n"
          "Plugins (*.so) are loaded from $SINGA_PLUGIN_PATH (folders, colon-separated),\n"
          "plugins/ beside the program and " SINGA_PLUGINDIR ".\n"
          "Without -e, FILE opens in the interactive workbench (a terminal UI: ? shows its keys); with\n"
          "no FILE, a start screen lists the demos and recently opened scripts.\n"
          "The manual, singa-tui(1) (man singa-tui), also gives the environment variables, files and\n"
          "exit statuses.\n",
          f);
}

/* Options that need others, or exclude them; 2 with the message, or -1. */
static int check_options(const singa_cli *c)
{
    const singa_tui_args *tui = &c->tui;
    if (c->export_onnx && !c->script) {
        fprintf(stderr, "singa-tui: --export-onnx needs the job's script: singa-tui --export-onnx %s -e FILE\n",
                c->export_onnx);
        return 2;
    }
    if ((tui->attach || tui->open) && (c->script || tui->file || c->procs || (tui->attach && tui->open))) {
        fprintf(stderr, "singa-tui: --%s opens the workbench on %s alone: no FILE, -e, --procs or --%s\n",
                tui->attach ? "attach" : "open", tui->attach ? "a running job" : "a finished run",
                tui->attach ? "open" : "attach");
        return 2;
    }
    if (c->listen && !c->script) {
        fprintf(stderr, "singa-tui: --listen is for a job run headless: singa-tui --listen %s -e FILE\n", c->listen);
        return 2;
    }
    if (!c->plan && (c->plan_args.hosts || c->plan_args.out || c->plan_args.link || c->plan_args.simulate ||
                     c->plan_args.cores)) {
        fprintf(stderr, "singa-tui: --hosts, --plan-out, --plan-link, --plan-cores and --simulate go with --plan\n");
        return 2;
    }
    singa_err err; /* a trace that cannot be written is refused before any training */
    int from, to;
    if ((c->trace && singa_trace_check_path(c->trace, &err) < 0) ||
        (c->trace_steps && singa_trace_parse_steps(c->trace_steps, &from, &to, &err) < 0)) {
        fprintf(stderr, "singa-tui: --%s\n", err.msg);
        return 2;
    }
    if (c->trace_steps && !c->trace) {
        fprintf(stderr, "singa-tui: --trace-steps needs --trace FILE\n");
        return 2;
    }
    return -1;
}

/* What the run needs: the job's FILE for --procs, enough processes for --elastic, a terminal
 * for the workbench; 2 with the message, or -1. */
static int check_run(const singa_cli *c)
{
    if (c->procs > 1 && !c->script && !c->tui.file) {
        fprintf(stderr, "singa-tui: --procs needs the job's FILE (singa-tui --procs %d [-e] FILE)\n", c->procs);
        return 2;
    }
    if (c->elastic && (c->procs < 2 || c->elastic > c->procs)) {
        fprintf(stderr, "singa-tui: --elastic %d needs --procs N with N >= %d (under mpirun or srun, set "
                        "cluster.elastic in the job)\n", c->elastic, c->elastic > 2 ? c->elastic : 2);
        return 2;
    }
    if (!c->script && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
        fprintf(stderr, "singa-tui: the workbench needs a terminal, and standard %s is not one;\n"
                        "to run a job without a terminal, use: singa-tui -e %s\n",
                isatty(STDIN_FILENO) ? "output" : "input", c->tui.file ? c->tui.file : "FILE");
        singa_cli_usage(stderr);
        return 2;
    }
    return -1;
}

/* --plan: what --procs and FILE mean to it; 2 with the message, or -1. */
static int plan_options(singa_cli *c)
{
    c->plan_args.procs = c->procs;
    c->procs = 0;
    if (c->elastic) {
        fprintf(stderr, "singa-tui: --elastic does not go with --plan\n");
        return 2;
    }
    if (!c->script && c->tui.file) {
        c->script = c->tui.file;
        c->first_arg = c->tui.first_arg;
    }
    if (!c->script) {
        fprintf(stderr, "singa-tui: --plan needs the job's FILE (singa-tui --plan [--procs N] [--hosts H1,H2] FILE)\n");
        return 2;
    }
    return singa_tui_plan_check(&c->plan_args) ? 2 : -1;
}

int singa_cli_parse(singa_cli *c, int argc, char **argv)
{
    *c = (singa_cli){.argc = argc, .argv = argv, .first_arg = argc,
                     .tui = {.argc = argc, .argv = argv, .first_arg = argc}};
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-') { /* the workbench, with this script */
            c->tui.file = argv[i];
            c->tui.first_arg = i + 1;
            break;
        }
        const option *o = find(argv[i]);
        if (!o || i + nargs(o) >= argc) {
            fprintf(stderr, "singa-tui: unknown or incomplete option '%s'\n", argv[i]);
            singa_cli_usage(stderr);
            return 2;
        }
        int rc = o->handler ? o->handler(c, i) : store(c, o, i);
        if (rc == STOP)
            break;
        if (rc != GO_ON)
            return rc;
        i += nargs(o);
    }
    int rc = check_options(c);
    if (rc < 0 && c->plan) /* --procs N is the plan's, and the job's FILE runs headless */
        rc = plan_options(c);
    return rc >= 0 ? rc : check_run(c);
}

singa_lua_mode singa_cli_mode(const singa_cli *c)
{
    if (c->plan)
        return (singa_lua_mode){singa_tui_mode_plan, (const char *)(const void *)&c->plan_args};
    if (c->export_onnx)
        return (singa_lua_mode){singa_tui_mode_export_onnx, c->export_onnx};
    if (c->summary)
        return (singa_lua_mode){singa_tui_mode_summary, NULL};
    if (c->dot)
        return (singa_lua_mode){singa_tui_mode_dot, NULL};
    return (singa_lua_mode){c->test ? singa_tui_mode_test : NULL, NULL};
}
