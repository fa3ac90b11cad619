/* The console evaluates in the job's own Lua state (its globals, `singa`, whatever the script
 * defined), on a coroutine of its own so the script's stack is never touched, and only while
 * holding the state's lock: during a job the script thread has let it go (singa.train), while
 * the script runs Lua code it has not, and a chunk waits (tui_console_poll tries each tick,
 * never blocking the UI).  Whether input is complete, or a syntax error, is found by compiling
 * in a private state, which needs no lock, as lua.c does with its "<eof>" test.
 *
 * Chunks see the job's globals through a proxy that also knows `singa` (job scripts usually
 * hold it in a local) and writes through to the globals.
 *
 * During an evaluation `print` writes to the transcript, singa.train is refused (a job would
 * run on the UI thread), and a count hook interrupts code that runs longer than a few seconds. */
#include <lauxlib.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tui/canvas.h"
#include "tui/console.h"
#include "tui/state.h"
#include "tui/term.h"

#define EVAL_SECONDS 5 /* the UI is frozen while a chunk runs */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void drop_queue(tui_console *c);

static void add_history(tui_console *c, const char *chunk, bool save)
{
    char *copy = strdup(chunk);
    if (!copy)
        return;
    for (char *p = copy; *p; p++) /* recalled as one line */
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (c->nhistory > 0 && strcmp(c->history[c->nhistory - 1], copy) == 0) {
        free(copy);
        return;
    }
    if (c->nhistory == TUI_HISTORY_MAX) {
        free(c->history[0]);
        memmove(c->history, c->history + 1, (TUI_HISTORY_MAX - 1) * sizeof *c->history);
        c->nhistory--;
    }
    c->history[c->nhistory++] = copy;
    if (save) {
        FILE *f = tui_state_open("console_history", "a");
        if (f) {
            fprintf(f, "%s\n", copy);
            fclose(f);
        }
    }
}

int tui_console_init(tui_console *c, lua_State *L, pthread_mutex_t *lock, tui_log *transcript)
{
    memset(c, 0, sizeof *c);
    c->lock = lock;
    c->out = transcript;
    c->co = lua_newthread(L);
    c->co_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    static const char env[] = "local G = _G\n"
                              "return setmetatable({}, { __newindex = G, __index = function(_, k)\n"
                              "  local v = G[k]\n"
                              "  if v == nil and k == 'singa' then v = require 'singa' end\n"
                              "  return v\n"
                              "end })";
    if (luaL_loadstring(L, env) != LUA_OK || lua_pcall(L, 0, 1, 0) != LUA_OK)
        return -1;
    c->env_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    /* Loaded now, so that eval() can hide its train from the very first chunk on. */
    lua_getglobal(L, "require");
    lua_pushstring(L, "singa");
    if (lua_pcall(L, 1, 0, 0) != LUA_OK)
        lua_pop(L, 1); /* without the module the console still works */
    if (!(c->check = luaL_newstate()))
        return -1;
    FILE *f = tui_state_open("console_history", "r");
    if (f) {
        char line[TUI_CHUNK_MAX];
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = 0;
            if (line[0])
                add_history(c, line, false);
        }
        fclose(f);
    }
    c->browse = c->nhistory;
    return 0;
}

void tui_console_free(tui_console *c)
{
    if (c->co) {
        pthread_mutex_lock(c->lock);
        luaL_unref(c->co, LUA_REGISTRYINDEX, c->co_ref);
        luaL_unref(c->co, LUA_REGISTRYINDEX, c->env_ref);
        pthread_mutex_unlock(c->lock);
        c->co = NULL;
    }
    if (c->check)
        lua_close(c->check);
    c->check = NULL;
    for (int i = 0; i < c->nhistory; i++)
        free(c->history[i]);
    c->nhistory = 0;
    drop_queue(c);
}

const char *tui_console_prompt(const tui_console *c) { return c->chunk[0] ? "  >> " : "lua> "; }

/* ---- evaluation (with the lock held) ---- */

static void deadline_hook(lua_State *L, lua_Debug *ar)
{
    lua_getfield(L, LUA_REGISTRYINDEX, "singa.tui.deadline");
    double deadline = lua_tonumber(L, -1);
    lua_pop(L, 1);
    if (now() > deadline)
        luaL_error(L, "interrupted: the console runs a chunk for at most %d s", EVAL_SECONDS);
}

/* print(...) during an evaluation: a line of the transcript. */
static int console_print(lua_State *L)
{
    tui_console *c = lua_touserdata(L, lua_upvalueindex(1));
    int n = lua_gettop(L); /* before the buffer takes a slot */
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar(&b, '\t');
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    tui_log_add(c->out, TUI_LINE_PLAIN, lua_tostring(L, -1));
    return 0;
}

