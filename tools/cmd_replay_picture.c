// SPDX-License-Identifier: MIT
// `lockstep replay diff A B --png FILE`: the desync picture. Both recordings
// are re-simulated from their own inputs (stepping only, never from a
// keyframe, so a tampered input shows) to the state after the first divergent
// tick, drawn side by side (A left, B right) by the software rasteriser of
// tools/render/, with the bodies whose state differs in magenta and labelled
// with their 1-based ids, the others faded. Display code: float is fine here.
#include "render/render.h"
#include "replay_glue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool replay_picture_parse(const cli_command *cmd, replay_picture_opts *o)
{
    if (!o->png) {
        const char *stray = o->size     ? "--size"
                            : o->camera ? "--camera"
                            : o->ahead  ? "--ahead"
                                        : NULL;
        if (stray) {
            cli_usage_error(cmd, "%s needs --png FILE", stray);
            return false;
        }
        return true;
    }
    size_t len = strlen(o->png);
    if (len < 5 ||
        (strcmp(o->png + len - 4, ".png") != 0 && strcmp(o->png + len - 4, ".ppm") != 0)) {
        cli_usage_error(cmd, "--png wants a file name ending in .png (or .ppm) (got '%s')", o->png);
        return false;
    }
    o->width = 480, o->height = 360;
    if (o->size) {
        unsigned w, h;
        char tail;
        if (sscanf(o->size, "%ux%u%c", &w, &h, &tail) != 2 || o->size[0] == '-' || w < 16 ||
            h < 16 || w > 2048 || h > 2048) {
            cli_usage_error(cmd, "--size wants WxH with 16..2048 each (got '%s')", o->size);
            return false;
        }
        o->width = (int)w, o->height = (int)h;
    }
    if (!o->camera) {
        o->camera = "auto";
    }
    ls_scene empty;
    memset(&empty, 0, sizeof empty);
    rn_camera cam;
    float extent;
    if (!rn_camera_for(o->camera, &empty, 1.0f, &cam, &extent)) {
        cli_usage_error(cmd,
                        "--camera wants auto, front, side, top or EX,EY,EZ,TX,TY,TZ[,FOV] "
                        "(got '%s')",
                        o->camera);
        return false;
    }
    o->ticks_after = 0;
    if (o->ahead) {
        uint64_t v;
        if (!cli_parse_u64(cmd, "--ahead", o->ahead, 0, 100000, &v)) {
            return false;
        }
        o->ticks_after = (uint32_t)v;
    }
    return true;
}

static bool vec_eq(ls_vec3 a, ls_vec3 b)
{
    return a.x == b.x && a.y == b.y && a.z == b.z;
}

// Body i differs in pose, velocity or sleep between the two states.
static bool body_differs(const ls_world *a, const ls_world *b, uint32_t i)
{
    ls_body_id ia = ls_world_body_at(a, i), ib = ls_world_body_at(b, i);
    ls_quat qa = ls_body_orientation(a, ia), qb = ls_body_orientation(b, ib);
    return !vec_eq(ls_body_position(a, ia), ls_body_position(b, ib)) || qa.x != qb.x ||
           qa.y != qb.y || qa.z != qb.z || qa.w != qb.w ||
           !vec_eq(ls_body_linear_velocity(a, ia), ls_body_linear_velocity(b, ib)) ||
           !vec_eq(ls_body_angular_velocity(a, ia), ls_body_angular_velocity(b, ib)) ||
           ls_body_is_asleep(a, ia) != ls_body_is_asleep(b, ib);
}

// Copy canvas `from` into `rgb` (row width `stride` pixels) at column x0.
static void blit(uint8_t *rgb, int stride, const rn_canvas *from, int x0)
{
    for (int y = 0; y < from->height; y++) {
        memcpy(&rgb[((size_t)y * (size_t)stride + (size_t)x0) * 3],
               &from->rgb[(size_t)y * (size_t)from->width * 3], (size_t)from->width * 3);
    }
}

