// SPDX-License-Identifier: MIT
// build/bench_cloth: our Verlet cloth behind the cloth interface. The world is
// built by ls_scene_instantiate from the same parsed file Bullet's side
// converts; `--threads N` sets the world's worker count (the same bits for
// any N); BENCH_CLOTH_SIMD=scalar (or avx2, auto: the default) picks the
// vector path of the stick and contact kernels (the same bits for every path).
#include "cloth.h"

#include "ls/particles.h"
#include "ls/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ours {
    ls_world *w;
    ls_particle_system_id cloth;
} ours;

static void *ours_create(const bench_cloth *c, char *err, size_t err_size)
{
    ours *o = calloc(1, sizeof *o);
    if (!o) {
        return NULL;
    }
    ls_scene *sc = c->rigid.ls;
    sc->world.worker_count = c->rigid.threads; // results do not depend on it, only speed
    const char *simd = getenv("BENCH_CLOTH_SIMD");
    if (simd) {
        sc->world.simd = strcmp(simd, "scalar") == 0 ? LS_SIMD_SCALAR
                         : strcmp(simd, "avx2") == 0 ? LS_SIMD_AVX2
                                                     : LS_SIMD_AUTO;
    }
    ls_error e;
    o->w = ls_scene_instantiate(sc, &e);
    if (!o->w) {
        snprintf(err, err_size, "%s", e.message);
        free(o);
        return NULL;
    }
    o->cloth = ls_world_particle_system_at(o->w, 0);
    if (ls_particle_count(o->w, o->cloth) != c->count) {
        snprintf(err, err_size, "the world's cloth has %u of the scene's %u particles",
                 ls_particle_count(o->w, o->cloth), c->count);
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

static void ours_positions(void *h, double *xyz)
{
    ours *o = h;
    uint32_t n = 0;
    const ls_vec3 *p = ls_particle_positions(o->w, o->cloth, &n);
    for (uint32_t k = 0; k < n; k++) {
        *xyz++ = (double)p[k].x / 65536.0;
        *xyz++ = (double)p[k].y / 65536.0;
        *xyz++ = (double)p[k].z / 65536.0;
    }
}

static bench_cloth_counts ours_counts(void *h)
{
    ours *o = h;
    bench_cloth_counts n = {ls_particle_count(o->w, o->cloth),
                            ls_particle_constraint_count(o->w, o->cloth)};
    return n;
}

static void ours_destroy(void *h)
{
    ls_world_destroy(((ours *)h)->w);
    free(h);
}

int main(int argc, char **argv)
{
    static const bench_cloth_engine e = {"ours",      "lockstep", "Q16.16",       64,
                                         ours_create, ours_step,  ours_positions, ours_counts,
                                         ours_destroy};
    return bench_cloth_main(&e, argc, argv);
}
