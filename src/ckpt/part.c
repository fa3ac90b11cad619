/* The one writer of checkpoint files (see part.h). */
#include "ckpt/part.h"

int singa_ckpt_save(singa_ckpt *c, const char *dir, const singa_ckpt_part *part, char *path, size_t len,
                    singa_err *err)
{
    if (!part) {
        singa_ckpt_path(path, len, dir, c->step);
        return singa_ckpt_write(c, path, err);
    }
    int64_t ident[2] = {part->group, part->id};
    int tlen = SINGA_CKPT_TOPOLOGY_LEN, two = 2, one = 1;
    singa_ckpt_part_path(path, len, dir, c->step, part->kind, part->group, part->id);
    if (singa_ckpt_add(c, "topology", SINGA_CKPT_I64, 1, &tlen, part->topology, err) < 0 ||
        singa_ckpt_add(c, "files", SINGA_CKPT_I64, 1, &one, &part->files, err) < 0 ||
        (part->lost && singa_ckpt_add(c, "lost", SINGA_CKPT_I64, 1, &part->ngroups, part->lost, err) < 0) ||
        singa_ckpt_add(c, part->kind == SINGA_CKPT_SERVER ? "shard" : "worker", SINGA_CKPT_I64, 1, &two, ident, err) < 0)
        return -1;
    return singa_ckpt_write(c, path, err);
}
