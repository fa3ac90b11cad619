/* Tensors for Lua: a userdata class over a singa_tensor, built as liolib.c builds files (a
 * metatable named by TENSOR_MT, a method table behind __index, one finalizer for __gc and
 * __close).
 *
 * A tensor either owns its storage (singa.tensor(), t:clone(), singa.predict's output) or is a
 * view of engine memory lent for one call (kLua's param, grad and state).  The binding expires a
 * view when that call returns, so a view kept past it raises an error instead of touching memory
 * the engine may have freed.  Owned storage goes at __close or __gc, whichever comes first, and
 * its size is reported to the collector so big tensors do not pile up between cycles.
 *
 * The operations work in place and return the tensor, so they chain: h:scale(m):axpy(-lr, g).
 * They are plain loops rather than BLAS calls: OpenBLAS's saxpy may fuse the multiply and add
 * (FMA) while the built-in updaters round each product, and a Lua updater must be able to
 * reproduce those bit for bit. */
#include <lauxlib.h>
#include <math.h>
#include <string.h>

#include "lua/ltensor.h"

#define TENSOR_MT "singa.tensor"

typedef enum { LT_OWNED, LT_VIEW, LT_EXPIRED, LT_CLOSED } lt_state;

struct singa_lua_tensor {
    singa_tensor t; /* owned storage, or a copy of the engine's header for a view */
    lt_state state;
};

#define totensor(L, i) ((singa_lua_tensor *)luaL_checkudata(L, i, TENSOR_MT))

singa_tensor *singa_lua_tensor_check(lua_State *L, int idx)
{
    singa_lua_tensor *lt = totensor(L, idx);
    if (lt->state == LT_EXPIRED)
        luaL_error(L, "tensor view expired: param, grad and state tensors are valid only during the call "
                      "they were passed to (keep a copy with t:clone())");
    if (lt->state == LT_CLOSED)
        luaL_error(L, "tensor is closed");
    return &lt->t;
}

int singa_lua_tensor_is(lua_State *L, int idx) { return luaL_testudata(L, idx, TENSOR_MT) != NULL; }

static singa_lua_tensor *push(lua_State *L)
{
    singa_lua_tensor *lt = lua_newuserdatauv(L, sizeof *lt, 0);
    memset(lt, 0, sizeof *lt);
    lt->state = LT_CLOSED; /* until it holds something */
    luaL_setmetatable(L, TENSOR_MT);
    return lt;
}

singa_lua_tensor *singa_lua_tensor_view(lua_State *L, singa_tensor *t)
{
    if (!singa_tensor_contiguous(t))
        luaL_error(L, "internal error: a tensor view must be contiguous");
    singa_lua_tensor *lt = push(L);
    lt->t = *t;
    lt->t.owns = false;
    lt->state = LT_VIEW;
    return lt;
}

void singa_lua_tensor_expire(singa_lua_tensor *v)
{
    if (v->state == LT_VIEW)
        v->state = LT_EXPIRED;
}

singa_lua_tensor *singa_lua_tensor_holder(lua_State *L, singa_tensor **t)
{
    singa_lua_tensor *lt = push(L);
    *t = &lt->t;
    return lt;
}

void singa_lua_tensor_own(lua_State *L, singa_lua_tensor *lt)
{
    lt->t.owns = true;
    lt->state = LT_OWNED;
    /* Lua sees only the small header: let the collector count the storage as allocated. */
    size_t kb = lt->t.size * sizeof(float) / 1024;
    if (kb > 0)
        lua_gc(L, LUA_GCSTEP, kb > (size_t)1 << 30 ? 1 << 30 : (int)kb);
}

singa_tensor *singa_lua_tensor_new(lua_State *L, int ndim, const int *shape)
{
    singa_tensor *t;
    singa_lua_tensor *lt = singa_lua_tensor_holder(L, &t);
    singa_err err;
    if (singa_tensor_init(t, ndim, shape, &err) < 0)
        luaL_error(L, "%s", err.msg);
    singa_lua_tensor_own(L, lt);
    return t;
}

