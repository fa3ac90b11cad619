/* singa-tui --ckpt-info and --ckpt-gather (ckpt_cli.c): a checkpoint of any topology, inspected
 * or gathered into one plain file. */
#ifndef SINGA_APP_CKPT_CLI_H
#define SINGA_APP_CKPT_CLI_H

/* Prints the step, the topology, the params with their shapes, the updater slots and every file
 * read; returns the exit status: 1 when a file was refused (missing, truncated or corrupt: named
 * on stderr) or nothing verifies. */
int singa_tui_ckpt_info(const char *path);
/* Writes the checkpoint `path` names as one plain checkpoint `out`; returns the exit status. */
int singa_tui_ckpt_gather(const char *path, const char *out);

#endif
