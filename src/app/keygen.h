/* singa-tui --curve-keygen (keygen.c). */
#ifndef SINGA_APP_KEYGEN_H
#define SINGA_APP_KEYGEN_H

/* Writes NAME.key and NAME.pub; returns the exit status. */
int singa_tui_curve_keygen(const char *name);

#endif
