/* singa-tui: runs Lua jobs.  `-e FILE` runs a script headless (unlike the `lua` program, where
 * -e runs a string); without -e, `singa-tui [FILE]` opens the interactive workbench (src/tui/).
 * Script errors are reported with file:line and a traceback, the engine's (singa.core's) with
 * file:line alone (singa_lua_traceback).  `--test`
 * turns the script's singa.train into an evaluation of the job's newest checkpoint, after which
 * the script ends (with success). */
#include <lauxlib.h>
#include <lualib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/ckpt_cli.h"
#include "app/crash.h"
#include "app/keygen.h"
#include "app/modes.h"
#include "app/plugin_cli.h"
#include "app/procs.h"
#include "lua/lsinga.h"
#include "metricsfile/metricsfile.h"
#include "paths.h"
#include "singa/singa.h"
#include "tui/monitor.h"
#include "tui/tui.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: singa-tui [options] -e FILE [ARGS...]\n"
            "       singa-tui [options] [--run] [FILE [ARGS...]]\n"
            "\n"
            "  -e FILE         run the Lua script FILE headless; ARGS are visible to it as `arg`\n"
            "                  (note: in the `lua` program -e runs a string; here it runs a file);\n"
            "                  a SINGA job.conf runs as singa.train(singa.import_conf(FILE))\n"
            "  --convert FILE  print the SINGA job.conf FILE as a Lua job script that runs the same job\n"
            "  --metrics FILE  write one record per display, test and validation result to FILE:\n"
            "                  CSV if FILE ends in .csv, otherwise JSON lines\n"
            "  --trace FILE    write the timeline of every job the script trains to FILE as Chrome\n"
            "                  trace-event JSON (Perfetto, chrome://tracing): the last 50 steps\n"
            "  --trace-steps A:B  with --trace: steps A to B instead\n"
            "  --test          do not train: the script's first singa.train(job) loads the newest\n"
            "                  checkpoint in the job's checkpoint_path, runs test_steps batches of\n"
            "                  the kTest net, prints the test metrics and ends the script\n"
            "  --dot FILE      do not train: print the net of the script's first singa.train(job) as\n"
            "                  Graphviz DOT, partitioned over a worker group (singa.graph), and end\n"
            "  --summary FILE  do not train: print the summary of the net of the script's first\n"
            "                  singa.train(job) (layers, output shapes, param counts) and end\n"
            "  --export-onnx OUT  do not train: write the model of the script's first singa.train(job)\n"
            "                  (its kTest net, newest checkpoint) to OUT as ONNX, print what it wrote, end\n"
            "  --check-plugin FILE  load the plugin FILE (a .so) and gradient-check every layer\n"
            "                  type it registers; exits non-zero when a check fails\n"
            "  --ckpt-info PATH  print a checkpoint of any topology (a file, one file of a distributed\n"
            "                  step, or a folder's newest whole step): its step, topology, params\n"
            "                  with shapes, updater slots and files; exits non-zero naming a file\n"
            "                  that is missing, truncated or corrupt\n"
            "  --ckpt-gather PATH OUT  write the checkpoint PATH names (e.g. a distributed job's\n"
            "                  folder) as one plain checkpoint file OUT, which a plain job resumes\n"
            "  --curve-keygen NAME  write a CURVE key pair for cluster.curve: NAME.key (secret, mode\n"
            "                  600) and NAME.pub (public), making missing folders (mode 700);\n"
            "                  existing files are not overwritten\n"
            "  --run           in the workbench, train at once instead of waiting for the r key\n"
            "  --procs N       run the job as N processes on this machine (ranks 0..N-1 over loopback\n"
            "                  tcp); the job's cluster must place its threads in N processes.  Without\n"
            "                  -e, rank 0 is the workbench and the others run headless\n"
            "  --elastic MIN   with --procs N: when a process of the (synchronous) job dies or hangs,\n"
            "                  the job starts again from its newest checkpoint on the processes left,\n"
            "                  while at least MIN are (cluster.elastic's min; max_restarts times)\n"
            "  --listen ADDR   with -e: the job listens at ADDR (e.g. tcp://127.0.0.1:7070) for\n"
            "                  workbenches that attach (in a distributed job, rank 0 does); a job's\n"
            "                  cluster.monitor = { address = ADDR, control = BOOL } does the same\n"
            "  --control       with --listen: attached workbenches may pause, checkpoint, scale the\n"
            "                  learning rate and stop the job; with --attach: ask to (only a job\n"
            "                  that allows it agrees)\n"
            "  --attach ADDR   open the workbench on the job listening at ADDR: its panels, from the\n"
            "                  start of its run; q detaches and the job goes on\n"
            "  --curve-key FILE  with --attach to a job with cluster.curve: the secret key file of the\n"
            "                  job's key pair (its public key must be in the job's public_keys_dir)\n"
            "  --open FILE     open a finished run's metrics file (--metrics) in the workbench\n"
            "  -h, --help      show this help\n"
            "  --version       show the version\n"
            "\n"
            "A job script calls singa.train{...}: see README.md for the job format.\n"
            "Plugins (*.so) are loaded from $SINGA_PLUGIN_PATH (folders, colon-separated),\n"
            "plugins/ beside the program and " SINGA_PLUGINDIR ".\n"
            "Without -e, FILE opens in the interactive workbench (a terminal UI: ? shows its keys); with\n"
            "no FILE, a start screen lists the demos and recently opened scripts.\n"
            "The manual, singa-tui(1) (man singa-tui), also gives the environment variables, files and\n"
            "exit statuses.\n");
}

