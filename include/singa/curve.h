/* CURVE (cluster.curve) for sockets of the host's own, such as the listening socket of a job's
 * monitor (singa-tui --listen): the job's key pair, and a ZAP handler that lets in only clients
 * whose public key is in public_keys_dir.  The runtime uses the same between processes. */
#ifndef SINGA_CURVE_H
#define SINGA_CURVE_H

#include "singa/cluster.h"
#include "singa/error.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

typedef struct singa_curve singa_curve;

/* Reads c's keys and starts the ZAP handler in the ZeroMQ context zmq_ctx (one per context);
 * *out stays NULL when c has no curve.  -1 with err for a missing, unsafe or malformed key. */
int singa_curve_start(void *zmq_ctx, const singa_cluster *c, singa_curve **out, singa_err *err);
void singa_curve_stop(singa_curve *c);
/* Makes sock a CURVE server with the job's key (nothing without CURVE: c NULL). */
int singa_curve_server(const singa_curve *c, void *sock);
/* Makes sock a CURVE client with the pair of secret_key_file (owner-only, as --curve-keygen
 * writes it), of a server with the same pair: a job whose ranks share one pair. */
int singa_curve_client_file(void *sock, const char *secret_key_file, singa_err *err);

#pragma GCC visibility pop

#endif
