// SPDX-License-Identifier: MIT
// The replay pictures (`replay diff --png`, `replay verify --png`) in a CLI
// built without the rasteriser and libpng (LS_CLI_CORE, the Windows build of
// mk/windows.mk): the options are refused with a usage error naming why, and
// nothing else changes. tools/cmd_replay_picture.c is the real one.
#include "../replay_glue.h"

#include <stdio.h>

bool replay_picture_parse(const cli_command *cmd, replay_picture_opts *o)
{
    const char *given = o->png      ? "--png"
                        : o->size   ? "--size"
                        : o->camera ? "--camera"
                        : o->ahead  ? "--ahead"
                                    : NULL;
    if (given) {
        cli_usage_error(cmd, "%s: this build of lockstep draws no pictures (no libpng)", given);
        return false;
    }
    return true;
}

int replay_picture_write(const char *prog, const char *const paths[2], uint32_t tick,
                         const replay_picture_opts *o, json_out *j)
{
    (void)paths, (void)tick, (void)o, (void)j;
    fprintf(stderr, "%s: this build of lockstep draws no pictures (no libpng)\n", prog);
    return CLI_EXIT_USAGE;
}

int replay_picture_worlds(const char *prog, const ls_scene *scene, ls_world *const w[2],
                          uint32_t shown, const char *sides, const replay_picture_opts *o,
                          json_out *j)
{
    (void)scene, (void)w, (void)shown, (void)sides, (void)o, (void)j;
    fprintf(stderr, "%s: this build of lockstep draws no pictures (no libpng)\n", prog);
    return CLI_EXIT_USAGE;
}
