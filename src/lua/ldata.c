/* singa.read_idx and singa.read_csv: data files as tensors, parsed by the code the input layers
 * use (layers/datafile.c), so singa.predict gets exactly what kIDXData or kCSVInput would read.
 * Result tensors are pushed as empty holders before any C memory is taken, so an error raised
 * while reading never leaks it. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "lua/lcore.h"
#include "lua/ltensor.h"
#include "singa/datafile.h"

/* Checks the options table at idx (absent, nil or a table) against `names`: an unknown key is
 * refused with a "did you mean". */
static void check_opts(lua_State *L, int idx, const char *fn, const char *const *names, size_t n)
{
    if (lua_isnoneornil(L, idx))
        return;
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        const char *key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(not a name)";
        size_t i = 0;
        while (i < n && strcmp(key, names[i]) != 0)
            i++;
        if (i == n) {
            singa_err err;
            singa_err_unknown(&err, fn, "option", key, names, n);
            luaL_error(L, "%s", err.msg);
        }
    }
}

/* Option `key` of the table at idx: its value pushed (nil when there is no table). */
static int opt(lua_State *L, int idx, const char *key)
{
    return lua_istable(L, idx) ? lua_getfield(L, idx, key) : (lua_pushnil(L), LUA_TNIL);
}

static double opt_num(lua_State *L, int idx, const char *fn, const char *key, double def)
{
    int t = opt(L, idx, key);
    if (t != LUA_TNIL && t != LUA_TNUMBER)
        luaL_error(L, "%s: option '%s' must be a number, got a %s", fn, key, lua_typename(L, t));
    double v = t == LUA_TNIL ? def : lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

/* singa.read_idx(file [, { norm_a = 1, norm_b = 0 }]) -> a tensor shaped like the file (images
 * N x H x W, labels N), each byte x as x / norm_a - norm_b, as kMnist normalises. */
static int l_read_idx(lua_State *L)
{
    static const char *const names[] = {"norm_a", "norm_b"};
    const char *path = luaL_checkstring(L, 1);
    check_opts(L, 2, "singa.read_idx", names, 2);
    double a = opt_num(L, 2, "singa.read_idx", "norm_a", 1), b = opt_num(L, 2, "singa.read_idx", "norm_b", 0);
    if (a == 0)
        return luaL_error(L, "singa.read_idx: option 'norm_a' must not be 0");
    singa_tensor *t;
    singa_lua_tensor *holder = singa_lua_tensor_holder(L, &t);
    singa_idx f;
    singa_err err;
    if (singa_idx_read(&f, path, &err) < 0)
        return luaL_error(L, "singa.read_idx: %s", err.msg);
    int rc = singa_tensor_init(t, f.ndim, f.dims, &err);
    if (rc == 0)
        for (size_t i = 0; i < t->size; i++)
            t->data[i] = (float)(f.bytes[i] / a - b);
    singa_idx_free(&f);
    if (rc < 0)
        return luaL_error(L, "singa.read_idx: file '%s': %s", path, err.msg);
    singa_lua_tensor_own(L, holder);
    return 1;
}

/* singa.read_csv's options (the table at index 2): the separator (its string stays on the stack),
 * *header and the *label column (0: none); raises naming a bad one. */
static const char *csv_opts(lua_State *L, const char *fn, bool *header, lua_Integer *label)
{
    static const char *const names[] = {"separator", "header", "label"};
    check_opts(L, 2, fn, names, 3);
    int ty = opt(L, 2, "separator");
    if (ty != LUA_TNIL && ty != LUA_TSTRING)
        luaL_error(L, "%s: option 'separator' must be a string, got a %s", fn, lua_typename(L, ty));
    const char *sep = ty == LUA_TNIL ? "," : lua_tostring(L, -1); /* stays on the stack */
    singa_err err;
    if (singa_csv_check_sep(sep, &err) < 0)
        luaL_error(L, "%s: option %s", fn, err.msg);
    if ((ty = opt(L, 2, "header")) != LUA_TNIL && ty != LUA_TBOOLEAN)
        luaL_error(L, "%s: option 'header' must be true or false, got a %s", fn, lua_typename(L, ty));
    *header = lua_toboolean(L, -1);
    lua_pop(L, 1);
    *label = 1;
    if ((ty = opt(L, 2, "label")) == LUA_TBOOLEAN && !lua_toboolean(L, -1))
        *label = 0;
    else if (ty == LUA_TNUMBER && lua_isinteger(L, -1) && lua_tointeger(L, -1) != 0)
        *label = lua_tointeger(L, -1);
    else if (ty != LUA_TNIL)
        luaL_error(L, "%s: option 'label' must be a column number (1 is the first, -1 the last) or false",
                          fn);
    lua_pop(L, 1);
    return sep;
}

/* singa.read_csv(file [, { separator = ",", header = false, label = 1 }]) -> features, labels:
 * features rows x columns (but the label's), labels one per row; `label` is the label's column
 * (1-based; negative counts from the last) or false for none (then only features). */
static int l_read_csv(lua_State *L)
{
    static const char *fn = "singa.read_csv";
    const char *path = luaL_checkstring(L, 1);
    bool header;
    lua_Integer label;
    const char *sep = csv_opts(L, fn, &header, &label);
    singa_err err;
    singa_tensor *feat, *lab;
    singa_lua_tensor *hf = singa_lua_tensor_holder(L, &feat), *hl = singa_lua_tensor_holder(L, &lab);
    float *vals;
    size_t rows;
    int ncols;
    if (singa_csv_read(path, sep[0], header ? 1 : 0, &vals, &rows, &ncols, NULL, &err) < 0)
        return luaL_error(L, "%s: %s", fn, err.msg);
    lua_Integer col = label < 0 ? ncols + label + 1 : label; /* 1-based; 0: none */
    int nfeat = ncols - (label ? 1 : 0), rc = 0;
    if (label && (col < 1 || col > ncols))
        rc = singa_err_set(&err, "file '%s' has %d columns; there is no column %lld for the label", path, ncols,
                           (long long)label);
    else if (nfeat < 1)
        rc = singa_err_set(&err, "file '%s' has one column, the label: no features (label = false reads it as one)",
                           path);
    if (rc == 0 && rows > (size_t)1 << 30)
        rc = singa_err_set(&err, "file '%s' has %zu rows, too many for a tensor", path, rows);
    if (rc == 0)
        rc = singa_tensor_init(feat, 2, (int[]){(int)rows, nfeat}, &err);
    if (rc == 0 && label)
        rc = singa_tensor_init(lab, 1, (int[]){(int)rows}, &err);
    for (size_t r = 0; rc == 0 && r < rows; r++) {
        const float *row = vals + r * (size_t)ncols;
        float *out = feat->data + r * (size_t)nfeat;
        for (int c = 0, k = 0; c < ncols; c++)
            if (c + 1 == col)
                lab->data[r] = row[c];
            else
                out[k++] = row[c];
    }
    free(vals);
    if (rc < 0)
        return luaL_error(L, "%s: %s", fn, err.msg);
    singa_lua_tensor_own(L, hf);
    if (!label) {
        lua_pop(L, 1);
        return 1;
    }
    singa_lua_tensor_own(L, hl);
    return 2;
}

void singa_lua_data_open(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"read_idx", l_read_idx},
        {"read_csv", l_read_csv},
        {NULL, NULL},
    };
    luaL_setfuncs(L, funcs, 0);
}