/* package.path gains the lua/ folder beside the program, $SINGA_LUA_PATH and the installed one. */
static void set_paths(lua_State *L)
{
    char dir[PATH_MAX];
    singa_tui_program_dir(dir, sizeof dir);
    const char *env = getenv("SINGA_LUA_PATH");
    lua_getglobal(L, "package");
    lua_pushfstring(L, "%s%s%s/lua/?.lua;%s/?.lua;", env ? env : "", env ? "/?.lua;" : "", dir,
                    SINGA_LUADIR);
    lua_getfield(L, -2, "path");
    lua_concat(L, 2);
    lua_setfield(L, -2, "path");
    lua_getfield(L, -1, "preload");
    lua_pushcfunction(L, luaopen_singa_core);
    lua_setfield(L, -2, "singa.core");
    lua_pop(L, 2);
}

/* Progress redrawn in place (\r, ESC[K) only on a terminal of this process's own: under a
 * launcher (mpirun, srun, --procs) the ranks' outputs are merged into one stream, often a log,
 * even when each rank's stdout is a pty the launcher forwards. */
static bool own_terminal(void)
{
    int rank, size;
    const char *from;
    singa_err err;
    return isatty(STDOUT_FILENO) && singa_launch_rank(&rank, &size, &from, &err) == 0 &&
           strcmp(from, "no launcher") == 0;
}

