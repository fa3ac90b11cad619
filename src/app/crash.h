/* Faults (crash.c): what singa-tui says before it dies of one. */
#ifndef SINGA_APP_CRASH_H
#define SINGA_APP_CRASH_H

/* Catches SIGSEGV, SIGBUS and SIGFPE once each: the handler writes to stderr which layer was
 * running (singa_layer_running_report), then dies of the signal as if uncaught. */
void singa_tui_crash_handlers(void);

#endif