/* __gc and __close: owned storage goes; any later use is an error. */
static int t_close(lua_State *L)
{
    singa_lua_tensor *lt = totensor(L, 1);
    if (lt->state == LT_OWNED)
        singa_tensor_free(&lt->t);
    if (lt->state != LT_EXPIRED)
        lt->state = LT_CLOSED;
    return 0;
}

/* The other operand of an element-wise operation: a tensor of as many elements as t. */
static const singa_tensor *operand(lua_State *L, int idx, const singa_tensor *t)
{
    const singa_tensor *x = singa_lua_tensor_check(L, idx);
    if (x->size != t->size) {
        char a[64], b[64];
        luaL_error(L, "tensor sizes differ: %s (%d elements) and %s (%d elements)", singa_tensor_shape_str(t, a, sizeof a),
                   (int)t->size, singa_tensor_shape_str(x, b, sizeof b), (int)x->size);
    }
    return x;
}

static int t_numel(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)singa_lua_tensor_check(L, 1)->size);
    return 1;
}

static int t_shape(lua_State *L)
{
    const singa_tensor *t = singa_lua_tensor_check(L, 1);
    lua_createtable(L, t->ndim, 0);
    for (int d = 0; d < t->ndim; d++) {
        lua_pushinteger(L, t->shape[d]);
        lua_rawseti(L, -2, d + 1);
    }
    return 1;
}

/* The 0-based element for the 1-based index at idx, bounds-checked. */
static size_t element(lua_State *L, const singa_tensor *t, int idx)
{
    int isint;
    lua_Integer i = lua_tointegerx(L, idx, &isint);
    if (!isint)
        luaL_error(L, "tensor index must be an integer, got %s", luaL_typename(L, idx));
    if (i < 1 || (lua_Unsigned)i > t->size)
        luaL_error(L, "tensor index %d out of range 1..%d", (int)i, (int)t->size);
    return (size_t)(i - 1);
}

/* t[i] (1-based, row-major) or a method. */
static int t_index(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TNUMBER) {
        const singa_tensor *t = singa_lua_tensor_check(L, 1);
        lua_pushnumber(L, t->data[element(L, t, 2)]);
        return 1;
    }
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    return 1;
}

static int t_newindex(lua_State *L)
{
    singa_tensor *t = singa_lua_tensor_check(L, 1);
    if (lua_type(L, 2) != LUA_TNUMBER)
        return luaL_error(L, "tensors take only numeric indices (1..%d)", (int)t->size);
    size_t k = element(L, t, 2);
    t->data[k] = (float)luaL_checknumber(L, 3);
    return 0;
}

static int t_tostring(lua_State *L)
{
    singa_lua_tensor *lt = totensor(L, 1);
    char buf[64];
    static const char *const what[] = {"", " (view)", " (expired view)", " (closed)"};
    if (lt->state == LT_CLOSED)
        lua_pushstring(L, "tensor (closed)");
    else
        lua_pushfstring(L, "tensor %s%s", singa_tensor_shape_str(&lt->t, buf, sizeof buf), what[lt->state]);
    return 1;
}

static int t_fill(lua_State *L)
{
    singa_tensor *t = singa_lua_tensor_check(L, 1);
    float v = (float)luaL_checknumber(L, 2);
    for (size_t k = 0; k < t->size; k++)
        t->data[k] = v;
    lua_settop(L, 1);
    return 1;
}

static int t_copy(lua_State *L)
{
    singa_tensor *t = singa_lua_tensor_check(L, 1);
    const singa_tensor *x = operand(L, 2, t);
    memmove(t->data, x->data, t->size * sizeof(float));
    lua_settop(L, 1);
    return 1;
}

static int t_scale(lua_State *L)
{
    singa_tensor *t = singa_lua_tensor_check(L, 1);
    float a = (float)luaL_checknumber(L, 2), *y = t->data;
    for (size_t k = 0; k < t->size; k++)
        y[k] *= a;
    lua_settop(L, 1);
    return 1;
}

/* t:axpy(a, x): t += a x, each product rounded before the sum. */
static int t_axpy(lua_State *L)
{
    singa_tensor *t = singa_lua_tensor_check(L, 1);
    float a = (float)luaL_checknumber(L, 2), *y = t->data;
    const float *x = operand(L, 3, t)->data;
    for (size_t k = 0; k < t->size; k++)
        y[k] += a * x[k];
    lua_settop(L, 1);
    return 1;
}

