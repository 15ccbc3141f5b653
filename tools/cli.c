// SPDX-License-Identifier: MIT
// Helpers shared by every `lockstep` subcommand: help, usage errors, option
// values, numbers, error printing and finding installed scenes.
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            return true;
        }
    }
    return false;
}

void cli_print_usage(const cli_command *cmd)
{
    // usage = synopsis, then (after a blank line) the options: the one-line
    // description goes between them.
    const char *options = strstr(cmd->usage, "\n\n");
    int synopsis = options ? (int)(options - cmd->usage) : (int)strlen(cmd->usage);
    printf("usage: lockstep %s %.*s\n\n%s\n", cmd->name, synopsis, cmd->usage, cmd->summary);
    if (options) {
        printf("%s%s\n", options + 1, cmd->usage_more ? cmd->usage_more : "");
    }
}

void cli_print_error(const char *prefix, const ls_error *err)
{
    char line[LS_ERROR_PATH_MAX + LS_ERROR_MESSAGE_MAX + 32];
    ls_error_format(err, line, sizeof line);
    fprintf(stderr, "%s: %s [%s]\n", prefix, line, ls_result_name(err->code));
}

void cli_print_error_at(const char *prefix, const char *path, const ls_error *err)
{
    ls_error e = *err;
    if (!e.path[0]) {
        ls_error_set_path(&e, path);
    }
    cli_print_error(prefix, &e);
}

int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "lockstep %s: ", cmd->name);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see lockstep %s --help)\n", cmd->name);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

bool cli_option(const cli_command *cmd, int argc, char **argv, int *i, const char *name,
                const char **value)
{
    if (strcmp(argv[*i], name) != 0) {
        return false;
    }
    *value = NULL;
    if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        cli_usage_error(cmd, "%s needs a value", name);
    }
    return true;
}

bool cli_parse_u64(const cli_command *cmd, const char *option, const char *text, uint64_t min,
                   uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!text[0] || text[0] == '-' || text[0] == '+' || text[0] == ' ' || *end != '\0' ||
        errno == ERANGE || v < min || v > max) {
        cli_usage_error(cmd, "%s wants an integer %llu..%llu, got '%s'", option,
                        (unsigned long long)min, (unsigned long long)max, text);
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_simd(const cli_command *cmd, const char *text, ls_simd *out)
{
    static const struct {
        const char *name;
        ls_simd simd;
    } paths[] = {{"auto", LS_SIMD_AUTO},
                 {"scalar", LS_SIMD_SCALAR},
                 {"avx2", LS_SIMD_AVX2},
                 {"avx512", LS_SIMD_AVX512}};
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
        if (strcmp(text, paths[k].name) == 0) {
            if (!ls_simd_available(paths[k].simd)) {
                cli_usage_error(cmd, "--simd %s: this build or CPU has no such path", text);
                return false;
            }
            *out = paths[k].simd;
            return true;
        }
    }
    cli_usage_error(cmd, "--simd wants auto, scalar, avx2 or avx512, got '%s'", text);
    return false;
}

int cli_unexpected(const cli_command *cmd, const char *arg)
{
    if (arg[0] == '-' && arg[1] != '\0') {
        return cli_usage_error(cmd, "unknown option '%s'", arg);
    }
    return cli_usage_error(cmd, "unexpected argument '%s'", arg);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

// The library's (ls/scene.h): $LOCKSTEP_DATA, else the install's PREFIX/share/lockstep.
static const char *data_dir(void)
{
    return ls_data_dir();
}

const char *cli_find_scene(const char *path, char *buf, size_t size)
{
    struct stat st;
    if (stat(path, &st) == 0) {
        return path; // exists (a directory too: the loader then says what is wrong with it)
    }
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!base[0]) {
        return path;
    }
    int n = snprintf(buf, size, "%s/scenes/%s", data_dir(), base);
    if (n > 0 && (size_t)n < size && is_file(buf)) {
        return buf;
    }
    return path;
}

const char *cli_default_scene(const cli_command *cmd, char *buf, size_t size)
{
    const char *path = cli_find_scene(CLI_DEFAULT_SCENE, buf, size);
    if (is_file(path)) {
        return path;
    }
    fprintf(stderr,
            "lockstep %s: no --scene given, and the default arena.scene is neither at %s nor in "
            "%s/scenes (give --scene FILE or set LOCKSTEP_DATA)\n",
            cmd->name, CLI_DEFAULT_SCENE, data_dir());
    return NULL;
}

bool cli_is_one_of(const char *arg, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(arg, list[i]) == 0) {
            return true;
        }
    }
    return false;
}

ls_result cli_scene_parse_portable(const char *path, char **text, size_t *size, ls_scene *out,
                                   ls_error *err)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (slash) {
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    } else {
        snprintf(dir, sizeof dir, ".");
    }
    ls_result r = ls_scene_parse_in(*text, *size, dir[0] ? dir : "/", out, err);
    if (r != LS_OK || out->mesh_count == 0) {
        return r;
    }
    size_t need = ls_scene_write(out, NULL, 0);
    char *inline_text = malloc(need + 1);
    if (!inline_text) {
        ls_scene_free(out);
        return ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory writing the scene inline");
    }
    ls_scene_write(out, inline_text, need + 1);
    free(*text);
    *text = inline_text;
    *size = need;
    return LS_OK;
}
