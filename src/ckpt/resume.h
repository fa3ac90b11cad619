/* Resuming from a checkpoint, for every caller: a plain job (job_ckpt.c), a distributed job's
 * processes (runtime/resume.c) and a trained model (predict.c) say what they want of it, and
 * singa_ckpt_resume offers them the checkpoints of a file or folder, newest first, until one
 * holds all of it.  Callers write no accept or refuse functions of their own. */
#ifndef SINGA_CKPT_RESUME_H
#define SINGA_CKPT_RESUME_H

#include <stdbool.h>
#include <stdint.h>

#include "singa/ckpt_set.h"
#include "singa/param.h"

/* How the messages of a param that does not fit name the file and the caller: a job's ("it
 * belongs to another net", "there ... in this job") or a trained model's ("the file belongs to
 * another net", "in the file ... in the job"). */
enum { SINGA_CKPT_AS_JOB = 0, SINGA_CKPT_AS_MODEL = 1 };

/* Loads the state a worker resumes (its view of the set, ckpt_set.h) into obj, checking it all
 * before it changes any; `where` names the checkpoint in messages.  The job's own loader. */
typedef int (*singa_ckpt_state_fn)(void *obj, const singa_ckpt *view, const char *where, singa_err *err);

typedef struct singa_ckpt_want {
    const char *path; /* a checkpoint file, one file of a distributed step, or a folder */
    /* Params the checkpoint must hold ("param/<name>") with their shape, or with as many values
     * when flat_ok (older distributed checkpoints record no shape); copied in with copy. */
    singa_param *const *params;
    int nparams;
    bool flat_ok, copy;
    int wording;               /* SINGA_CKPT_AS_JOB or _AS_MODEL */
    const singa_params *known; /* a param of the file not among these refuses it (NULL: any may be there) */
    /* The state of worker (group, id), loaded by the object's loader (NULL: none). */
    singa_ckpt_state_fn state;
    void *obj;
    int group, id;
    /* Where "refused <why>" lines go (NULL: nowhere). */
    void (*log)(void *ud, const char *line);
    void *log_ud;
} singa_ckpt_want;

typedef struct singa_ckpt_resumed {
    singa_ckpt_set set; /* the accepted checkpoint (when singa_ckpt_resume returned 0) */
    /* The steps refused on the way, newest first, and whether each was only incomplete (a file
     * missing) rather than not verifying or not fitting. */
    uint64_t *refused;
    bool *incomplete;
    size_t nrefused;
} singa_ckpt_resumed;

/* Returns 0 with r->set the newest checkpoint that holds what w wants, 1 when there is none to
 * try (err says why), -1 when every one was refused (err: the newest's reason).  Free r with
 * singa_ckpt_resumed_free, whatever it returned. */
int singa_ckpt_resume(const singa_ckpt_want *w, singa_ckpt_resumed *r, singa_err *err);
void singa_ckpt_resumed_free(singa_ckpt_resumed *r);

/* Loads worker (group, id)'s state of s (its view, with the model) into obj by `load`. */
int singa_ckpt_resume_state(const singa_ckpt_set *s, int group, int id, singa_ckpt_state_fn load, void *obj,
                            singa_err *err);

#endif
