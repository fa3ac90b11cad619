/* singa.tensor: tensors as Lua userdata (see ltensor.c). */
#ifndef SINGA_LUA_LTENSOR_H
#define SINGA_LUA_LTENSOR_H

#include <lua.h>
#include "singa/tensor.h"

typedef struct singa_lua_tensor singa_lua_tensor;

/* Creates the class's metatable; luaopen_singa_core calls it. */
void singa_lua_tensor_open(lua_State *L);
/* Pushes a view of t, which must be contiguous and stay valid until singa_lua_tensor_expire(),
 * after which every use of the view raises an error. */
singa_lua_tensor *singa_lua_tensor_view(lua_State *L, singa_tensor *t);
void singa_lua_tensor_expire(singa_lua_tensor *v);
/* Pushes a new zero-filled tensor that owns its storage; raises a Lua error if it cannot. */
singa_tensor *singa_lua_tensor_new(lua_State *L, int ndim, const int *shape);
/* Pushes an empty tensor to fill: singa_lua_tensor_own() then takes over what `*t` holds (a
 * tensor singa_tensor_init made).  Filling C memory only once the holder is on the stack means a
 * Lua error can never leak it. */
singa_lua_tensor *singa_lua_tensor_holder(lua_State *L, singa_tensor **t);
void singa_lua_tensor_own(lua_State *L, singa_lua_tensor *holder);
/* Pushes a new tensor made from the list at idx: numbers (1-D) or rows of equal length (2-D);
 * `what` names the value in error messages. */
singa_tensor *singa_lua_tensor_from(lua_State *L, int idx, const char *what);
/* Pushes t as a list of numbers (1-D) or a list of rows. */
void singa_lua_tensor_push_rows(lua_State *L, const singa_tensor *t);
/* The live tensor at idx, or a Lua error (argument error for a non-tensor). */
singa_tensor *singa_lua_tensor_check(lua_State *L, int idx);
/* Whether the value at idx is a tensor (live or not). */
int singa_lua_tensor_is(lua_State *L, int idx);
/* singa.tensor(d1, d2, ...) (zeros) or singa.tensor(values) (a list of numbers or of rows). */
int singa_lua_tensor_ctor(lua_State *L);

#endif
