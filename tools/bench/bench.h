// SPDX-License-Identifier: MIT
// `make bench` physics harness: one scene description in doubles (converted
// from OUR scene files, so every engine builds the identical scene), an engine
// interface, and one driver that times every engine the same way.
// Benchmark tooling only: floating point is fine here, never in the library.
#ifndef LS_BENCH_H
#define LS_BENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Shape kinds (same values as ls_shape_type).
enum { BENCH_SPHERE = 0, BENCH_BOX = 1, BENCH_CAPSULE = 2, BENCH_PLANE = 3 };
/// Body kinds (same values as ls_body_type).
enum { BENCH_STATIC = 0, BENCH_KINEMATIC = 1, BENCH_DYNAMIC = 2 };

/// One body, every Q16.16 value converted with raw / 65536.0.
typedef struct bench_body {
    int type;           ///< BENCH_STATIC / BENCH_KINEMATIC / BENCH_DYNAMIC
    int shape;          ///< BENCH_SPHERE / BOX / CAPSULE / PLANE
    double radius;      ///< sphere/capsule radius, m
    double half_height; ///< capsule core half length (local Y), m
    double half[3];     ///< box half extents, m
    double normal[3];   ///< plane normal (solid side: dot(normal, x) <= plane_d)
    double plane_d;     ///< plane offset, m
    double pos[3];      ///< centre of mass, m
    double quat[4];     ///< orientation x, y, z, w
    double vel[3];      ///< m/s
    double angvel[3];   ///< rad/s
    double mass;        ///< kg, exactly the mass our engine computed (0 if not dynamic)
    double friction;    ///< per-shape coefficient (pairs mix as sqrt(a*b))
    double restitution; ///< per-shape (pairs take the larger)
    double lin_damp;    ///< fraction of velocity removed per second
    double ang_damp;    ///< same for angular velocity
    int allow_sleep;    ///< may sleep
} bench_body;

/// A scene as every engine sees it.
typedef struct bench_scene {
    char name[64];             ///< file name without directory and extension
    const char *path;          ///< scene file
    double gravity[3];         ///< m/s^2
    double dt;                 ///< s: our exact tick (1092/65536 at 60 Hz), used by all engines
    int velocity_iterations;   ///< solver iterations (all engines)
    int position_iterations;   ///< our split-impulse iterations (peers: see tools/bench/README.md)
    double sleep_linear;       ///< m/s
    double sleep_angular;      ///< rad/s
    double sleep_time;         ///< s
    double contact_margin;     ///< m
    double linear_slop;        ///< m
    double baumgarte;          ///< 0..1
    double restitution_thresh; ///< m/s
    uint32_t ticks;            ///< ticks the scene runs
    uint32_t max_bodies;       ///< our world capacity (line `world ... max_bodies`)
    uint32_t max_contacts;     ///< our contact capacity
    bench_body *bodies;        ///< file order
    uint32_t count;            ///< bodies
    uint32_t dynamic_count;    ///< dynamic bodies
    void *ls;                  ///< the parsed ls_scene (our engine builds from it)
} bench_scene;

/// Fairness numbers at the end of a run.
typedef struct bench_stats {
    double max_penetration; ///< deepest contact of the last collision pass, m
    uint32_t asleep;        ///< dynamic bodies asleep / deactivated / disabled
    uint32_t contacts;      ///< touching pairs (manifolds) of the last step
} bench_stats;

/// One physics engine behind a common interface.
typedef struct bench_engine {
    const char *name;      ///< "ours", "bullet", "ode"
    const char *version;   ///< version text for the output
    const char *precision; ///< "Q16.16", "float", "double"
    /// Build the scene; NULL and a message on failure.
    void *(*create)(const bench_scene *s, char *err, size_t err_size);
    /// One tick of s->dt.
    void (*step)(void *world);
    /// Positions of the dynamic bodies in file order (3 doubles each).
    void (*positions)(void *world, double *xyz);
    /// Fairness numbers of the last step.
    bench_stats (*stats)(void *world);
    /// Free everything.
    void (*destroy)(void *world);
} bench_engine;

/// Load and convert a scene file (uses our parser); 0 on success, else prints why.
int bench_scene_load(const char *path, bench_scene *out);
/// Free a loaded scene.
void bench_scene_free(bench_scene *s);
/// Monotonic clock in nanoseconds.
double bench_now_ns(void);
/// Median of n values (sorts the array).
double bench_median(double *v, size_t n);
/// Driver shared by every engine binary: `NAME SCENE... [--ticks N] [--repeats R] [--csv FILE]`.
int bench_engine_main(const bench_engine *e, int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