typedef enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV } binop;

/* t op= x for a tensor or a number x.  The switch sits outside the loops so each vectorises. */
static int elementwise(lua_State *L, binop op)
{
    singa_tensor *t = singa_lua_tensor_check(L, 1);
    float *y = t->data;
    size_t n = t->size;
    if (lua_type(L, 2) == LUA_TNUMBER) {
        float a = (float)lua_tonumber(L, 2);
        switch (op) {
        case OP_ADD: for (size_t k = 0; k < n; k++) y[k] += a; break;
        case OP_SUB: for (size_t k = 0; k < n; k++) y[k] -= a; break;
        case OP_MUL: for (size_t k = 0; k < n; k++) y[k] *= a; break;
        case OP_DIV: for (size_t k = 0; k < n; k++) y[k] /= a; break;
        }
    } else {
        luaL_argexpected(L, singa_lua_tensor_is(L, 2), 2, "tensor or number");
        const float *x = operand(L, 2, t)->data;
        switch (op) {
        case OP_ADD: for (size_t k = 0; k < n; k++) y[k] += x[k]; break;
        case OP_SUB: for (size_t k = 0; k < n; k++) y[k] -= x[k]; break;
        case OP_MUL: for (size_t k = 0; k < n; k++) y[k] *= x[k]; break;
        case OP_DIV: for (size_t k = 0; k < n; k++) y[k] /= x[k]; break;
        }
    }
    lua_settop(L, 1);
    return 1;
}

static int t_add(lua_State *L) { return elementwise(L, OP_ADD); }
static int t_sub(lua_State *L) { return elementwise(L, OP_SUB); }
static int t_mul(lua_State *L) { return elementwise(L, OP_MUL); }
static int t_div(lua_State *L) { return elementwise(L, OP_DIV); }

/* t:f() applies f to every element in place and returns t. */
static int unary(lua_State *L, float (*f)(float))
{
    singa_tensor *t = singa_lua_tensor_check(L, 1);
    float *y = t->data;
    for (size_t k = 0; k < t->size; k++)
        y[k] = f(y[k]);
    lua_settop(L, 1);
    return 1;
}

static int t_sqrt(lua_State *L) { return unary(L, sqrtf); }
static int t_abs(lua_State *L) { return unary(L, fabsf); }

static int t_sum(lua_State *L)
{
    lua_pushnumber(L, singa_tensor_sum(singa_lua_tensor_check(L, 1)));
    return 1;
}

/* t:norm([p]): the L1 (p = 1) or L2 (p = 2, the default) norm, accumulated in double. */
static int t_norm(lua_State *L)
{
    const singa_tensor *t = singa_lua_tensor_check(L, 1);
    lua_Integer p = luaL_optinteger(L, 2, 2);
    luaL_argcheck(L, p == 1 || p == 2, 2, "the norm must be 1 or 2");
    double s = 0;
    if (p == 2)
        s = sqrt(singa_tensor_sumsq(t));
    else
        for (size_t k = 0; k < t->size; k++)
            s += fabs((double)t->data[k]);
    lua_pushnumber(L, s);
    return 1;
}

static int t_clone(lua_State *L)
{
    const singa_tensor *t = singa_lua_tensor_check(L, 1);
    singa_tensor *c = singa_lua_tensor_new(L, t->ndim, t->shape);
    memcpy(c->data, t->data, t->size * sizeof(float));
    return 1;
}

void singa_lua_tensor_push_rows(lua_State *L, const singa_tensor *t)
{
    int rows = t->ndim > 1 ? t->shape[0] : 0, cols = t->ndim > 1 ? singa_tensor_cols(t) : (int)t->size;
    lua_createtable(L, rows ? rows : cols, 0);
    for (int r = 0; r < (rows ? rows : 1); r++) {
        if (rows)
            lua_createtable(L, cols, 0);
        const float *row = t->data + (size_t)r * (size_t)cols;
        for (int c = 0; c < cols; c++) {
            lua_pushnumber(L, row[c]);
            lua_rawseti(L, -2, c + 1);
        }
        if (rows)
            lua_rawseti(L, -2, r + 1);
    }
}

