// SPDX-License-Identifier: MIT
// `make bench-box3d` (section 9): our engine against Box3D (Erin Catto's
// float engine, MIT, ../shared/anchors/box3d) on Box3D's own benchmark scenes.
// One scene description in doubles (b3b_scene: what both engines build), an
// engine interface, and one driver that times both engines Box3D's way
// (benchmark/main.c: one untimed warm-up step, then steps 1..N-1 timed) and
// measures the state they end in. The Box3D side builds its named scenes with
// Box3D's own Create functions and checks them against the description.
// Benchmark tooling only: floating point is fine here, never in the library.
#ifndef LS_BENCH_BOX3D_H
#define LS_BENCH_BOX3D_H

#include "bench_clock.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Shape of a described body.
enum { B3B_BOX = 0, B3B_SPHERE = 1, B3B_HULL = 2 };

/// One body of a described scene (Box3D's numbers).
typedef struct b3b_body {
    int dynamic;             ///< 1 dynamic, 0 static
    int shape;               ///< B3B_BOX / SPHERE / HULL (the scene's one hull)
    double pos[3];           ///< body origin, m
    double yaw;              ///< rotation about +y, rad
    double half[3];          ///< box half extents, m
    double radius;           ///< sphere radius, m
    double density;          ///< Box3D's density, kg/m^3
    uint32_t category, mask; ///< collision filter (Box3D: categoryBits, maskBits)
    int top;                 ///< the top box of a pyramid (resting-quality measures)
} b3b_body;

/// A spherical joint (Box3D) / ball joint (ours) at a world anchor.
typedef struct b3b_joint {
    uint32_t a, b;    ///< body indices
    double anchor[3]; ///< world anchor at creation, m
} b3b_joint;

/// A scene as both engines build it.
typedef struct b3b_scene {
    char name[32];         ///< large_pyramid, many_pyramids, joint_grid, convex_pile, rain,
                           ///< pyramid_N, pile_N
    uint32_t steps;        ///< steps Box3D's benchmark runs
    int sleep;             ///< bodies may sleep
    int ground;            ///< Box3D: a static box of ground_half at (0, -1, 0), top at y = 0
    double ground_half[3]; ///< its half extents (ours: the plane y <= 0 when any exceeds 64 m)
    double bin_half;       ///< > 0: walls with inner faces at |x| = |z| = bin_half (rollback pile)
    b3b_body *bodies;      ///< description order = creation order
    uint32_t body_count;   ///< bodies
    b3b_joint *joints;     ///< spherical joints
    uint32_t joint_count;  ///< joints
    double hull[64][3];    ///< convex_pile: the hull's input points (Box3D's RNG)
    uint32_t hull_count;   ///< points
    double ours_density;   ///< > 0: our density for hull bodies (mass limit; see README)
    double sleep_extent;   ///< body size for our angular sleep threshold 0.05 / extent
    double rolling;        ///< rolling resistance lever arm, m (Box3D's rollingResistance)
    int rain;              ///< the rain scene: humans spawned while stepping (engine code)
    uint32_t tops;         ///< bodies with top set
} b3b_scene;

/// Build a scene by name; 0 on success, else -1 and a message.
int b3b_scene_build(const char *name, b3b_scene *s, char *err, size_t err_size);
/// The rollback pile of n boxes (see README "Rollback capacity").
int b3b_pile_build(uint32_t n, b3b_scene *s);
/// Free a scene's arrays.
void b3b_scene_free(b3b_scene *s);

/// Box3D's rain benchmark (shared/benchmarks.c, release build): a 10 x 10 grid
/// of 15 m cells, each a static body with a grid mesh and a torus mesh;
/// groups of 3 humans spawned 20 m up, one column of 10 groups at a time.
#define B3B_RAIN_GRID       10
#define B3B_RAIN_CELL       15.0
#define B3B_RAIN_GROUP_SIZE 3
#define B3B_BONES           14

/// The spawn schedule (StepRain): which column to (re)spawn before step `step`.
typedef struct b3b_rain_state {
    int column_count; ///< columns spawned so far
    int column_index; ///< next column to replace once all are spawned
} b3b_rain_state;
/// -1 if nothing happens before this step; else the column, and *replace = 1
/// when its groups are destroyed first.
int b3b_rain_tick(b3b_rain_state *r, uint32_t step, int *replace);
/// Spawn position of group (row, column): its first human; the others are
/// 0.75 m further along +x.
void b3b_rain_origin(int row, int column, double out[3]);

