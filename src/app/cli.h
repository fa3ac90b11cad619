/* singa-tui's command line: one table of its options (cli.c), from which it is parsed, checked
 * and described by --help. */
#ifndef SINGA_APP_CLI_H
#define SINGA_APP_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "app/plan_cli.h"
#include "lua/lsinga.h"
#include "tui/tui.h"

/* What the command line asks for, as the options' handlers leave it. */
typedef struct singa_cli {
    int argc;
    char **argv;
    const char *script;  /* -e FILE, --dot FILE, --summary FILE, --convert FILE: run headless */
    int first_arg;       /* the script's arguments are argv[first_arg..argc-1] */
    bool convert;        /* --convert: print the script as Lua instead */
    bool test, dot, summary;
    const char *export_onnx, *metrics, *listen, *trace, *trace_steps;
    int procs, procs_at; /* --procs N, at argv[procs_at] */
    int elastic, elastic_at;
    bool plan;           /* --plan: the job's configurations ranked (plan_cli.c), with plan_args */
    singa_tui_plan_args plan_args;
    singa_tui_args tui;  /* the workbench's (FILE, --run, --attach ...) */
} singa_cli;

/* Reads argv into c.  Returns -1 to go on and run, or the status to exit with at once: 0 after
 * --help, --version and the options that do their work alone (--check-plugin ...), 2 with the
 * message on stderr for a command line that is wrong (an unknown option, one without its
 * argument, options that do not go together). */
int singa_cli_parse(singa_cli *c, int argc, char **argv);
/* What singa.train does instead of training, by the options given (run NULL: it trains). */
singa_lua_mode singa_cli_mode(const singa_cli *c);
/* --help's text, from the table. */
void singa_cli_usage(FILE *f);

#endif
