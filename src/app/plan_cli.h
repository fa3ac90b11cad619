/* singa-tui --plan: the mode whose singa.train profiles the script's first job and prints the
 * configurations its net allows, ranked by predicted images/s (singa/plan.h). */
#ifndef SINGA_APP_PLAN_CLI_H
#define SINGA_APP_PLAN_CLI_H

#include <lua.h>

typedef struct singa_tui_plan_args {
    int procs;         /* --procs N (0: 2, or one per host; with hosts spread over them) */
    const char *hosts; /* --hosts H1,H2,... or NULL */
    const char *out;   /* --plan-out FILE.jsonl or NULL */
    const char *link;  /* --plan-link SPEC or NULL (local on one host, 1gbit with --hosts) */
    int simulate;      /* --simulate N or 0 */
    int cores;         /* --plan-cores C or 0 (this machine's) */
} singa_tui_plan_args;

/* Checks the hosts (each resolvable, none twice); 0, or 2 with the message on stderr. */
int singa_tui_plan_check(const singa_tui_plan_args *a);
/* The mode (lsinga.h's singa_lua_mode); arg is a singa_tui_plan_args the caller keeps. */
void singa_tui_mode_plan(lua_State *L, const char *arg);

#endif
