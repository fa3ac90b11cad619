/* Protocol Buffers text format (the syntax of SINGA's job.conf) read into a generic tree that
 * knows no schema: a message is a SINGA_CONF_LIST of fields in the order written, each field a
 * table { name, line, column } plus either `message` (the nested message's list) or `kind`
 * ("string", "ident", "int" or "float") and `value` (a string, or a number for int and float).
 * A repeated field is one entry per value, `f: [1, 2]` included.  Identifiers stay identifiers
 * (enums, true/false, inf, nan, and "-inf"): only a schema knows what they mean. */
#ifndef SINGA_CORE_PBTEXT_H
#define SINGA_CORE_PBTEXT_H

#include <stddef.h>
#include "singa/conf.h"

/* Parses len bytes of text; `file` names it in errors ("job.conf:12:7: expected ..."). */
singa_conf *singa_pbtext_parse(const char *text, size_t len, const char *file, singa_err *err);

#endif
