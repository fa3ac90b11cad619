/* Configuration trees: the job as the user wrote it (a Lua table today), detached from Lua so
 * the engine can validate and read it anywhere.  Layer types, updaters and the job declare the
 * fields they accept as schemas; validation reports unknown fields with a "did you mean". */
#ifndef SINGA_CONF_H
#define SINGA_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "singa/error.h"
#include "singa/tensor.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

typedef enum singa_conf_kind {
    SINGA_CONF_BOOL,
    SINGA_CONF_NUM,
    SINGA_CONF_STR,
    SINGA_CONF_LIST,  /* items only */
    SINGA_CONF_TABLE, /* keys[i] names items[i] */
    SINGA_CONF_FUNC,  /* func: a function of the host program */
} singa_conf_kind;

/* A function the host program put into a configuration (in singa-tui, a Lua function): the
 * engine stays free of Lua and calls it through `call`.  Arguments are numbers, strings, tensors,
 * named lists of tensors and named lists of values (in Lua, tables by name); tensors are lent
 * for the call only, so the host must not keep them (singa-tui's tensor objects expire when the
 * call returns).  Functions are reference-counted, so cloned trees share one.  The engine calls
 * them on the thread that runs the job. */
typedef enum singa_value_kind {
    SINGA_VALUE_NUM,
    SINGA_VALUE_INT,     /* num holds a whole number (a Lua integer) */
    SINGA_VALUE_STR,
    SINGA_VALUE_TENSOR,
    SINGA_VALUE_TENSORS, /* n tensors, tensors[i] named names[i] (a Lua table by name) */
    SINGA_VALUE_FIELDS,  /* n values, fields[i] named names[i] (a Lua table by name) */
} singa_value_kind;

typedef struct singa_value {
    singa_value_kind kind;
    double num;
    const char *str;
    singa_tensor *tensor;
    int n;
    singa_tensor *const *tensors;
    const char *const *names;
    const struct singa_value *fields;
} singa_value;

typedef struct singa_func singa_func;
struct singa_func {
    /* Calls the function with nargs arguments.  With `result` set the function must return a
     * number, stored there.  Returns -1 with the host's message (for Lua, the error and its
     * traceback) in err. */
    int (*call)(singa_func *f, const singa_value *args, int nargs, double *result, singa_err *err);
    void (*destroy)(singa_func *f); /* frees f; called when the last reference goes */
    int refs;                       /* the creator's reference counts as 1 */
    /* Calls it for a word: the string it returns goes to text (at most len bytes with the NUL),
     * nothing or nil gives "", anything else is an error.  NULL where the host has no such call. */
    int (*call_text)(singa_func *f, const singa_value *args, int nargs, char *text, size_t len, singa_err *err);
};

/* Both accept NULL; retain returns f. */
singa_func *singa_func_retain(singa_func *f);
void singa_func_release(singa_func *f);

typedef struct singa_conf singa_conf;
struct singa_conf {
    singa_conf_kind kind;
    bool b;
    double num;
    char *str;
    size_t n;
    char **keys;
    singa_conf **items;
    singa_func *func; /* SINGA_CONF_FUNC: one reference held by this node */
};

singa_conf *singa_conf_new(singa_conf_kind kind);
void singa_conf_free(singa_conf *c);
/* Appends an item (key NULL for lists); takes ownership of item. Returns -1 on out of memory. */
int singa_conf_add(singa_conf *c, const char *key, singa_conf *item);
singa_conf *singa_conf_new_num(double v);
singa_conf *singa_conf_new_str(const char *s);
singa_conf *singa_conf_new_bool(bool v);
/* A node holding f; takes over the caller's reference (released when the node is freed, and
 * also when this returns NULL for lack of memory). */
singa_conf *singa_conf_new_func(singa_func *f);
singa_conf *singa_conf_clone(const singa_conf *c);
/* The tree of text in Lua's table syntax, as a job written in Lua gives it, for C programs
 * without Lua (a plugin's check example, tests): "{ beta = 1.5, param = { { name = 'a' } } }",
 * with numbers, strings, true, false, nested tables and -- comments.  NULL with err set ("at
 * character N: ...") when the text is not such a table. */
singa_conf *singa_conf_parse_text(const char *text, singa_err *err);
/* Reads a file in the Protocol Buffers text format (SINGA's job.conf) into a schema-free tree:
 * a list of fields in order, each { name, line, column } with `message` (a nested list) or
 * `kind` ("string", "ident", "int", "float") and `value`.  NULL with err set
 * ("job.conf:12:7: expected ...") when the file cannot be read or is not valid text format. */
singa_conf *singa_conf_read_pbtext(const char *path, singa_err *err);
/* A digest of the tree that ignores the order of a table's fields (a function counts by kind
 * only), so processes running one job can check they read the same configuration. */
uint64_t singa_conf_hash(const singa_conf *c);

const singa_conf *singa_conf_get(const singa_conf *table, const char *key);
double singa_conf_num(const singa_conf *table, const char *key, double def);
int singa_conf_int(const singa_conf *table, const char *key, int def);
bool singa_conf_bool(const singa_conf *table, const char *key, bool def);
const char *singa_conf_str(const singa_conf *table, const char *key, const char *def);
/* The function stored under key, or NULL; the table keeps its reference (retain to keep it). */
singa_func *singa_conf_func(const singa_conf *table, const char *key);
/* A field that may be one string or a list of strings: count and i-th element. */
size_t singa_conf_strs_len(const singa_conf *table, const char *key);
const char *singa_conf_strs_at(const singa_conf *table, const char *key, size_t i);
const char *singa_conf_kind_name(singa_conf_kind kind);

typedef enum singa_field_type {
    SINGA_FIELD_INT,
    SINGA_FIELD_NUM,
    SINGA_FIELD_BOOL,
    SINGA_FIELD_STR,
    SINGA_FIELD_STRS,   /* a string or a list of strings */
    SINGA_FIELD_TABLE,  /* a table with its own schema, checked by its owner */
    SINGA_FIELD_TABLES, /* a list of tables */
    SINGA_FIELD_NUMS,   /* a number or a list of numbers */
    SINGA_FIELD_FUNC,   /* a function of the host program */
    SINGA_FIELD_TABLE_OR_FUNC, /* a table (checked by its owner) or a function */
    SINGA_FIELD_STR_OR_TABLE,  /* a string or a table (checked by its owner) */
} singa_field_type;

typedef struct singa_field {
    const char *name;
    singa_field_type type;
} singa_field;

/* Checks that every key of table is declared in one of the NULL-terminated schemas (each an
 * array ending with {NULL}) with a value of the declared type.  `what` names the table in
 * messages, e.g. "layer 'fc1' (kInnerProduct)". */
int singa_conf_check(const singa_conf *table, const singa_field *const *schemas, const char *what,
                     singa_err *err);
/* Sets "<what>: unknown <kind> '<value>'" (what may be NULL) with a "did you mean" from
 * candidates; returns -1. */
int singa_err_unknown(singa_err *err, const char *what, const char *kind, const char *value,
                      const char *const *candidates, size_t n);
/* The declared name closest to `name` (edit distance <= 2 plus a little for long names), or NULL. */
const char *singa_suggest(const char *name, const char *const *candidates, size_t n);

#pragma GCC visibility pop

#endif