static int refuse_train(lua_State *L)
{
    return luaL_error(L, "singa.train cannot run from the console: the job would run on the workbench's own thread");
}

/* A fixed buffer for a value's text: on the C stack, so an error in a __tostring leaks nothing. */
typedef struct text {
    char s[4096];
    size_t n;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (n > sizeof t->s - 1 - t->n)
        n = sizeof t->s - 1 - t->n;
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = 0;
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

/* A string quoted, its first 200 bytes. */
static void quote(lua_State *L, int idx, text *t)
{
    size_t n;
    const char *s = lua_tolstring(L, idx, &n);
    puts_(t, "\"");
    for (size_t i = 0; i < n && i < 200; i++) {
        if (s[i] == '\n') {
            puts_(t, "\\n");
        } else {
            if (s[i] == '"' || s[i] == '\\')
                puts_(t, "\\");
            put(t, s + i, 1);
        }
    }
    puts_(t, n > 200 ? "...\"" : "\"");
}

/* Appends a readable form of the value at idx: strings quoted, tables as { k = v, ... } two
 * levels deep and 16 entries wide, anything else as tostring gives it. */
static void format(lua_State *L, int idx, text *t, int depth)
{
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 6, "console");
    if (lua_type(L, idx) == LUA_TSTRING) {
        quote(L, idx, t);
        return;
    }
    if (lua_type(L, idx) != LUA_TTABLE || luaL_getmetafield(L, idx, "__tostring") != LUA_TNIL ||
        luaL_getmetafield(L, idx, "__name") != LUA_TNIL) {
        if (lua_type(L, idx) == LUA_TTABLE)
            lua_pop(L, 1); /* the metafield found */
        puts_(t, luaL_tolstring(L, idx, NULL));
        lua_pop(L, 1);
        return;
    }
    if (depth >= 2) {
        puts_(t, "{...}");
        return;
    }
    puts_(t, "{");
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx), shown = 0;
    for (lua_Integer i = 1; i <= n && shown < 16; i++, shown++) {
        puts_(t, shown ? ", " : " ");
        lua_rawgeti(L, idx, i);
        format(L, -1, t, depth + 1);
        lua_pop(L, 1);
    }
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && lua_tointeger(L, -2) <= n) {
            lua_pop(L, 1);
            continue;
        }
        if (shown++ == 16) {
            puts_(t, ", ...");
            lua_pop(L, 2);
            break;
        }
        puts_(t, shown > 1 ? ", " : " ");
        if (lua_type(L, -2) == LUA_TSTRING) {
            puts_(t, lua_tostring(L, -2));
        } else {
            puts_(t, "[");
            format(L, -2, t, depth + 1);
            puts_(t, "]");
        }
        puts_(t, " = ");
        format(L, -1, t, depth + 1);
        lua_pop(L, 1);
    }
    puts_(t, shown ? " }" : "}");
}

/* evaluate(console, chunk): compiles "return chunk" (an expression) or else chunk (statements),
 * runs it and writes what it returns to the transcript.  Runs protected. */
static int evaluate(lua_State *L)
{
    tui_console *c = lua_touserdata(L, 1);
    size_t len;
    const char *chunk = lua_tolstring(L, 2, &len);
    lua_pushfstring(L, "return %s;", chunk);
    int base = lua_gettop(L);
    if (luaL_loadbufferx(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=console", "t") != LUA_OK) {
        lua_pop(L, 1);
        if (luaL_loadbufferx(L, chunk, len, "=console", "t") != LUA_OK)
            return lua_error(L);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->env_ref);
    lua_setupvalue(L, -2, 1); /* _ENV */
    lua_call(L, 0, LUA_MULTRET);
    int n = lua_gettop(L) - base;
    if (n == 0)
        return 0;
    text t = {.n = 0};
    t.s[0] = 0;
    for (int i = 1; i <= n; i++) {
        if (i > 1)
            puts_(&t, "\t");
        format(L, base + i, &t, 0);
    }
    tui_log_add(c->out, TUI_LINE_RESULT, t.s);
    return 0;
}

static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg)
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Sets t[key] = the value on top (popped), keeping the old value on the stack below it. */
static void swap_field(lua_State *L, int t, const char *key)
{
    lua_getfield(L, t, key); /* old */
    lua_rotate(L, -2, 1);    /* old, new */
    lua_setfield(L, t, key);
}

/* The tables whose train function the console hides: singa and singa.core, when loaded. */
static int loaded_table(lua_State *L, const char *name)
{
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, name);
    lua_remove(L, -2);
    return lua_istable(L, -1);
}

/* The error's message in place, and those lines of its traceback that are in Lua files (the
 * frames of the console's own machinery say nothing). */
