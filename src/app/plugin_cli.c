/* singa-tui's side of plugins: which folders it scans, and --check-plugin, which loads one
 * plugin into a registry of its own (the scanned folders stay out of it, so the file checked
 * is the file named) and runs the finite-difference check on each layer type it registers. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/plugin_cli.h"
#include "paths.h"
#include "singa/singa.h"

int singa_tui_program_dir(char *dir, size_t cap)
{
    char exe[PATH_MAX] = "";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    snprintf(dir, cap, ".");
    if (n <= 0)
        return 0;
    exe[n] = 0;
    snprintf(dir, cap, "%s", exe);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    size_t len = strlen(dir);
    if (len > 6 && strcmp(dir + len - 6, "/.libs") == 0) {
        dir[len - 6] = 0;
        return 1;
    }
    return 0;
}

void singa_tui_plugin_path(char *buf, size_t cap)
{
    char dir[PATH_MAX];
    int dev = singa_tui_program_dir(dir, sizeof dir); /* the build tree: modules in plugins/.libs/ too */
    const char *env = getenv("SINGA_PLUGIN_PATH");
    snprintf(buf, cap, "%s%s%s/plugins%s%s%s:%s", env ? env : "", env ? ":" : "", dir,
             dev ? ":" : "", dev ? dir : "", dev ? "/plugins/.libs" : "", SINGA_PLUGINDIR);
}

int singa_tui_check_plugin(const char *file)
{
    singa_registry *reg = singa_registry_new();
    const singa_plugin *p;
    singa_err err = {{0}};
    if (!reg) {
        fprintf(stderr, "singa-tui: out of memory\n");
        return 1;
    }
    if (singa_plugin_load(reg, file, &p, &err) < 0) {
        fprintf(stderr, "singa-tui: %s\n", err.msg);
        singa_registry_free(reg);
        return 1;
    }
    int major, minor;
    singa_plugin_abi(p, &major, &minor);
    printf("plugin %s %s (ABI %d.%d): %s\n", singa_plugin_name(p), singa_plugin_version(p), major,
           minor, file);
    size_t n = singa_plugin_types(p, NULL, 0), failed = 0, skipped = 0;
    const singa_layer_type **types = malloc(n * sizeof *types);
    if (!types) {
        fprintf(stderr, "singa-tui: out of memory\n");
        singa_registry_free(reg);
        return 1;
    }
    singa_plugin_types(p, types, n);
    for (size_t i = 0; i < n; i++) {
        singa_gradcheck_report rep;
        const char *name = types[i]->name;
        if (singa_plugin_gradcheck(reg, p, i, &rep, &err) < 0) {
            printf("FAIL %s: %s\n", name, err.msg);
            failed++;
        } else if (rep.checked == 0) {
            printf("skip %s: no gradient passes through it (no backward, or no sources)\n", name);
            skipped++;
        } else if (!(rep.max_rel_err < SINGA_PLUGIN_CHECK_TOL)) {
            printf("FAIL %s: max relative error %.3g over %ld elements (limit %g); worst %s\n", name,
                   rep.max_rel_err, rep.checked, SINGA_PLUGIN_CHECK_TOL, rep.worst);
            failed++;
        } else {
            printf("ok   %s: max relative error %.3g over %ld elements\n", name, rep.max_rel_err,
                   rep.checked);
        }
    }
    printf("%zu of %zu layer types passed, %zu failed, %zu had nothing to check\n",
           n - failed - skipped, n, failed, skipped);
    free(types);
    singa_registry_free(reg);
    return failed ? 1 : 0;
}
