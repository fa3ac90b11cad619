/* CURVE between processes (cluster.curve): every process's ROUTER is a CURVE server, its DEALERs
 * CURVE clients, and a ZAP handler lets in only clients whose public key is in public_keys_dir.
 * (CURVE alone would admit anyone who knows the server's public key.)  Keys are Z85 text, one
 * per file: the secret key file must be readable by its owner only, and neither public_keys_dir
 * nor a public key file may be writable by others (whoever can add a key there gets in). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/runtime.h"

typedef char z85_key[41];

struct singa_curve {
    void *zmq;
    z85_key secret, public, coordinator;
    uint8_t (*allowed)[32];
    int nallowed;
    pthread_t zap;
    atomic_bool stop;
    sem_t bound;
    int bind_rc; /* the ZAP handler's bind: 0, or an errno */
};

/* The first line of path as a Z85 key (32 bytes once decoded). */
static int read_key(const char *path, const char *what, z85_key key, singa_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return singa_err_set(err, "cluster.curve: cannot read the %s %s: %s", what, path, strerror(errno));
    char line[128] = "";
    bool got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    line[strcspn(line, " \t\r\n")] = 0;
    uint8_t bin[32];
    if (!got || strlen(line) != 40 || !zmq_z85_decode(bin, line))
        return singa_err_set(err, "cluster.curve: the %s %s does not hold a Z85 key (40 characters on its first line)",
                             what, path);
    memcpy(key, line, sizeof(z85_key));
    return 0;
}

static int read_secret(rt_curve *c, const char *path, singa_err *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && (st.st_mode & 077))
        return singa_err_set(err, "cluster.curve: the secret key file %s has permissions %04o; a secret key must be "
                                  "readable by its owner only (chmod 600 %s)",
                             path, (unsigned)(st.st_mode & 07777), path);
    if (read_key(path, "secret key file", c->secret, err) < 0)
        return -1;
    if (zmq_curve_public(c->public, c->secret) < 0)
        return singa_err_set(err, "cluster.curve: %s: %s", path, zmq_strerror(zmq_errno()));
    return 0;
}

/* Refuses a public key, or the folder of them, that anyone may write: they decide who gets in. */
static int check_not_writable(const char *path, const char *what, singa_err *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && (st.st_mode & S_IWOTH))
        return singa_err_set(err, "cluster.curve: the %s %s has permissions %04o; anyone could add a key that gets "
                                  "in, so it must not be writable by others (chmod o-w %s)",
                             what, path, (unsigned)(st.st_mode & 07777), path);
    return 0;
}

static int read_public(const char *path, const char *what, z85_key key, singa_err *err)
{
    return check_not_writable(path, what, err) < 0 ? -1 : read_key(path, what, key, err);
}

/* Every *.pub file of the folder: the clients let in. */
static int read_allowed(rt_curve *c, const char *dir, singa_err *err)
{
    if (check_not_writable(dir, "public_keys_dir", err) < 0)
        return -1;
    DIR *d = opendir(dir);
    if (!d)
        return singa_err_set(err, "cluster.curve: cannot read public_keys_dir %s: %s", dir, strerror(errno));
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".pub") != 0)
            continue;
        char path[4096];
        z85_key key;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        void *grown = realloc(c->allowed, (size_t)(c->nallowed + 1) * sizeof *c->allowed);
        if (!grown) {
            rc = singa_err_set(err, "out of memory");
            break;
        }
        c->allowed = grown;
        if ((rc = read_public(path, "public key file", key, err)) == 0)
            zmq_z85_decode(c->allowed[c->nallowed++], key);
    }
    closedir(d);
    if (rc == 0 && c->nallowed == 0)
        rc = singa_err_set(err, "cluster.curve: public_keys_dir %s has no *.pub file: nobody could connect", dir);
    return rc;
}

static bool allowed(const rt_curve *c, const void *key, size_t len)
{
    for (int i = 0; len == 32 && i < c->nallowed; i++)
        if (memcmp(c->allowed[i], key, 32) == 0)
            return true;
    return false;
}

/* Answers one ZAP request (ZeroMQ RFC 27): version, id, domain, address, identity, mechanism,
 * credentials; a CURVE client is allowed when its key is listed. */
