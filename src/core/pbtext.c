/* A reader of the Protocol Buffers text format, as protobuf's own TextFormat parser accepts it:
 * `name: value` and `name { ... }` (with or without ':', braces or angle brackets), repeated
 * fields written again or as `[a, b]`, separators ';' or ',', '#' comments, strings in either
 * quote with C escapes (adjacent strings join), integers in decimal, hex and octal, floats with
 * exponents or an 'f' suffix, and identifiers (enums, true, inf, nan, optionally negated).
 * A tokenizer with one token of lookahead feeds a recursive descent; the result is schema-free
 * (pbtext.h): the importer of SINGA's JobProto gives it meaning. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pbtext.h"

#define PB_MAX_DEPTH 64 /* nesting beyond this is refused rather than overflowing the stack */

typedef enum { T_END, T_IDENT, T_STRING, T_INT, T_FLOAT, T_PUNCT } tok_kind;

typedef struct {
    tok_kind kind;
    int line, col;
    char punct;
    char *text; /* identifier, decoded string or the number's spelling (owned) */
    size_t len;
    double num;
} token;

typedef struct {
    const char *p, *end, *file;
    int line, col;
    token tok; /* the lookahead */
    singa_err *err;
} parser;

static int fail_at(parser *ps, int line, int col, const char *fmt, const char *arg)
{
    char what[SINGA_ERR_LEN / 2];
    snprintf(what, sizeof what, fmt, arg);
    return singa_err_set(ps->err, "%s:%d:%d: %s", ps->file, line, col, what);
}

static const char *tok_desc(const token *t, char *buf, size_t len)
{
    switch (t->kind) {
    case T_END: return "the end of the file";
    case T_STRING: return "a string";
    case T_INT: case T_FLOAT: snprintf(buf, len, "the number '%.40s'", t->text); return buf;
    case T_IDENT: snprintf(buf, len, "'%.60s'", t->text); return buf;
    default: snprintf(buf, len, "'%c'", t->punct); return buf;
    }
}

static int expected(parser *ps, const char *what)
{
    char buf[96], msg[256];
    snprintf(msg, sizeof msg, "expected %s, got %s", what, tok_desc(&ps->tok, buf, sizeof buf));
    return fail_at(ps, ps->tok.line, ps->tok.col, "%s", msg);
}

static int peek(const parser *ps, size_t i) { return ps->p + i < ps->end ? (unsigned char)ps->p[i] : -1; }

static void advance(parser *ps, size_t n)
{
    for (size_t i = 0; i < n && ps->p < ps->end; i++, ps->p++) {
        if (*ps->p == '\n') {
            ps->line++;
            ps->col = 1;
        } else
            ps->col++;
    }
}

static void skip_space(parser *ps)
{
    for (;;) {
        int c = peek(ps, 0);
        if (c == '#')
            while (peek(ps, 0) != -1 && peek(ps, 0) != '\n')
                advance(ps, 1);
        else if (c != -1 && isspace(c))
            advance(ps, 1);
        else
            return;
    }
}

static int append(token *t, size_t *cap, char c)
{
    if (t->len + 2 > *cap) {
        size_t ncap = *cap ? *cap * 2 : 32;
        char *n = realloc(t->text, ncap);
        if (!n)
            return -1;
        t->text = n;
        *cap = ncap;
    }
    t->text[t->len++] = c;
    t->text[t->len] = '\0';
    return 0;
}

static int hexval(int c) { return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1; }