/* A list of numbers (one dimension) or of rows (each the row's elements, row-major). */
static int t_totable(lua_State *L)
{
    singa_lua_tensor_push_rows(L, singa_lua_tensor_check(L, 1));
    return 1;
}

/* singa.tensor(d1 [, d2, ...]): zeros of that shape.  singa.tensor(values): a 1-D tensor from a
 * list of numbers, or a rows x cols tensor from a list of rows of equal length. */
int singa_lua_tensor_ctor(lua_State *L)
{
    int shape[SINGA_MAX_DIMS];
    if (lua_type(L, 1) == LUA_TNUMBER) {
        int nd = lua_gettop(L);
        luaL_argcheck(L, nd <= SINGA_MAX_DIMS, SINGA_MAX_DIMS + 1, "at most 4 dimensions");
        for (int d = 0; d < nd; d++) {
            lua_Integer v = luaL_checkinteger(L, d + 1);
            luaL_argcheck(L, v >= 1 && v <= 1 << 30, d + 1, "dimensions must be positive integers");
            shape[d] = (int)v;
        }
        singa_lua_tensor_new(L, nd, shape);
        return 1;
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    singa_lua_tensor_from(L, 1, "singa.tensor");
    return 1;
}

singa_tensor *singa_lua_tensor_from(lua_State *L, int idx, const char *what)
{
    idx = lua_absindex(L, idx);
    int n = (int)lua_rawlen(L, idx), shape[2];
    if (n == 0)
        luaL_error(L, "%s: an empty list", what);
    lua_rawgeti(L, idx, 1);
    bool rows = lua_istable(L, -1);
    int cols = rows ? (int)lua_rawlen(L, -1) : 1;
    lua_pop(L, 1);
    if (cols == 0)
        luaL_error(L, "%s: row 1 is empty", what);
    shape[0] = n;
    shape[1] = cols;
    singa_tensor *t = singa_lua_tensor_new(L, rows ? 2 : 1, shape);
    float *v = t->data;
    for (int r = 0; r < n; r++) {
        lua_rawgeti(L, idx, r + 1);
        if (!rows) {
            if (lua_type(L, -1) != LUA_TNUMBER)
                luaL_error(L, "%s: element %d is a %s, not a number", what, r + 1, luaL_typename(L, -1));
            v[r] = (float)lua_tonumber(L, -1);
        } else {
            if (!lua_istable(L, -1) || (int)lua_rawlen(L, -1) != cols)
                luaL_error(L, "%s: row %d must be a list of %d numbers like row 1", what, r + 1, cols);
            for (int c = 0; c < cols; c++) {
                lua_rawgeti(L, -1, c + 1);
                if (lua_type(L, -1) != LUA_TNUMBER)
                    luaL_error(L, "%s: row %d, element %d is a %s, not a number", what, r + 1, c + 1,
                               luaL_typename(L, -1));
                v[(size_t)r * (size_t)cols + (size_t)c] = (float)lua_tonumber(L, -1);
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    return t;
}

void singa_lua_tensor_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"numel", t_numel}, {"shape", t_shape}, {"fill", t_fill},   {"copy", t_copy},
        {"scale", t_scale}, {"axpy", t_axpy},   {"add", t_add},     {"sub", t_sub},
        {"mul", t_mul},     {"div", t_div},     {"sqrt", t_sqrt},   {"abs", t_abs},
        {"sum", t_sum},     {"norm", t_norm},   {"clone", t_clone}, {"totable", t_totable},
        {"close", t_close}, {NULL, NULL},
    };
    static const luaL_Reg meta[] = {
        {"__newindex", t_newindex}, {"__len", t_numel}, {"__tostring", t_tostring},
        {"__gc", t_close},          {"__close", t_close}, {NULL, NULL},
    };
    if (!luaL_newmetatable(L, TENSOR_MT)) {
        lua_pop(L, 1);
        return;
    }
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, methods);
    lua_pushcclosure(L, t_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}
