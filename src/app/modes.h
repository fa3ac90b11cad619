/* The modes of singa-tui whose singa.train does not train but does this to the script's first
 * job and ends the script (lua/lsinga.h's singa_lua_mode); arg is the mode's output file. */
#ifndef SINGA_APP_MODES_H
#define SINGA_APP_MODES_H

#include <lua.h>

/* --test: evaluates the job's newest checkpoint (singa.test) */
void singa_tui_mode_test(lua_State *L, const char *arg);
/* --dot FILE: prints the job's net, partitioned over a worker group, as Graphviz DOT */
void singa_tui_mode_dot(lua_State *L, const char *arg);
/* --summary FILE: prints the summary of the job's net */
void singa_tui_mode_summary(lua_State *L, const char *arg);
/* --export-onnx OUT: writes the job's model to OUT as ONNX and prints what it wrote */
void singa_tui_mode_export_onnx(lua_State *L, const char *arg);

#endif