/* One quoted string appended to t (adjacent strings call this again). */
static int read_string(parser *ps, token *t, size_t *cap)
{
    int line = ps->line, col = ps->col, q = peek(ps, 0);
    advance(ps, 1);
    for (;;) {
        int c = peek(ps, 0);
        if (c == -1 || c == '\n')
            return fail_at(ps, line, col, "unterminated string (it needs its closing %s on the same line)",
                           q == '"' ? "\"" : "'");
        advance(ps, 1);
        if (c == q)
            return 0;
        if (c == '\\') {
            int e = peek(ps, 0), v;
            if (e == -1)
                continue; /* reported as unterminated above */
            advance(ps, 1);
            switch (e) {
            case 'n': v = '\n'; break;
            case 't': v = '\t'; break;
            case 'r': v = '\r'; break;
            case 'a': v = '\a'; break;
            case 'b': v = '\b'; break;
            case 'f': v = '\f'; break;
            case 'v': v = '\v'; break;
            case '\\': case '\'': case '"': case '?': v = e; break;
            case 'x': case 'X':
                if (hexval(peek(ps, 0)) < 0)
                    return fail_at(ps, ps->line, ps->col - 2, "%s", "\\x needs a hexadecimal digit");
                v = hexval(peek(ps, 0));
                advance(ps, 1);
                if (hexval(peek(ps, 0)) >= 0) {
                    v = v * 16 + hexval(peek(ps, 0));
                    advance(ps, 1);
                }
                break;
            default:
                if (e < '0' || e > '7') {
                    char s[2] = {(char)e, 0};
                    return fail_at(ps, ps->line, ps->col - 2, "unknown escape '\\%s' in a string", s);
                }
                v = e - '0';
                for (int k = 0; k < 2 && peek(ps, 0) >= '0' && peek(ps, 0) <= '7'; k++) {
                    v = v * 8 + peek(ps, 0) - '0';
                    advance(ps, 1);
                }
                if (v > 255)
                    return fail_at(ps, ps->line, ps->col - 4, "%s", "octal escape above \\377");
            }
            c = v;
        }
        if (append(t, cap, (char)c) < 0)
            return singa_err_set(ps->err, "out of memory");
    }
}

/* A number's spelling: protobuf's decimal, 0x hex and 0 octal integers, and floats with a '.',
 * an exponent or an f suffix. */
static int read_number(parser *ps, token *t, size_t *cap)
{
    const char *s = ps->p;
    size_t n = 0;
    bool is_float = false, hex = false;
    if (s[0] == '0' && (peek(ps, 1) == 'x' || peek(ps, 1) == 'X')) {
        hex = true;
        n = 2;
        while (hexval(peek(ps, n)) >= 0)
            n++;
        if (n == 2)
            return fail_at(ps, ps->line, ps->col, "%s", "a hexadecimal number needs digits after 0x");
    } else {
        while (isdigit(peek(ps, n)))
            n++;
        if (peek(ps, n) == '.') {
            is_float = true;
            n++;
            while (isdigit(peek(ps, n)))
                n++;
        }
        if (peek(ps, n) == 'e' || peek(ps, n) == 'E') {
            size_t m = n + 1;
            if (peek(ps, m) == '+' || peek(ps, m) == '-')
                m++;
            if (!isdigit(peek(ps, m)))
                return fail_at(ps, ps->line, ps->col, "%s", "an exponent needs digits");
            while (isdigit(peek(ps, m)))
                m++;
            n = m;
            is_float = true;
        }
    }
    size_t body = n;
    if (!hex && (peek(ps, n) == 'f' || peek(ps, n) == 'F')) {
        is_float = true;
        n++;
    }
    if (peek(ps, n) != -1 && (isalnum(peek(ps, n)) || peek(ps, n) == '_' || peek(ps, n) == '.')) {
        char bad[64];
        snprintf(bad, sizeof bad, "%.*s", (int)(n + 1 < 40 ? n + 1 : 40), s);
        return fail_at(ps, ps->line, ps->col, "malformed number '%s'", bad);
    }
    for (size_t i = 0; i < n; i++)
        if (append(t, cap, s[i]) < 0)
            return singa_err_set(ps->err, "out of memory");
    char digits[128];
    snprintf(digits, sizeof digits, "%.*s", (int)(body < 127 ? body : 127), s);
    if (is_float) {
        t->num = strtod(digits, NULL);
    } else {
        errno = 0;
        unsigned long long v = strtoull(digits, NULL, hex ? 16 : digits[0] == '0' ? 8 : 10);
        if (errno == ERANGE)
            return fail_at(ps, ps->line, ps->col, "integer '%s' is too large", t->text);
        if (!hex && digits[0] == '0' && strspn(digits, "01234567") != body)
            return fail_at(ps, ps->line, ps->col, "'%s' is not an octal number (a leading 0 means octal)", t->text);
        t->num = (double)v;
    }
    t->kind = is_float ? T_FLOAT : T_INT;
    advance(ps, n);
    return 0;
}

