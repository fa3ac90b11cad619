/* ONNX export of a trained model (see include/singa/onnx.h): the model is loaded as
 * singa.predict loads it (predict.c), so the graph is the kTest net with the params singa.predict
 * would use, and its input is what singa.predict takes: the input layer's batch.  The model's
 * bytes come from src/onnx/ (each layer type writes itself), in memory, and only a model written
 * whole goes to the file: a layer without an ONNX form stops the export before anything is
 * written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net/onnx_model.h"
#include "singa/onnx.h"
#include "singa/singa.h"
#include "ckpt/load.h"
#include "train/model.h"

/* Writes the bytes to a temporary file beside path, then renames it into place. */
static int write_file(const char *path, const uint8_t *p, size_t n, singa_err *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path) >= (int)sizeof tmp)
        return singa_err_set(err, "'%s': the path is too long", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return singa_err_set(err, "cannot create '%s': %s", tmp, strerror(errno));
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(fd, p + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    int saved = errno;
    bool failed = done < n || fsync(fd) != 0;
    saved = failed && done == n ? errno : saved;
    if (close(fd) != 0 && !failed) {
        failed = true;
        saved = errno;
    }
    /* mkstemp makes the file 0600; a model is for others to read, as a file written by fopen */
    mode_t mask = umask(0);
    umask(mask);
    if (!failed && chmod(tmp, 0666 & ~mask) != 0) {
        failed = true;
        saved = errno;
    }
    if (failed) {
        unlink(tmp);
        return singa_err_set(err, "writing '%s' failed: %s", tmp, strerror(saved ? saved : EIO));
    }
    if (rename(tmp, path) != 0) {
        saved = errno;
        unlink(tmp);
        return singa_err_set(err, "cannot rename '%s' to '%s': %s", tmp, path, strerror(saved));
    }
    if (singa_ckpt_fsync_dir(path) != 0)
        return singa_err_set(err, "'%s': syncing its folder failed: %s", path, strerror(errno));
    return 0;
}

int singa_onnx_export(const singa_conf *job, const char *path, const char *checkpoint, const singa_registry *reg,
                      singa_onnx_info *info, singa_err *err)
{
    singa_onnx_info own;
    info = info ? info : &own;
    memset(info, 0, sizeof *info);
    singa_model *m;
    if (singa_model_load_from(&m, job, checkpoint, reg, NULL, err) < 0)
        return singa_err_prefix(err, "export_onnx: ");
    singa_pbw w;
    singa_pbw_init(&w);
    int nodes = 0, rc = -1;
    const singa_layer *out = singa_model_output(m, NULL, err);
    if (out)
        rc = singa_onnx_model(&w, singa_model_net(m), out, singa_conf_str(job, "name", "job"), info, &nodes, err);
    if (rc == 0)
        rc = write_file(path, w.data, w.len, err);
    if (rc == 0) {
        snprintf(info->checkpoint, sizeof info->checkpoint, "%s", singa_model_checkpoint(m));
        info->step = singa_model_step(m);
        info->nodes = nodes;
        info->bytes = w.len;
    }
    singa_pbw_free(&w);
    singa_model_free(m);
    return rc < 0 ? singa_err_prefix(err, "export_onnx: '%s': ", path) : 0;
}