static void show_error(tui_console *c, const char *msg)
{
    if (!msg)
        msg = "(error)";
    const char *tb = strstr(msg, "\nstack traceback:");
    size_t n = tb ? (size_t)(tb - msg) : strlen(msg);
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), msg);
    tui_log_add(c->out, TUI_LINE_ERROR, line);
    for (int shown = 0; tb && shown < 5;) {
        const char *start = tb + 1, *end = strchr(start, '\n');
        size_t len = end ? (size_t)(end - start) : strlen(start);
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), start);
        if (strstr(line, ".lua:")) {
            tui_log_add(c->out, TUI_LINE_ERROR, line);
            shown++;
        }
        tb = end;
    }
}

static void eval(tui_console *c, const char *chunk)
{
    lua_State *L = c->co;
    lua_settop(L, 0);
    lua_pushglobaltable(L); /* 1 */
    lua_pushlightuserdata(L, c);
    lua_pushcclosure(L, console_print, 1);
    swap_field(L, 1, "print"); /* 2: the old print */
    int ns = loaded_table(L, "singa"); /* 3 */
    if (ns) {
        lua_pushcfunction(L, refuse_train);
        swap_field(L, 3, "train"); /* 4: the old train */
    } else {
        lua_pushnil(L); /* 4 */
    }
    int nc = loaded_table(L, "singa.core"); /* 5 */
    if (nc) {
        lua_pushcfunction(L, refuse_train);
        swap_field(L, 5, "train"); /* 6 */
    } else {
        lua_pushnil(L); /* 6 */
    }
    lua_pushnumber(L, now() + EVAL_SECONDS);
    lua_setfield(L, LUA_REGISTRYINDEX, "singa.tui.deadline");
    lua_sethook(L, deadline_hook, LUA_MASKCOUNT, 10000);
    lua_pushcfunction(L, traceback); /* 7 */
    lua_pushcfunction(L, evaluate);
    lua_pushlightuserdata(L, c);
    lua_pushstring(L, chunk);
    if (lua_pcall(L, 2, 0, 7) != LUA_OK)
        show_error(c, lua_tostring(L, -1));
    lua_sethook(L, NULL, 0, 0);
    lua_settop(L, 6);
    if (nc) {
        lua_pushvalue(L, 6);
        lua_setfield(L, 5, "train");
    }
    if (ns) {
        lua_pushvalue(L, 4);
        lua_setfield(L, 3, "train");
    }
    lua_pushvalue(L, 2);
    lua_setfield(L, 1, "print");
    lua_settop(L, 0);
}

static void drop_queue(tui_console *c)
{
    for (int i = 0; i < c->nqueued; i++)
        free(c->queued[i]);
    c->nqueued = 0;
}

bool tui_console_poll(tui_console *c)
{
    if (!c->nqueued || pthread_mutex_trylock(c->lock) != 0)
        return false;
    for (int i = 0; i < c->nqueued; i++)
        eval(c, c->queued[i]);
    pthread_mutex_unlock(c->lock);
    drop_queue(c);
    c->scroll = 0;
    return true;
}

/* ---- input ---- */