/* Reads the next token into ps->tok (the previous one's text must have been taken or freed). */
static int next(parser *ps)
{
    token *t = &ps->tok;
    free(t->text);
    *t = (token){0};
    size_t cap = 0;
    skip_space(ps);
    t->line = ps->line;
    t->col = ps->col;
    int c = peek(ps, 0);
    if (c == -1) {
        t->kind = T_END;
        return 0;
    }
    if (isalpha(c) || c == '_') {
        t->kind = T_IDENT;
        while (peek(ps, 0) != -1 && (isalnum(peek(ps, 0)) || peek(ps, 0) == '_')) {
            if (append(t, &cap, (char)peek(ps, 0)) < 0)
                return singa_err_set(ps->err, "out of memory");
            advance(ps, 1);
        }
        return 0;
    }
    if (c == '"' || c == '\'') {
        t->kind = T_STRING;
        if (append(t, &cap, 'x') < 0) /* an empty string still owns a buffer */
            return singa_err_set(ps->err, "out of memory");
        t->len = 0;
        t->text[0] = '\0';
        do {
            if (read_string(ps, t, &cap) < 0)
                return -1;
            skip_space(ps);
        } while (peek(ps, 0) == '"' || peek(ps, 0) == '\'');
        return 0;
    }
    if (isdigit(c) || (c == '.' && isdigit(peek(ps, 1))))
        return read_number(ps, t, &cap);
    if (strchr(":{}<>[];,-", c)) {
        t->kind = T_PUNCT;
        t->punct = (char)c;
        advance(ps, 1);
        return 0;
    }
    char s[2] = {(char)c, 0};
    return fail_at(ps, ps->line, ps->col, isprint(c) ? "unexpected character '%s'" : "unexpected byte%s", isprint(c) ? s : "");
}

static bool is_punct(const parser *ps, char c) { return ps->tok.kind == T_PUNCT && ps->tok.punct == c; }

static int add_num(singa_conf *t, const char *key, double v)
{
    singa_conf *n = singa_conf_new_num(v);
    return n ? singa_conf_add(t, key, n) : -1;
}

static int add_str(singa_conf *t, const char *key, const char *s)
{
    singa_conf *n = singa_conf_new_str(s);
    return n ? singa_conf_add(t, key, n) : -1;
}

static singa_conf *parse_fields(parser *ps, char close, int depth);

/* A scalar: strings, numbers and identifiers, the last two optionally negated. */
static int parse_scalar(parser *ps, singa_conf *field)
{
    bool neg = false;
    if (is_punct(ps, '-')) {
        neg = true;
        if (next(ps) < 0)
            return -1;
        if (ps->tok.kind != T_INT && ps->tok.kind != T_FLOAT && ps->tok.kind != T_IDENT)
            return expected(ps, "a number or an identifier after '-'");
    }
    int rc;
    switch (ps->tok.kind) {
    case T_STRING:
        rc = add_str(field, "kind", "string") | add_str(field, "value", ps->tok.text);
        break;
    case T_IDENT: {
        char buf[256];
        snprintf(buf, sizeof buf, "%s%s", neg ? "-" : "", ps->tok.text);
        rc = add_str(field, "kind", "ident") | add_str(field, "value", buf);
        break;
    }
    case T_INT:
    case T_FLOAT:
        rc = add_str(field, "kind", ps->tok.kind == T_INT ? "int" : "float") |
             add_num(field, "value", neg ? -ps->tok.num : ps->tok.num);
        break;
    default:
        return expected(ps, "a value (a number, a string or an identifier)");
    }
    if (rc != 0)
        return singa_err_set(ps->err, "out of memory");
    return next(ps);
}

static singa_conf *new_field(parser *ps, const char *name, int line, int col)
{
    singa_conf *f = singa_conf_new(SINGA_CONF_TABLE);
    if (!f || add_str(f, "name", name) || add_num(f, "line", line) || add_num(f, "column", col)) {
        singa_conf_free(f);
        singa_err_set(ps->err, "out of memory");
        return NULL;
    }
    return f;
}