int replay_picture_worlds(const char *prog, const ls_scene *scene, ls_world *const w[2],
                          uint32_t shown, const char *sides, const replay_picture_opts *o,
                          json_out *j)
{
    char msg[512];
    int status = CLI_EXIT_ERROR;
    rn_canvas half[2] = {{0}, {0}};
    bool *lit = NULL;
    uint8_t *rgb = NULL;
    const int gap = 4;
    uint32_t n = scene->body_count;
    if (ls_world_body_count(w[0]) != n || ls_world_body_count(w[1]) != n) {
        fprintf(stderr, "%s: --png: the two states do not hold the scene's %u bodies\n", prog, n);
        return CLI_EXIT_ERROR;
    }
    lit = calloc(n ? n : 1, sizeof *lit);
    rgb = malloc((size_t)(2 * o->width + gap) * (size_t)o->height * 3);
    if (!lit || !rgb || !rn_canvas_init(&half[0], o->width, o->height, 2) ||
        !rn_canvas_init(&half[1], o->width, o->height, 2)) {
        fprintf(stderr, "%s: out of memory\n", prog);
        goto done;
    }
    uint32_t differing = 0;
    for (uint32_t i = 0; i < n; i++) {
        lit[i] = body_differs(w[0], w[1], i);
        differing += lit[i];
    }
    rn_camera cam;
    float extent;
    rn_camera_for(o->camera, scene, (float)o->width / (float)o->height, &cam, &extent);
    rn_draw_opts d = {false, false, lit};
    for (int k = 0; k < 2; k++) {
        // What rn_draw_source reads of a source: the scene and the world.
        rn_source src;
        memset(&src, 0, sizeof src);
        src.scene = *scene;
        src.world = w[k];
        src.tick = shown + 1;
        if (!rn_draw_source(&src, &half[k], &cam, extent, &d, msg, sizeof msg)) {
            fprintf(stderr, "%s: %s\n", prog, msg);
            goto done;
        }
        rn_label(&half[k], 24.0f, 12.0f, shown);
    }
    memset(rgb, 40, (size_t)(2 * o->width + gap) * (size_t)o->height * 3);
    blit(rgb, 2 * o->width + gap, &half[0], 0);
    blit(rgb, 2 * o->width + gap, &half[1], o->width + gap);
    rn_canvas out = {0};
    out.width = 2 * o->width + gap, out.height = o->height, out.rgb = rgb;
    if (!rn_write_image(&out, o->png, msg, sizeof msg)) {
        fprintf(stderr, "%s: %s\n", prog, msg);
        goto done;
    }
    if (j) {
        json_key(j, "picture"), json_object_begin(j);
        json_key(j, "path"), json_str(j, o->png);
        json_key(j, "tick"), json_u64(j, shown);
        json_key(j, "differing_bodies"), json_array_begin(j);
        for (uint32_t i = 0; i < n; i++) {
            if (lit[i]) {
                json_u64(j, i + 1);
            }
        }
        json_array_end(j);
        json_key(j, "hash");
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)rn_canvas_hash(&out));
        json_str(j, hex);
        json_object_end(j);
    } else {
        printf("wrote %s (%s after tick %u, %dx%d, bodies differing: %u", o->png, sides, shown,
               out.width, out.height, differing);
        const char *sep = " =";
        for (uint32_t i = 0; i < n; i++) {
            if (lit[i]) {
                printf("%s %u", sep, i + 1);
                sep = ",";
            }
        }
        printf("; hash %016llx)\n", (unsigned long long)rn_canvas_hash(&out));
        if (differing == 0) {
            printf("note: %s have the same bodies after tick %u\n", sides, shown);
        }
    }
    status = CLI_EXIT_OK;
done:
    rn_canvas_free(&half[0]);
    rn_canvas_free(&half[1]);
    free(lit);
    free(rgb);
    return status;
}

int replay_picture_write(const char *prog, const char *const paths[2], uint32_t tick,
                         const replay_picture_opts *o, json_out *j)
{
    char msg[512];
    rn_source src[2];
    int opened = 0, status = CLI_EXIT_ERROR;
    // The state after the divergent tick (index `tick`: tick + 1 ticks run), or later.
    uint32_t target = tick + 1 + o->ticks_after;
    for (; opened < 2; opened++) {
        if (!rn_source_open_file(&src[opened], paths[opened], msg, sizeof msg)) {
            fprintf(stderr, "%s: %s: %s\n", prog, paths[opened], msg);
            goto done;
        }
    }
    for (int k = 0; k < 2; k++) {
        if (target > src[k].ticks) {
            fprintf(stderr, "%s: %s: --png: tick %u is past the recording's end (%u ticks)\n", prog,
                    paths[k], target - 1, src[k].ticks);
            goto done;
        }
        while (src[k].tick < target) {
            if (!rn_source_step(&src[k])) {
                fprintf(stderr, "%s: %s: cannot read tick %u\n", prog, paths[k], src[k].tick);
                goto done;
            }
        }
    }
    if (src[0].scene.body_count != src[1].scene.body_count) {
        fprintf(stderr, "%s: --png: A and B do not play the same scene (%u and %u bodies)\n", prog,
                src[0].scene.body_count, src[1].scene.body_count);
        goto done;
    }
    ls_world *const w[2] = {src[0].world, src[1].world};
    status = replay_picture_worlds(prog, &src[0].scene, w, target - 1, "A | B", o, j);
done:
    for (int k = 0; k < opened; k++) {
        rn_source_close(&src[k]);
    }
    return status;
}
