// SPDX-License-Identifier: MIT
// `make bench` physics harness: one scene description in doubles (converted
// from OUR scene files, so every engine builds the identical scene), an engine
// interface, and one driver that times every engine the same way.
// Benchmark tooling only: floating point is fine here, never in the library.
#ifndef LS_BENCH_H
#define LS_BENCH_H

#include "bench_clock.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Shape kinds (same values as ls_shape_type).
enum {
    BENCH_SPHERE = 0,
    BENCH_BOX = 1,
    BENCH_CAPSULE = 2,
    BENCH_PLANE = 3,
    BENCH_HULL = 4,
    BENCH_MESH = 5
};
/// Body kinds (same values as ls_body_type).
enum { BENCH_STATIC = 0, BENCH_KINEMATIC = 1, BENCH_DYNAMIC = 2 };

/// One shape of a body, every Q16.16 value converted with raw / 65536.0.
/// Its pose is given in the body's *peer frame*: for a dynamic body the
/// centre of mass and principal axes of inertia (what Bullet needs, and what
/// ODE needs for the origin); for a static body the body origin and
/// orientation. Hull and mesh data are read from our parsed shapes (ls_hull_*,
/// ls_mesh_*), in the shape's own frame; every array lives as long as the scene.
typedef struct bench_shape {
    int kind;                ///< BENCH_SPHERE / BOX / CAPSULE / PLANE / HULL / MESH
    double radius;           ///< sphere/capsule radius, m
    double half_height;      ///< capsule core half length (local Y), m
    double half[3];          ///< box half extents, m
    double normal[3];        ///< plane normal (solid side: dot(normal, x) <= plane_d)
    double plane_d;          ///< plane offset, m
    double pos[3];           ///< shape origin in the body's peer frame, m
    double quat[4];          ///< shape rotation in the body's peer frame, x y z w
    int identity;            ///< pos = 0 and quat = identity (no child transform needed)
    double friction;         ///< per-shape coefficient (pairs mix as sqrt(a*b))
    double restitution;      ///< per-shape (pairs take the larger)
    uint32_t vertex_count;   ///< hull/mesh vertices
    double *vertices;        ///< 3 per vertex, shape frame
    uint32_t face_count;     ///< hull faces
    uint32_t *face_sizes;    ///< vertices of each face
    uint32_t *face_indices;  ///< concatenated, counter-clockwise seen from outside
    uint32_t *polygons;      ///< ODE layout: per face its size then its indices
    double *planes;          ///< 4 per face: outward unit normal n and d, n.x = d on the face
    uint32_t triangle_count; ///< mesh triangles
    uint32_t *triangles;     ///< 3 indices each, counter-clockwise seen from outside
    uint32_t category;       ///< collision filter: pairs collide when (cat_a & mask_b) != 0
    uint32_t mask;           ///< and (cat_b & mask_a) != 0 (our rule; Bullet's too)
    uint32_t body;           ///< index of its body (file order)
} bench_shape;

/// One body: pose of its peer frame, mass properties and its shapes.
typedef struct bench_body {
    int type;             ///< BENCH_STATIC / BENCH_KINEMATIC / BENCH_DYNAMIC
    bench_shape *shapes;  ///< its shapes (a compound body has several)
    uint32_t shape_count; ///< >= 1
    double pos[3];        ///< peer-frame origin in the world: centre of mass (dynamic) or origin
    double quat[4];       ///< peer-frame orientation x, y, z, w (dynamic: principal axes)
    double principal[4];  ///< peer frame relative to our body frame: quat = ours * principal
    double vel[3];        ///< m/s (of the centre of mass)
    double angvel[3];     ///< rad/s
    double mass;          ///< kg, exactly the mass our engine computed (0 if not dynamic)
    double inertia[3];    ///< principal moments, kg m^2 (same density model as ours, in double)
    double lin_damp;      ///< fraction of velocity removed per second
    double ang_damp;      ///< same for angular velocity
    int allow_sleep;      ///< may sleep
} bench_body;

/// Joint kinds: the scene file's `joint` keywords (SPEC.md §14).
enum {
    BENCH_JOINT_BALL = 0,
    BENCH_JOINT_HINGE = 1,
    BENCH_JOINT_FIXED = 2,
    BENCH_JOINT_PRISMATIC = 3,
    BENCH_JOINT_DISTANCE = 4,
    BENCH_JOINT_CONE = 5
};

/// One joint as every engine sees it. Anchors and axes are world-space at
/// creation (the scene's values); the local anchors are in each body's peer
/// frame, for the joint-error measure. Angles in radians.
typedef struct bench_joint {
    int kind;                        ///< BENCH_JOINT_*
    uint32_t a, b;                   ///< body indices (file order)
    double anchor[3];                ///< world anchor (on both bodies; distance: on A)
    double anchor_b[3];              ///< distance: B's world anchor (others: = anchor)
    double axis[3];                  ///< unit world axis (hinge, prismatic, cone twist axis)
    double local_a[3], local_b[3];   ///< anchors in A's and B's peer frames
    double axis_a[3];                ///< axis in A's peer frame
    int enable_limit;                ///< hinge (rad) / prismatic (m) limits
    double lower, upper;             ///< limits
    int enable_motor;                ///< motor on (hinge, prismatic)
    double motor_speed;              ///< rad/s or m/s, of B relative to A about/along the axis
    double max_motor;                ///< N m or N
    int enable_spring;               ///< spring on (hinge, prismatic, distance)
    double spring_hertz;             ///< Hz
    double spring_damping;           ///< damping ratio
    double min_length, max_length;   ///< distance: allowed range, m
    double rest_length;              ///< distance: anchors' distance at creation, m
    double cone;                     ///< cone: swing half-angle, rad
    int enable_twist;                ///< cone: twist limits given
    double twist_lower, twist_upper; ///< cone: twist range, rad
    double break_force;              ///< N, 0 = unbreakable
    double break_torque;             ///< N m, 0 = unbreakable
    int collide;                     ///< connected bodies collide
    double eff_inertia;              ///< 1 / (a.IA^-1.a + a.IB^-1.a) at creation (peer springs)
    double eff_mass;                 ///< 1 / (1/mA + 1/mB) (peer linear springs)
} bench_joint;

