/* The TrainOneBatch algorithms by name. */
#include <string.h>

#include "train/tob.h"

static const struct {
    const char *alias;
    const singa_tob *tob;
} algs[] = {
    {"kBP", &singa_tob_bp},
    {"kBPTT", &singa_tob_bp},
    {"kCD", &singa_tob_cd},
};

const singa_tob *singa_tob_find(const char *alg, singa_err *err)
{
    const char *names[sizeof algs / sizeof algs[0]];
    for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++) {
        if (strcmp(algs[i].alias, alg) == 0)
            return algs[i].tob;
        names[i] = algs[i].alias;
    }
    singa_err_unknown(err, "train_one_batch", "alg", alg, names, sizeof algs / sizeof algs[0]);
    return NULL;
}
