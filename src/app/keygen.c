/* singa-tui --curve-keygen NAME: a CURVE key pair for cluster.curve, as NAME.key (the secret key,
 * readable by its owner only) and NAME.pub (the public key, for public_keys_dir).  Existing files
 * are never overwritten: a key someone relies on must not silently change.  The folders of NAME
 * that do not exist are made as `mkdir -p` would, for their owner only (they hold a secret). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "app/keygen.h"

/* Writes text to a new file of the given mode; 0, or -1 with the reason printed. */
static int write_new(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
    size_t n = strlen(text);
    if (fd < 0 || write(fd, text, n) != (ssize_t)n || fsync(fd) < 0) {
        fprintf(stderr, "singa-tui: --curve-keygen: %s: %s%s\n", path, strerror(errno),
                errno == EEXIST ? " (not overwritten)" : "");
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        return -1;
    }
    return close(fd);
}

/* Makes the folders leading to the file `name`, mode 700 (whatever the umask); 0, or -1 with the
 * reason printed. */
static int make_folders(const char *name)
{
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", name) >= (int)sizeof dir) {
        fprintf(stderr, "singa-tui: --curve-keygen: %s: name too long\n", name);
        return -1;
    }
    for (char *slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        struct stat st;
        bool made = mkdir(dir, 0700) == 0;
        if (made ? chmod(dir, 0700) < 0 : errno != EEXIST || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
            if (!made && errno == EEXIST) /* there, but a file */
                errno = ENOTDIR;
            fprintf(stderr, "singa-tui: --curve-keygen: cannot make the folder %s: %s\n", dir, strerror(errno));
            return -1;
        }
        *slash = '/';
    }
    return 0;
}

int singa_tui_curve_keygen(const char *name)
{
    char pub[41], sec[41], path[4096], line[64];
    if (zmq_curve_keypair(pub, sec) < 0) {
        fprintf(stderr, "singa-tui: --curve-keygen: %s (is libzmq built with CURVE?)\n", zmq_strerror(zmq_errno()));
        return 1;
    }
    if (make_folders(name) < 0)
        return 1;
    snprintf(path, sizeof path, "%s.key", name);
    snprintf(line, sizeof line, "%s\n", sec);
    if (write_new(path, line, 0600) < 0)
        return 1;
    snprintf(path, sizeof path, "%s.pub", name);
    snprintf(line, sizeof line, "%s\n", pub);
    if (write_new(path, line, 0644) < 0)
        return 1;
    printf("wrote %s.key (secret) and %s.pub (public key %s)\n", name, name, pub);
    return 0;
}