/// A scene as every engine sees it.
typedef struct bench_scene {
    char name[64];             ///< file name without directory and extension
    const char *path;          ///< scene file
    double gravity[3];         ///< m/s^2
    double dt;                 ///< s: our exact tick (1092/65536 at 60 Hz), used by all engines
    int substeps;              ///< our sub-steps per tick
    int velocity_iterations;   ///< our solve iterations per sub-step
    int position_iterations;   ///< our relax iterations per sub-step
    int peer_iterations;       ///< peers' solver iterations per tick: substeps x (solve + relax)
    double sleep_linear;       ///< m/s
    double sleep_angular;      ///< rad/s
    double sleep_time;         ///< s
    double contact_margin;     ///< m
    double linear_slop;        ///< m
    double peer_erp;           ///< peers' position correction: ERP 0.2 (a stated constant)
    double restitution_thresh; ///< m/s
    uint32_t ticks;            ///< ticks the scene runs
    uint32_t max_bodies;       ///< our world capacity (line `world ... max_bodies`)
    uint32_t max_contacts;     ///< our contact capacity
    bench_body *bodies;        ///< file order
    uint32_t count;            ///< bodies
    uint32_t dynamic_count;    ///< dynamic bodies
    bench_joint *joints;       ///< file order
    uint32_t joint_count;      ///< joints
    uint64_t *no_collide; ///< sorted body pairs (lo << 32 | hi) joined by a joint without `collide`
    uint32_t no_collide_count; ///< number of `no_collide`
    uint32_t threads;          ///< `--threads N`: our worker count (peers: 1 only)
    void *ls;                  ///< the parsed ls_scene (our engine builds from it)
} bench_scene;

/// Fairness numbers at the end of a run.
typedef struct bench_stats {
    double max_penetration; ///< deepest contact of the last collision pass, m
    uint32_t asleep;        ///< dynamic bodies asleep / deactivated / disabled
    uint32_t contacts;      ///< touching pairs (manifolds) of the last step
    uint32_t broken;        ///< joints broken so far
} bench_stats;

/// One physics engine behind a common interface.
typedef struct bench_engine {
    const char *name;      ///< "ours", "bullet", "ode"
    const char *version;   ///< version text for the output
    const char *precision; ///< "Q16.16", "float", "double"
    uint32_t max_threads;  ///< most `--threads` it takes (peers: 1)
    /// Build the scene; NULL and a message on failure.
    void *(*create)(const bench_scene *s, char *err, size_t err_size);
    /// One tick of s->dt.
    void (*step)(void *world);
    /// Pose of every body's peer frame in file order, 7 doubles each:
    /// x y z (centre of mass of a dynamic body), then quaternion x y z w.
    void (*poses)(void *world, double *pose);
    /// Fairness numbers of the last step.
    bench_stats (*stats)(void *world);
    /// Free everything.
    void (*destroy)(void *world);
} bench_engine;

/// Load and convert a scene file (uses our parser); 0 on success, else prints why.
/// Dynamic bodies get their centre of mass and principal axes computed in
/// double from the same shapes and densities as ours (checked against the
/// centre of mass our engine computed), the mass scaled to exactly ours.
int bench_scene_load(const char *path, bench_scene *out);
/// World pose of a shape of a body: p = body.pos + R(body.quat) shape.pos, q = body.quat *
/// shape.quat.
void bench_shape_world_pose(const bench_body *b, const bench_shape *sh, double pos[3],
                            double quat[4]);
/// Quaternion product a * b (x, y, z, w).
void bench_quat_mul(const double a[4], const double b[4], double out[4]);
/// Rotate v by the unit quaternion q.
void bench_quat_rotate(const double q[4], const double v[3], double out[3]);
/// Free a loaded scene.
void bench_scene_free(bench_scene *s);
/// True when the joint of bodies a and b keeps them from colliding.
int bench_no_collide(const bench_scene *s, uint32_t a, uint32_t b);
/// Build an orthonormal right-handed basis (columns c0 c1 c2, row-major m) whose
/// column `primary` (0 = X, 2 = Z) is the unit vector e.
void bench_basis(const double e[3], int primary, double m[3][3]);
/// Quaternion (x y z w) of a proper rotation matrix (row-major).
void bench_mat_to_quat(double m[3][3], double q[4]);
/// World point of a local point of a peer frame given as a 7-double pose.
void bench_pose_point(const double *pose, const double local[3], double out[3]);
/// Driver shared by every engine binary:
/// `NAME SCENE... [--ticks N] [--repeats R] [--threads N] [--csv FILE] [--quiet]`.
int bench_engine_main(const bench_engine *e, int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