static int run_script(lua_State *L, const char *file, int argc, char **argv, int first)
{
    lua_createtable(L, argc - first, 1);
    lua_pushstring(L, file);
    lua_rawseti(L, -2, 0);
    for (int i = first; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - first + 1);
    }
    lua_setglobal(L, "arg");
    lua_pushcfunction(L, singa_lua_traceback);
    int base = lua_gettop(L);
    int rc = singa_lua_load_job(L, file);
    if (rc == LUA_OK) {
        for (int i = first; i < argc; i++)
            lua_pushstring(L, argv[i]);
        rc = lua_pcall(L, argc - first, 0, base);
    }
    if (rc != LUA_OK && singa_lua_finished(L, -1))
        rc = LUA_OK;
    if (rc != LUA_OK) {
        fflush(stdout);
        fprintf(stderr, "singa-tui: %s\n", lua_tostring(L, -1));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *script = NULL, *metrics = NULL, *export_onnx = NULL, *listen = NULL, *trace = NULL, *trace_steps = NULL;
    int first_arg = argc, test_only = 0, dot = 0, summary = 0, procs = 0, procs_at = 0, convert = 0;
    int elastic = 0, elastic_at = 0;
    singa_tui_args tui = {.argc = argc, .argv = argv, .first_arg = argc}; /* the workbench's */
    singa_tui_crash_handlers();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("singa-tui %s (%s, OpenBLAS)\n", SINGA_VERSION, LUA_RELEASE);
            return 0;
        } else if (strcmp(argv[i], "--test") == 0) {
            test_only = 1;
        } else if (strcmp(argv[i], "--check-plugin") == 0 && i + 1 < argc) {
            return singa_tui_check_plugin(argv[i + 1]);
        } else if (strcmp(argv[i], "--ckpt-info") == 0 && i + 1 < argc) {
            return singa_tui_ckpt_info(argv[i + 1]);
        } else if (strcmp(argv[i], "--ckpt-gather") == 0 && i + 2 < argc) {
            return singa_tui_ckpt_gather(argv[i + 1], argv[i + 2]);
        } else if (strcmp(argv[i], "--curve-keygen") == 0 && i + 1 < argc) {
            return singa_tui_curve_keygen(argv[i + 1]);
        } else if (strcmp(argv[i], "--export-onnx") == 0 && i + 1 < argc) {
            export_onnx = argv[++i];
        } else if (strcmp(argv[i], "--metrics") == 0 && i + 1 < argc) {
            metrics = argv[++i];
        } else if (strcmp(argv[i], "--trace") == 0 && i + 1 < argc) {
            trace = argv[++i];
        } else if (strcmp(argv[i], "--trace-steps") == 0 && i + 1 < argc) {
            trace_steps = argv[++i];
        } else if (strcmp(argv[i], "--procs") == 0 && i + 1 < argc) {
            char *end;
            long n = strtol(argv[i + 1], &end, 10);
            if (end == argv[i + 1] || *end || n < 1 || n > 1024) {
                fprintf(stderr, "singa-tui: --procs needs a number of processes (1..1024), got '%s'\n", argv[i + 1]);
                return 2;
            }
            procs = (int)n;
            procs_at = i++;
        } else if (strcmp(argv[i], "--elastic") == 0 && i + 1 < argc) {
            char *end;
            long n = strtol(argv[i + 1], &end, 10);
            if (end == argv[i + 1] || *end || n < 1 || n > 1024) {
                fprintf(stderr, "singa-tui: --elastic needs the fewest processes the job goes on with (1..N of "
                                "--procs N), got '%s'\n", argv[i + 1]);
                return 2;
            }
            elastic = (int)n;
            elastic_at = i++;
        } else if (strcmp(argv[i], "--run") == 0) {
            tui.run = true;
        } else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
            listen = argv[++i];
        } else if (strcmp(argv[i], "--control") == 0) {
            tui.control = true;
        } else if (strcmp(argv[i], "--attach") == 0 && i + 1 < argc) {
            tui.attach = argv[++i];
        } else if (strcmp(argv[i], "--curve-key") == 0 && i + 1 < argc) {
            tui.curve_key = argv[++i];
        } else if (strcmp(argv[i], "--open") == 0 && i + 1 < argc) {
            tui.open = argv[++i];
        } else if (strcmp(argv[i], "--convert") == 0 && i + 1 < argc) {
            convert = 1;
            script = argv[++i];
            break;
        } else if (argv[i][0] != '-') { /* the workbench, with this script */
            tui.file = argv[i];
            tui.first_arg = i + 1;
            break;
        } else if ((strcmp(argv[i], "-e") == 0 || strcmp(argv[i], "--dot") == 0 || strcmp(argv[i], "--summary") == 0) &&
                   i + 1 < argc) {
            dot = strcmp(argv[i], "--dot") == 0;
            summary = strcmp(argv[i], "--summary") == 0;
            script = argv[++i];
            first_arg = i + 1;
            break;
        } else {
            fprintf(stderr, "singa-tui: unknown or incomplete option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (export_onnx && !script) {
        fprintf(stderr, "singa-tui: --export-onnx needs the job's script: singa-tui --export-onnx %s -e FILE\n", export_onnx);
        return 2;
    }
    if ((tui.attach || tui.open) && (script || tui.file || procs || (tui.attach && tui.open))) {
        fprintf(stderr, "singa-tui: --%s opens the workbench on %s alone: no FILE, -e, --procs or --%s\n",
                tui.attach ? "attach" : "open", tui.attach ? "a running job" : "a finished run", tui.attach ? "open" : "attach");
        return 2;
    }
    if (listen && !script) {
        fprintf(stderr, "singa-tui: --listen is for a job run headless: singa-tui --listen %s -e FILE\n", listen);
        return 2;
    }
    singa_err err; /* a trace that cannot be written is refused before any training */
    int from, to;
    if ((trace && singa_trace_check_path(trace, &err) < 0) ||
        (trace_steps && singa_trace_parse_steps(trace_steps, &from, &to, &err) < 0)) {
        fprintf(stderr, "singa-tui: --%s\n", err.msg);
        return 2;
    }
    if (trace_steps && !trace) {
        fprintf(stderr, "singa-tui: --trace-steps needs --trace FILE\n");
        return 2;
    }
    if (procs > 1 && !script && !tui.file) {
        fprintf(stderr, "singa-tui: --procs needs the job's FILE (singa-tui --procs %d [-e] FILE)\n", procs);
        return 2;
    }
    if (elastic && (procs < 2 || elastic > procs)) {
        fprintf(stderr, "singa-tui: --elastic %d needs --procs N with N >= %d (under mpirun or srun, set "
                        "cluster.elastic in the job)\n", elastic, elastic > 2 ? elastic : 2);
        return 2;
    }
    if (!script && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
        fprintf(stderr, "singa-tui: the workbench needs a terminal, and standard %s is not one;\n"
                        "to run a job without a terminal, use: singa-tui -e %s\n",
                isatty(STDIN_FILENO) ? "output" : "input", tui.file ? tui.file : "FILE");
        usage(stderr);
        return 2;
    }
    if (procs > 1) /* the ranks run this program again, without --procs */
        return singa_tui_procs(procs, procs_at, elastic, elastic_at, script ? 0 : tui.first_arg - 1, argc, argv);
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    singa_lua_opts opts = {.progress_line = own_terminal(), .lock = &lock, .trace = trace, .trace_steps = trace_steps};
    opts.mode = export_onnx ? (singa_lua_mode){singa_tui_mode_export_onnx, export_onnx}
                : summary   ? (singa_lua_mode){singa_tui_mode_summary, NULL}
                : dot       ? (singa_lua_mode){singa_tui_mode_dot, NULL}
                : test_only ? (singa_lua_mode){singa_tui_mode_test, NULL}
                            : (singa_lua_mode){NULL, NULL};
    char plugin_path[4 * PATH_MAX + 64];
    singa_tui_plugin_path(plugin_path, sizeof plugin_path);
    opts.plugin_path = plugin_path;
    if (metrics) {
        if (!(opts.metrics = fopen(metrics, "w"))) {
            perror(metrics);
            return 2;
        }
        size_t len = strlen(metrics);
        opts.metrics_csv = len > 4 && strcmp(metrics + len - 4, ".csv") == 0;
        singa_metrics_file_header(opts.metrics, opts.metrics_csv);
    }
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "singa-tui: cannot create a Lua state (out of memory)\n");
        return 1;
    }
    luaL_openlibs(L);
    set_paths(L);
    singa_lua_set_opts(L, &opts);
    pthread_mutex_lock(&lock);
    tui_monitor *monitor = NULL; /* a headless job listens for workbenches when asked */
    if (script && !convert && !opts.mode.run &&
        tui_monitor_new(&monitor, L, &opts, listen, tui.control, &err) < 0) {
        fprintf(stderr, "singa-tui: %s\n", err.msg);
        pthread_mutex_unlock(&lock);
        lua_close(L);
        return 1;
    }
    int rc = convert  ? singa_lua_convert(L, script)
             : script ? run_script(L, script, argc, argv, first_arg)
                      : singa_tui_main(L, &opts, &tui);
    pthread_mutex_unlock(&lock);
    if (rc != 0 && opts.lost)
        rc = SINGA_EXIT_LOST;
    tui_monitor_free(monitor, rc != 0);
    lua_close(L);
    if (opts.metrics && fclose(opts.metrics) != 0) {
        perror(metrics);
        rc = 1;
    }
    return rc;
}
