// SPDX-License-Identifier: MIT
// build/bench_physics: our fixed-point engine behind the bench interface. The
// world is built by ls_scene_instantiate from the same parsed file the peers
// convert, so the scene is identical by construction. `--threads N` sets the
// world's worker count (the results are the same bits for any N).
#include "bench.h"
#include "ls/joint.h"
#include "ls/scene.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct ours {
    ls_world *w;
    const bench_scene *s;
} ours;

static void *ours_create(const bench_scene *s, char *err, size_t err_size)
{
    ours *o = calloc(1, sizeof *o);
    if (!o) {
        return NULL;
    }
    ls_scene *sc = s->ls;
    sc->world.worker_count = s->threads; // results do not depend on it, only speed
    ls_error e;
    o->w = ls_scene_instantiate(sc, &e);
    o->s = s;
    if (!o->w) {
        snprintf(err, err_size, "%s", e.message);
        free(o);
        return NULL;
    }
    if (ls_world_joint_count(o->w) != s->joint_count) { // never time a scene without its joints
        snprintf(err, err_size, "the world has %u of the scene's %u joints",
                 ls_world_joint_count(o->w), s->joint_count);
        ls_world_destroy(o->w);
        free(o);
        return NULL;
    }
    return o;
}

static void ours_step(void *h)
{
    ls_world_step(((ours *)h)->w);
}

static void ours_poses(void *h, double *pose)
{
    ours *o = h;
    for (uint32_t i = 0; i < o->s->count; i++, pose += 7) {
        const bench_body *b = &o->s->bodies[i];
        if (b->type != BENCH_DYNAMIC) { // never moves
            pose[0] = b->pos[0], pose[1] = b->pos[1], pose[2] = b->pos[2];
            pose[3] = b->quat[0], pose[4] = b->quat[1], pose[5] = b->quat[2], pose[6] = b->quat[3];
            continue;
        }
        ls_body_id id = ls_world_body_at(o->w, i);
        ls_vec3 p = ls_body_position(o->w, id); // centre of mass
        ls_quat q = ls_body_orientation(o->w, id);
        pose[0] = (double)p.x / 65536.0;
        pose[1] = (double)p.y / 65536.0;
        pose[2] = (double)p.z / 65536.0;
        // Peer frame = our body frame turned onto the principal axes.
        double qo[4] = {(double)q.x / 65536.0, (double)q.y / 65536.0, (double)q.z / 65536.0,
                        (double)q.w / 65536.0};
        bench_quat_mul(qo, b->principal, pose + 3);
    }
}

static bench_stats ours_stats(void *h)
{
    ls_step_info info = ls_world_info(((ours *)h)->w);
    bench_stats st = {(double)info.max_penetration / 65536.0, info.asleep_bodies, info.contacts, 0};
    return st;
}

static void ours_destroy(void *h)
{
    ls_world_destroy(((ours *)h)->w);
    free(h);
}

int main(int argc, char **argv)
{
    static const bench_engine e = {"ours",    "lockstep", "Q16.16",   64,          ours_create,
                                   ours_step, ours_poses, ours_stats, ours_destroy};
    return bench_engine_main(&e, argc, argv);
}