/// One bone of Box3D's human (shared/human.c) spawned at the origin, read
/// back through Box3D's API (box3d_human.c): nothing of it is typed in here.
typedef struct b3b_bone {
    double pos[3], quat[4];      ///< body origin and rotation (x y z w), spawn at the origin
    double c1[3], c2[3], radius; ///< capsule in the body frame
    double density, friction;    ///< material
    double rolling;              ///< rolling resistance, m
    int filtered;                ///< Box3D's negative group: no collision within the group
    int filter_joint;            ///< one of the two bones of the human's filter joint
    int parent;                  ///< parent bone, -1 for the pelvis
    int revolute;                ///< joint to the parent: 1 revolute, 0 spherical
    double anchor[3], axis[3];   ///< world anchor (frame A origin) and frame A's z axis
    double lower, upper;         ///< revolute angle / spherical twist limits, rad, as Box3D's
    double cone;                 ///< spherical cone (swing) limit, rad
    double angle0, swing0;       ///< Box3D's angle (twist) and swing at creation
    int spring;                  ///< spring enabled
    double hertz, damping;       ///< spring
    int motor;                   ///< motor enabled (speed 0: joint friction)
    double motor_speed;          ///< rad/s (revolute)
    double max_motor_torque;     ///< N m
} b3b_bone;

/// A triangle mesh (Box3D's b3MeshData read back).
typedef struct b3b_mesh {
    double *vertices;      ///< 3 per vertex
    uint32_t vertex_count; ///< vertices
    uint32_t *triangles;   ///< 3 indices each, Box3D's winding
    uint32_t triangle_count;
} b3b_mesh;

/// The rain template: the human's bones and the two meshes of a cell.
typedef struct b3b_rain_data {
    b3b_bone bones[B3B_BONES];
    b3b_mesh grid, torus;
    uint32_t joints; ///< Box3D joints per human (bones - 1 + filter joints)
} b3b_rain_data;
/// Build the template with Box3D's code (box3d_human.c); 0 on success.
int b3b_rain_template(b3b_rain_data *d, char *err, size_t err_size);
/// Free the template.
void b3b_rain_template_free(b3b_rain_data *d);

/// Options of both binaries.
typedef struct b3b_opts {
    const char *scene; ///< --scene NAME
    uint32_t threads;  ///< --threads N (workers)
    int substeps;      ///< --substeps N; 0 = the engine's default ("default")
    uint32_t steps;    ///< --steps N; 0 = the scene's
    const char *csv;   ///< --csv FILE (appended)
    int quiet;         ///< --quiet: no progress lines
    int rollback;      ///< --rollback: the rollback capacity search instead of a scene
} b3b_opts;

/// One live dynamic body: a key stable while it lives and its centre of mass.
typedef struct b3b_state {
    uint64_t key;
    double p[3];
} b3b_state;

/// An engine behind the driver.
typedef struct b3b_engine {
    const char *name;     ///< "ours" / "box3d"
    int default_substeps; ///< what --substeps default means
    /// Build the scene; NULL and a message on failure.
    void *(*create)(const b3b_scene *s, const b3b_opts *o, char *err, size_t err_size);
    /// The scene's per-step hook (rain spawns) then one step of 1/60 s.
    void (*step)(void *h, uint32_t index);
    /// Every live dynamic body (at most max); returns how many.
    uint32_t (*bodies)(void *h, b3b_state *out, uint32_t max);
    /// Centre of mass of each body with `top` set, in description order.
    void (*tops)(void *h, double *pos);
    /// Deepest contact of the last step, m (< 0: not measured).
    double (*max_penetration)(void *h);
    /// Bodies (static included) and joints now.
    uint32_t (*body_count)(void *h);
    uint32_t (*joint_count)(void *h);
    /// NULL, or a warning about the run (e.g. a capacity overflow).
    const char *(*warning)(void *h);
    void (*destroy)(void *h);
} b3b_engine;

/// The driver: `NAME --scene S [--threads N] [--substeps N|default] [--steps N]
/// [--csv FILE] [--quiet]`, `NAME --rollback ...`, `NAME --report FILE`.
int b3b_main(const b3b_engine *e, int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