static void answer(rt_curve *c, void *rep)
{
    zmq_msg_t part[7];
    int n = 0, more = 1;
    while (more && n < 7) {
        zmq_msg_init(&part[n]);
        if (zmq_msg_recv(&part[n], rep, 0) < 0) {
            zmq_msg_close(&part[n]);
            break;
        }
        more = zmq_msg_more(&part[n++]);
    }
    bool ok = n == 7 && zmq_msg_size(&part[5]) == 5 && memcmp(zmq_msg_data(&part[5]), "CURVE", 5) == 0 &&
              allowed(c, zmq_msg_data(&part[6]), zmq_msg_size(&part[6]));
    const char *status = ok ? "200" : "400", *text = ok ? "OK" : "not an allowed key";
    zmq_send(rep, "1.0", 3, ZMQ_SNDMORE);
    zmq_send(rep, n > 1 ? zmq_msg_data(&part[1]) : "", n > 1 ? zmq_msg_size(&part[1]) : 0, ZMQ_SNDMORE);
    zmq_send(rep, status, 3, ZMQ_SNDMORE);
    zmq_send(rep, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(rep, "", 0, ZMQ_SNDMORE);
    zmq_send(rep, "", 0, 0);
    for (int i = 0; i < n; i++)
        zmq_msg_close(&part[i]);
}

static void *zap_main(void *arg)
{
    rt_curve *c = arg;
    void *rep = zmq_socket(c->zmq, ZMQ_REP);
    int zero = 0;
    c->bind_rc = !rep || zmq_setsockopt(rep, ZMQ_LINGER, &zero, sizeof zero) < 0 ||
                         zmq_bind(rep, "inproc://zeromq.zap.01") < 0
                     ? zmq_errno()
                     : 0;
    sem_post(&c->bound);
    while (c->bind_rc == 0 && !atomic_load(&c->stop)) {
        zmq_pollitem_t it = {rep, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, 100) > 0)
            answer(c, rep);
    }
    if (rep)
        zmq_close(rep);
    return NULL;
}

int singa_curve_start(void *zmq_ctx, const singa_cluster *cl, singa_curve **out, singa_err *err)
{
    *out = NULL;
    if (!cl->curve_secret_key_file)
        return 0;
    rt_curve *c = calloc(1, sizeof *c);
    if (!c)
        return singa_err_set(err, "out of memory");
    c->zmq = zmq_ctx;
    atomic_init(&c->stop, false);
    if (read_secret(c, cl->curve_secret_key_file, err) < 0 || read_allowed(c, cl->curve_public_keys_dir, err) < 0)
        goto fail;
    memcpy(c->coordinator, c->public, sizeof c->coordinator);
    if (cl->curve_coordinator_key_file &&
        read_public(cl->curve_coordinator_key_file, "coordinator's public key file", c->coordinator, err) < 0)
        goto fail;
    sem_init(&c->bound, 0, 0);
    if (pthread_create(&c->zap, NULL, zap_main, c) != 0) {
        sem_destroy(&c->bound);
        singa_err_set(err, "cluster.curve: cannot start the ZAP handler's thread");
        goto fail;
    }
    sem_wait(&c->bound);
    *out = c;
    if (c->bind_rc)
        return singa_err_set(err, "cluster.curve: cannot start the ZAP handler: %s", zmq_strerror(c->bind_rc));
    return 0;
fail:
    free(c->allowed);
    free(c);
    return -1;
}

int rt_curve_start(rt_ctx *rt, rt_curve **out, singa_err *err)
{
    const singa_cluster *cl = rt->c;
    if (singa_curve_start(rt->zmq, cl, out, err) < 0)
        return -1;
    if (*out)
        rt_log(rt, "CURVE is on: traffic between processes is encrypted, and only the %d public key%s in %s may connect",
             (*out)->nallowed, (*out)->nallowed == 1 ? "" : "s", cl->curve_public_keys_dir);
    return 0;
}

void singa_curve_stop(singa_curve *c)
{
    if (!c)
        return;
    atomic_store(&c->stop, true);
    pthread_join(c->zap, NULL);
    sem_destroy(&c->bound);
    free(c->allowed);
    free(c);
}

const char *rt_curve_public(const rt_curve *c) { return c ? c->public : "-"; }

const char *rt_curve_coordinator(const rt_curve *c) { return c->coordinator; }

int singa_curve_server(const singa_curve *c, void *sock)
{
    int one = 1;
    if (!c)
        return 0;
    return zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) < 0 ||
                   zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, c->secret, 40) < 0 ||
                   zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, "singa", 5) < 0
               ? -1
               : 0;
}

int rt_curve_client(const rt_curve *c, void *sock, const char *server_key)
{
    if (!c)
        return 0;
    return zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, server_key, 40) < 0 ||
                   zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, c->public, 40) < 0 ||
                   zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, c->secret, 40) < 0
               ? -1
               : 0;
}

int singa_curve_client_file(void *sock, const char *secret_key_file, singa_err *err)
{
    rt_curve c = {0};
    if (read_secret(&c, secret_key_file, err) < 0)
        return -1;
    if (rt_curve_client(&c, sock, c.public) < 0)
        return singa_err_set(err, "cannot use the key %s: %s", secret_key_file, zmq_strerror(zmq_errno()));
    return 0;
}