/* Whether chunk compiles (1), is incomplete (0) or has a syntax error (-1, message in err). */
static int complete(tui_console *c, const char *chunk, char *err, size_t len)
{
    lua_State *L = c->check;
    lua_settop(L, 0);
    lua_pushfstring(L, "return %s;", chunk);
    if (luaL_loadbufferx(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=console", "t") == LUA_OK)
        return 1;
    lua_settop(L, 0);
    if (luaL_loadbufferx(L, chunk, strlen(chunk), "=console", "t") == LUA_OK)
        return 1;
    size_t n;
    const char *msg = lua_tolstring(L, -1, &n);
    if (n >= 5 && strcmp(msg + n - 5, "<eof>") == 0)
        return 0;
    snprintf(err, len, "%s", msg);
    return -1;
}

void tui_console_submit(tui_console *c, const char *line)
{
    tui_log_addf(c->out, TUI_LINE_INPUT, "%s%s", tui_console_prompt(c), line);
    size_t used = strlen(c->chunk);
    if (used + strlen(line) + 2 >= sizeof c->chunk) {
        tui_log_add(c->out, TUI_LINE_ERROR, "the chunk is too long");
        c->chunk[0] = 0;
        return;
    }
    snprintf(c->chunk + used, sizeof c->chunk - used, "%s%s", used ? "\n" : "", line);
    if (!c->chunk[strspn(c->chunk, " \t\n")]) {
        c->chunk[0] = 0;
        return;
    }
    char err[512];
    switch (complete(c, c->chunk, err, sizeof err)) {
    case 0: /* more lines to come */
        return;
    case -1:
        tui_log_add(c->out, TUI_LINE_ERROR, err);
        add_history(c, c->chunk, true);
        break;
    default:
        add_history(c, c->chunk, true);
        if (c->nqueued == TUI_QUEUE_MAX || !(c->queued[c->nqueued] = strdup(c->chunk)))
            tui_log_add(c->out, TUI_LINE_WARN, "too many chunks wait for the Lua state; this one is dropped");
        else
            c->nqueued++;
        c->chunk[0] = 0;
        tui_console_poll(c); /* at once when the state is free: results follow their input */
        return;
    }
    c->chunk[0] = 0;
}

static void set_input(tui_console *c, const char *utf8)
{
    c->len = 0;
    while (*utf8 && c->len < TUI_INPUT_MAX - 1)
        c->input[c->len++] = (wchar_t)tui_utf8_next(&utf8);
    c->cursor = c->len;
}

static void enter(tui_console *c)
{
    char line[TUI_INPUT_MAX * 4 + 1];
    size_t o = 0;
    for (int i = 0; i < c->len; i++)
        o += (size_t)tui_utf8_put((uint32_t)c->input[i], line + o);
    line[o] = 0;
    c->len = c->cursor = 0;
    c->scroll = 0;
    tui_console_submit(c, line);
    c->browse = c->nhistory;
}

static void erase_input(tui_console *c, int from, int to)
{
    if (from < 0 || to > c->len || from >= to)
        return;
    memmove(c->input + from, c->input + to, (size_t)(c->len - to) * sizeof *c->input);
    c->len -= to - from;
    c->cursor = from;
}

/* Keys with an ncurses code: moving, deleting, history, scrolling the transcript. */
static bool code_key(tui_console *c, wint_t ch)
{
    switch (ch) {
    case KEY_LEFT:
        c->cursor -= c->cursor > 0;
        return true;
    case KEY_RIGHT:
        c->cursor += c->cursor < c->len;
        return true;
    case KEY_HOME:
        c->cursor = 0;
        return true;
    case KEY_END:
        c->cursor = c->len;
        return true;
    case KEY_BACKSPACE:
        erase_input(c, c->cursor - 1, c->cursor);
        return true;
    case KEY_DC:
        erase_input(c, c->cursor, c->cursor + 1);
        return true;
    case KEY_UP:
    case KEY_DOWN:
        if (ch == KEY_UP ? c->browse == 0 : c->browse >= c->nhistory)
            return true;
        c->browse += ch == KEY_UP ? -1 : 1;
        set_input(c, c->browse < c->nhistory ? c->history[c->browse] : "");
        return true;
    case KEY_PPAGE:
        c->scroll += 5;
        return true;
    case KEY_NPAGE:
        c->scroll = c->scroll > 5 ? c->scroll - 5 : 0;
        return true;
    case KEY_ENTER:
        enter(c);
        return true;
    default:
        return false;
    }
}

/* ^W: the word before the cursor. */
static void erase_word(tui_console *c)
{
    int from = c->cursor;
    while (from > 0 && c->input[from - 1] == ' ')
        from--;
    while (from > 0 && c->input[from - 1] != ' ')
        from--;
    erase_input(c, from, c->cursor);
}

/* ^C: drops the line, the chunk so far and a waiting chunk. */
static void cancel(tui_console *c)
{
    if (c->len || c->chunk[0] || c->nqueued)
        tui_log_add(c->out, TUI_LINE_NOTE, "(cancelled)");
    c->len = c->cursor = 0;
    c->chunk[0] = 0;
    drop_queue(c);
}

bool tui_console_key(tui_console *c, int is_key_code, wint_t ch)
{
    if (is_key_code)
        return code_key(c, ch);
    switch (ch) {
    case '\r':
    case '\n':
        enter(c);
        return true;
    case 1: /* ^A */
        c->cursor = 0;
        return true;
    case 5: /* ^E */
        c->cursor = c->len;
        return true;
    case 11: /* ^K */
        c->len = c->cursor;
        return true;
    case 21: /* ^U */
        erase_input(c, 0, c->cursor);
        return true;
    case 23:
        erase_word(c);
        return true;
    case 3:
        cancel(c);
        return true;
    case 8:
    case 127:
        erase_input(c, c->cursor - 1, c->cursor);
        return true;
    default:
        if (ch < 32 || c->len >= TUI_INPUT_MAX - 1)
            return false;
        memmove(c->input + c->cursor + 1, c->input + c->cursor, (size_t)(c->len - c->cursor) * sizeof *c->input);
        c->input[c->cursor++] = (wchar_t)ch;
        c->len++;
        return true;
    }
}
