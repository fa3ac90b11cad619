/* singa-tui's side of plugins (singa/plugin.h): the folders it scans and --check-plugin. */
#ifndef SINGA_APP_PLUGIN_CLI_H
#define SINGA_APP_PLUGIN_CLI_H

#include <stddef.h>

/* The folder of the program, as dir; returns 1 when it runs from libtool's .libs/ in the build
 * tree (dir is then the build tree's top, where lua/ and plugins/ are). */
int singa_tui_program_dir(char *dir, size_t cap);
/* The folders whose plugins every Lua state loads, colon-separated, in this order:
 * $SINGA_PLUGIN_PATH, plugins/ beside the program (and plugins/.libs/ when the program runs
 * from libtool's .libs/, as in the build tree), and the installed plugin folder. */
void singa_tui_plugin_path(char *buf, size_t cap);
/* --check-plugin FILE: loads the plugin alone and gradient-checks each of its layer types,
 * printing one line per type.  Returns the exit status: 0 when every check passes. */
int singa_tui_check_plugin(const char *file);

#endif
