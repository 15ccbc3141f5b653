// SPDX-License-Identifier: MIT
// `make bench-cloth`: the Verlet cloth row (issue 14). One cloth description
// in doubles, read from OUR scene file (the `cloth` statement, SPEC.md §14)
// so every engine builds the same grid, pins, sticks and sphere; one driver
// that times every engine and measures the result the same way.
// Benchmark tooling only: floating point is fine here, never in the library.
#ifndef LS_BENCH_CLOTH_H
#define LS_BENCH_CLOTH_H

#include "bench.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Stick kinds of the cloth grid (the builder's three families).
enum { BENCH_STICK_STRUCTURAL = 0, BENCH_STICK_SHEAR = 1, BENCH_STICK_BEND = 2 };

/// A cloth as every engine sees it. Particle (i, j), i < nx along the cloth's
/// first edge, j < ny along its second, is index j * nx + i in every array
/// (Bullet's CreatePatch uses the same order).
typedef struct bench_cloth {
    bench_scene rigid;     ///< the scene's world settings and rigid bodies (bench_scene_load)
    uint32_t nx, ny;       ///< particles along each edge
    uint32_t count;        ///< nx * ny
    double *x0;            ///< 3 per particle: initial position, m
    double *inv_mass;      ///< per particle, 1/kg (0 = pinned)
    double particle_mass;  ///< kg of each free particle
    double radius;         ///< particle collision radius, m
    uint32_t *sticks;      ///< 2 particle indices per stick
    double *rest;          ///< rest length of each stick, m
    int *stick_kind;       ///< BENCH_STICK_* of each stick
    uint32_t stick_count;  ///< sticks
    double bend_stiffness; ///< stiffness of the bend sticks (the others: 1)
    int iterations;        ///< relaxation iterations per tick
    int approx;            ///< 1: sqrt-free sticks (Jakobsen; Bullet's links), 0: exact
    double damping;        ///< fraction of velocity removed per tick (0 = none)
    double friction;       ///< particle friction coefficient
    int has_sphere;        ///< the scene has a static sphere (the obstacle)
    double sphere[3];      ///< its centre, m
    double sphere_radius;  ///< its radius, m
    int tear;              ///< sticks may break (the row is not comparable then)
} bench_cloth;

/// Particle and stick counts as an engine built them (a check, not a setting).
typedef struct bench_cloth_counts {
    uint32_t particles; ///< particles (Bullet: nodes)
    uint32_t sticks;    ///< sticks (Bullet: links)
} bench_cloth_counts;

/// One engine behind the cloth interface.
typedef struct bench_cloth_engine {
    const char *name;      ///< "ours", "bullet"
    const char *version;   ///< version text for the output
    const char *precision; ///< "Q16.16", "float"
    uint32_t max_threads;  ///< most `--threads` it takes (peers: 1)
    /// Build the scene; NULL and a message on failure.
    void *(*create)(const bench_cloth *c, char *err, size_t err_size);
    /// One tick of c->rigid.dt.
    void (*step)(void *world);
    /// Every particle's position, 3 doubles each, in the cloth's index order.
    void (*positions)(void *world, double *xyz);
    /// What the engine built.
    bench_cloth_counts (*counts)(void *world);
    /// Free everything.
    void (*destroy)(void *world);
} bench_cloth_engine;

/// Load a scene with exactly one `cloth` statement (uses our parser); 0 on success.
int bench_cloth_load(const char *path, bench_cloth *out);
/// Free a loaded cloth.
void bench_cloth_free(bench_cloth *c);
/// Driver: `NAME SCENE [--ticks N] [--repeats R] [--threads N] [--csv FILE] [--quiet]`.
int bench_cloth_main(const bench_cloth_engine *e, int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
