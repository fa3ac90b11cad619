/* Which build of libsinga this process runs, as the meeting compares it: processes of one job
 * must run the same build, since what goes on the wire (message headers, the layout of a slice's
 * values and updater state, codecs) is whatever that build's source says, and two builds would
 * disagree silently rather than fail.  The build is the GNU build-id note of the loaded object
 * that holds this code (libsinga.so, or the program it was linked into), read at run time from
 * the loaded objects, so a rebuilt or upgraded library on one host differs even with the same
 * version. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "runtime/build.h"
#include "singa/singa.h"

struct search {
    uintptr_t here; /* an address in this object's code */
    char *buf;
    size_t len;
    bool found;
};

/* The note's descriptor, in hex, when n is GNU's NT_GNU_BUILD_ID. */
static bool build_id(const ElfW(Nhdr) *n, const unsigned char *desc, char *buf, size_t len)
{
    if (n->n_type != NT_GNU_BUILD_ID || n->n_namesz != 4 || memcmp(n + 1, "GNU", 4) != 0 || n->n_descsz == 0 ||
        len < 4 + 2 * (size_t)n->n_descsz)
        return false;
    size_t at = (size_t)snprintf(buf, len, "id:");
    for (ElfW(Word) i = 0; i < n->n_descsz; i++)
        at += (size_t)snprintf(buf + at, len - at, "%02x", desc[i]);
    return true;
}

/* The build-id among the notes of a PT_NOTE segment at base, if there is one, to s->buf. */
static void find_note(struct search *s, const unsigned char *base, size_t size, size_t align)
{
    size_t pad = align == 8 ? 7 : 3; /* a segment of 8-aligned notes pads them to 8 */
    for (size_t at = 0; !s->found && at + sizeof(ElfW(Nhdr)) <= size;) {
        const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)(base + at);
        size_t desc = (at + sizeof *n + n->n_namesz + pad) & ~pad, next = (desc + n->n_descsz + pad) & ~pad;
        if (next > size)
            return;
        s->found = build_id(n, base + desc, s->buf, s->len);
        at = next;
    }
}

/* Whether the object holds s->here; if so, its build-id (if it has one) goes to s->buf. */
static int each_object(struct dl_phdr_info *info, size_t size, void *data)
{
    struct search *s = data;
    bool ours = false;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum && !ours; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        ours = ph->p_type == PT_LOAD && s->here >= start && s->here < start + ph->p_memsz;
    }
    for (int i = 0; ours && i < info->dlpi_phnum && !s->found; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE)
            find_note(s, (const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz, ph->p_align);
    }
    return ours; /* stops the walk at ours */
}

void rt_build(char *buf, size_t len)
{
    struct search s = {(uintptr_t)&rt_build, buf, len, false};
    dl_iterate_phdr(each_object, &s);
    /* A linker run without --build-id (or a strip that dropped the note) leaves none: the
     * version then at least tells releases apart, whose wire formats may differ. */
    if (!s.found)
        snprintf(buf, len, "version:%s", SINGA_VERSION);
}

static void describe(const char *build, char *buf, size_t len)
{
    if (strncmp(build, "id:", 3) == 0)
        snprintf(buf, len, "libsinga build-id %s", build + 3);
    else if (strncmp(build, "version:", 8) == 0)
        snprintf(buf, len, "libsinga %s without a build-id", build + 8);
    else
        snprintf(buf, len, "a build older than build checks");
}

int rt_build_check(int rank, const char *theirs, bool rejoin, singa_err *err)
{
    char mine[RT_BUILD_MAX], a[RT_BUILD_MAX + 64], b[RT_BUILD_MAX + 64];
    rt_build(mine, sizeof mine);
    if (strcmp(theirs, mine) == 0)
        return 0;
    describe(theirs, a, sizeof a);
    describe(mine, b, sizeof b);
    if (rejoin)
        return singa_err_set(err, "SINGA_REJOIN: rank %d's build (%s) is not the job's (%s): rejoin with the same "
                                  "build of singa-tui as the job's other processes", rank, a, b);
    return singa_err_set(err, "rank %d runs another build (%s) than rank 0 (%s): every process of a job must run the "
                              "same build of singa-tui (install the same one on every host)", rank, a, b);
}
