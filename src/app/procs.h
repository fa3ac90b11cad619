/* singa-tui --procs N (procs.c). */
#ifndef SINGA_APP_PROCS_H
#define SINGA_APP_PROCS_H

/* Runs argv (without argv[procs_at] and the count after it, nor argv[elastic_at] and its MIN)
 * as ranks 0..n-1 of one job on this machine and waits for them; returns the exit status.
 * file_at > 0: argv[file_at] is the workbench's FILE, so rank 0 is the workbench and the others
 * run FILE headless.  elastic > 0 (`--elastic MIN`, at elastic_at): the job is elastic with that
 * min, and when its ranks end for a lost process (SINGA_EXIT_LOST) it runs again on the ones
 * left. */
int singa_tui_procs(int n, int procs_at, int elastic, int elastic_at, int file_at, int argc, char **argv);

#endif
