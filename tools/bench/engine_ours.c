// SPDX-License-Identifier: MIT
// build/bench_physics: our fixed-point engine behind the bench interface. The
// world is built by ls_scene_instantiate from the same parsed file the peers
// convert, so the scene is identical by construction.
#include "bench.h"
#include "ls/scene.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct ours {
    ls_world *w;
    uint32_t count;
} ours;

static void *ours_create(const bench_scene *s, char *err, size_t err_size)
{
    ours *o = calloc(1, sizeof *o);
    if (!o) {
        return NULL;
    }
    ls_error e;
    o->w = ls_scene_instantiate(s->ls, &e);
    if (!o->w) {
        snprintf(err, err_size, "%s", e.message);
    }
    o->count = s->count;
    if (!o->w) {
        free(o);
        return NULL;
    }
    return o;
}

static void ours_step(void *h)
{
    ls_world_step(((ours *)h)->w);
}

static void ours_positions(void *h, double *xyz)
{
    ours *o = h;
    for (uint32_t i = 0; i < o->count; i++) {
        ls_body_id id = ls_world_body_at(o->w, i);
        if (ls_body_type_of(o->w, id) != LS_BODY_DYNAMIC) {
            continue;
        }
        ls_vec3 p = ls_body_position(o->w, id);
        *xyz++ = (double)p.x / 65536.0;
        *xyz++ = (double)p.y / 65536.0;
        *xyz++ = (double)p.z / 65536.0;
    }
}

static bench_stats ours_stats(void *h)
{
    ls_step_info info = ls_world_info(((ours *)h)->w);
    bench_stats st = {(double)info.max_penetration / 65536.0, info.asleep_bodies, info.contacts};
    return st;
}

static void ours_destroy(void *h)
{
    ls_world_destroy(((ours *)h)->w);
    free(h);
}

int main(int argc, char **argv)
{
    static const bench_engine e = {"ours",    "lockstep",     "Q16.16",   ours_create,
                                   ours_step, ours_positions, ours_stats, ours_destroy};
    return bench_engine_main(&e, argc, argv);
}