/* A nested message after its opening '{' or '<'. */
static int parse_message(parser *ps, singa_conf *field, int depth)
{
    char close = ps->tok.punct == '{' ? '}' : '>';
    if (depth >= PB_MAX_DEPTH)
        return fail_at(ps, ps->tok.line, ps->tok.col, "messages nested more than %s deep", "64");
    if (next(ps) < 0)
        return -1;
    singa_conf *m = parse_fields(ps, close, depth + 1);
    if (!m)
        return -1;
    if (singa_conf_add(field, "message", m) < 0)
        return singa_err_set(ps->err, "out of memory");
    return next(ps); /* past the closing bracket */
}

/* One field (and its separator), appended to list: several entries for `f: [a, b]`. */
static int parse_field(parser *ps, singa_conf *list, int depth)
{
    if (is_punct(ps, '['))
        return fail_at(ps, ps->tok.line, ps->tok.col, "%s",
                       "extension fields ([name]) are not part of SINGA's job.conf");
    if (ps->tok.kind != T_IDENT)
        return expected(ps, "a field name");
    char name[128];
    snprintf(name, sizeof name, "%s", ps->tok.text);
    int line = ps->tok.line, col = ps->tok.col;
    if (next(ps) < 0)
        return -1;
    bool colon = is_punct(ps, ':');
    if (colon && next(ps) < 0)
        return -1;
    bool list_value = colon && is_punct(ps, '[');
    if (list_value && next(ps) < 0)
        return -1;
    if (!colon && !is_punct(ps, '{') && !is_punct(ps, '<'))
        return expected(ps, "':' or '{' after the field name");
    do {
        if (list_value && is_punct(ps, ']'))
            break; /* `f: []` is an empty repeated field */
        singa_conf *f = new_field(ps, name, list_value ? ps->tok.line : line, list_value ? ps->tok.col : col);
        if (!f)
            return -1;
        if (singa_conf_add(list, NULL, f) < 0) {
            singa_conf_free(f);
            return singa_err_set(ps->err, "out of memory");
        }
        int rc = is_punct(ps, '{') || is_punct(ps, '<') ? parse_message(ps, f, depth) : parse_scalar(ps, f);
        if (rc < 0)
            return -1;
    } while (list_value && is_punct(ps, ',') && next(ps) == 0);
    if (list_value) {
        if (!is_punct(ps, ']'))
            return expected(ps, "',' or ']' in the list of values");
        if (next(ps) < 0)
            return -1;
    }
    if ((is_punct(ps, ';') || is_punct(ps, ',')) && next(ps) < 0)
        return -1;
    return 0;
}

/* Fields up to `close` ('}', '>', or 0 for the end of the file), left as the lookahead. */
static singa_conf *parse_fields(parser *ps, char close, int depth)
{
    singa_conf *list = singa_conf_new(SINGA_CONF_LIST);
    if (!list) {
        singa_err_set(ps->err, "out of memory");
        return NULL;
    }
    for (;;) {
        if (close ? is_punct(ps, close) : ps->tok.kind == T_END)
            return list;
        if (close && ps->tok.kind == T_END) {
            char want[64];
            snprintf(want, sizeof want, "a field name or '%c' closing the message", close);
            expected(ps, want);
            break;
        }
        if (parse_field(ps, list, depth) < 0)
            break;
    }
    singa_conf_free(list);
    return NULL;
}

singa_conf *singa_pbtext_parse(const char *text, size_t len, const char *file, singa_err *err)
{
    parser ps = {.p = text, .end = text + len, .file = file, .line = 1, .col = 1, .err = err};
    singa_conf *tree = NULL;
    if (next(&ps) == 0)
        tree = parse_fields(&ps, 0, 0);
    free(ps.tok.text);
    return tree;
}

singa_conf *singa_conf_read_pbtext(const char *path, singa_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        singa_err_set(err, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    do {
        if (len + 4096 > cap) {
            char *nb = realloc(buf, cap = cap * 2 + 8192);
            if (!nb) {
                free(buf);
                fclose(f);
                singa_err_set(err, "out of memory reading '%s'", path);
                return NULL;
            }
            buf = nb;
        }
        n = fread(buf + len, 1, cap - len, f);
        len += n;
    } while (n > 0);
    int bad = ferror(f);
    fclose(f);
    singa_conf *tree = NULL;
    if (bad)
        singa_err_set(err, "cannot read '%s'", path);
    else
        tree = singa_pbtext_parse(buf ? buf : "", len, path, err);
    free(buf);
    return tree;
}
