// SPDX-License-Identifier: MIT
/// @file
/// The physics world: bodies of one or more shapes (compounds of up to
/// LS_BODY_MAX_SHAPES), joints, vehicles and particles, a fixed-tick step, events,
/// snapshots and the canonical checksum. All quantities are Q16.16 in SI units
/// (SPEC.md §5 gives the ranges, §11 the step pipeline).
#ifndef LS_WORLD_H
#define LS_WORLD_H

#include "ls/hull.h"
#include "ls/mesh.h"
#include "ls/quat.h"
#include "ls/rng.h"

LS_EXTERN_C_BEGIN

/// Opaque world. Worlds share nothing: two worlds may step on different threads.
typedef struct ls_world ls_world;

/// Body handle: 1-based slot index and generation. All-zero is the null id.
typedef struct ls_body_id {
    uint32_t index1;     ///< Slot + 1; 0 means null.
    uint32_t generation; ///< Incremented when the slot is reused.
} ls_body_id;

/// Particle system handle (ls/particles.h): 1-based slot index and generation.
/// All-zero is the null id.
typedef struct ls_particle_system_id {
    uint32_t index1;     ///< Slot + 1; 0 means null.
    uint32_t generation; ///< Incremented when the slot is reused.
} ls_particle_system_id;

/// Body motion type.
typedef enum ls_body_type {
    LS_BODY_STATIC = 0,    ///< Never moves; infinite mass.
    LS_BODY_KINEMATIC = 1, ///< Moves by its set velocity; infinite mass.
    LS_BODY_DYNAMIC = 2,   ///< Moved by gravity, forces and contacts.
} ls_body_type;

/// Shape handle: 1-based slot index and generation. All-zero is the null id.
typedef struct ls_shape_id {
    uint32_t index1;     ///< Slot + 1; 0 means null.
    uint32_t generation; ///< Incremented when the slot is reused.
} ls_shape_id;

/// Shape kind. The codes are part of the snapshot and scene formats.
typedef enum ls_shape_type {
    LS_SHAPE_SPHERE = 0,  ///< radius
    LS_SHAPE_BOX = 1,     ///< half_extents
    LS_SHAPE_CAPSULE = 2, ///< radius, half_height (segment along local Y)
    LS_SHAPE_PLANE = 3,   ///< static half-space dot(normal, x) <= plane_d
    LS_SHAPE_HULL = 4,    ///< convex hull (ls_hull)
    LS_SHAPE_MESH = 5,    ///< static triangle mesh (ls_mesh)
    LS_SHAPE_KIND_COUNT   ///< Number of shape kinds.
} ls_shape_type;

/// Shape definition: geometry, pose in the body, material and collision
/// filter. Start from ls_default_shape_def().
typedef struct ls_shape_def {
    ls_shape_type type;        ///< Kind of shape.
    ls_fx radius;              ///< Sphere/capsule radius, m (0.05..64).
    ls_fx half_height;         ///< Capsule core half length, m (0..64).
    ls_vec3 half_extents;      ///< Box half extents, m (each 0.05..64).
    ls_vec3 normal;            ///< Plane outward normal (normalised at creation).
    ls_fx plane_d;             ///< Plane offset along the normal, m.
    ls_fx friction;            ///< Coulomb coefficient (0..4); pairs use sqrt(a*b).
    ls_fx restitution;         ///< 0..1; pairs use the larger.
    ls_fx density;             ///< kg/m^3 (dynamic bodies), mass = density * volume.
    uint32_t category;         ///< Category bits of this shape.
    uint32_t mask;             ///< Categories this shape collides with.
    ls_vec3 local_position;    ///< Shape origin in the body frame (from the body origin), m.
    ls_quat local_orientation; ///< Shape rotation in the body frame (all zero = identity).
    const ls_hull *hull;       ///< LS_SHAPE_HULL: the hull (the world keeps its own copy).
    const ls_mesh *mesh;       ///< LS_SHAPE_MESH: the mesh (static bodies only; copied).
    uint32_t cookie;           ///< Set by ls_default_shape_def(); a def without it is refused.
} ls_shape_def;

/// Body definition. Start from ls_default_body_def().
typedef struct ls_body_def {
    ls_body_type type;        ///< Static, kinematic or dynamic.
    ls_vec3 position;         ///< Body origin, m (each component within +-2048); the
                              ///< centre of mass is there unless shapes are offset.
    ls_quat orientation;      ///< Unit quaternion (normalised at creation).
    ls_vec3 linear_velocity;  ///< m/s.
    ls_vec3 angular_velocity; ///< rad/s, world frame.
    ls_fx linear_damping;     ///< Fraction of velocity removed per second (0..1).
    ls_fx angular_damping;    ///< Fraction of angular velocity removed per second (0..1).
    bool allow_sleep;         ///< May this body fall asleep?
    bool awake;               ///< Start awake (true) or asleep.
    uint64_t user_data;       ///< Opaque to the engine; not part of the checksum.
    bool bullet;              ///< Continuous collision against dynamic bodies too (static always).
    ls_shape_def shape;       ///< The body's shape when shape_count is 0.
    const ls_shape_def *shapes; ///< Compound body: its shapes (at most LS_BODY_MAX_SHAPES).
    uint32_t shape_count;       ///< Number of `shapes`; 0 = the one shape `shape`.
    uint32_t cookie;            ///< Set by ls_default_body_def(); a def without it is refused.
} ls_body_def;

/// Most shapes one body may own.
#define LS_BODY_MAX_SHAPES 64

/// Work the library hands to a game's task system (ls_world_def.enqueue_task):
/// run items [start, end) as worker `worker` (< worker_count; two calls running
/// at the same time must have different workers). `task_data` is the library's.
typedef void ls_task_fn(uint32_t start, uint32_t end, uint32_t worker, void *task_data);
/// A game's task system: run `task` over [0, item_count) in ranges of at least
/// min_range items, each item exactly once, on up to worker_count threads, and
/// return a handle for finish_task, or NULL after running all of it already.
/// Results never depend on how the items are split (SPEC.md §11 "Threads").
typedef void *ls_enqueue_task_fn(ls_task_fn *task, uint32_t item_count, uint32_t min_range,
                                 void *task_data, void *task_context);
/// A game's task system: return when the task enqueue_task returned is done.
typedef void ls_finish_task_fn(void *task, void *task_context);

/// A game's clock for ls_world_profile: a monotonic time in nanoseconds (any
/// origin). The library reads no clock of its own (SPEC.md §11 "Profile").
typedef uint64_t ls_profile_clock_fn(void *profile_context);

/// Where the last ls_world_step spent its time, in nanoseconds of
/// ls_world_def.profile_clock (all zero without one). The stages follow each
/// other, so they add up to `step` (less the clock's own cost). Stages run on
/// every worker unless marked serial: with several workers a stage whose time
/// does not shrink is the one to look at. Never state: not in snapshots or
/// the checksum.
typedef struct ls_profile {
    uint64_t step;        ///< The whole ls_world_step.
    uint64_t proxies;     ///< Broad-phase boxes of the bodies that moved (serial).
    uint64_t vehicles;    ///< Ray-cast vehicles (serial).
    uint64_t pairs;       ///< Broad-phase sweep (in segments) and pair filter (serial).
    uint64_t narrow;      ///< Narrow phase: manifolds of the pairs.
    uint64_t contacts;    ///< Matching last tick's contacts, events, copies (mostly serial).
    uint64_t wake;        ///< Waking islands touched this tick (serial).
    uint64_t prepare;     ///< Solver states, colouring, contact and joint preparation.
    uint64_t substeps;    ///< Every sub-step: integrate, warm start, solve, relax.
    uint64_t restitution; ///< Restitution and storing the impulses.
    uint64_t finish;      ///< Poses and shape transforms.
    uint64_t continuous;  ///< Continuous collision.
    uint64_t particles;   ///< Particle systems.
    uint64_t sleep;       ///< Islands and sleep (serial).
} ls_profile;

/// Vector path of the constraint sweeps (ls_world_def.simd). Every path gives
/// the same bits (SPEC.md §11.4): the choice changes speed only.
typedef enum ls_simd {
    LS_SIMD_AUTO = 0,   ///< The fastest path this build and CPU have.
    LS_SIMD_SCALAR = 1, ///< The portable scalar reference.
    LS_SIMD_AVX2 = 2,   ///< x86 AVX2 (refused where the CPU or build has none).
    LS_SIMD_AVX512 = 3, ///< x86 AVX-512 F, VL, DQ, BW for the contact sweeps, AVX2
                        ///< elsewhere (refused where the CPU or build has none).
} ls_simd;

/// World definition. Start from ls_default_world_def().
typedef struct ls_world_def {
    ls_vec3 gravity;              ///< m/s^2, default (0, -9.81, 0).
    uint32_t tick_rate;           ///< Ticks per second: 30, 60 or 120.
    uint32_t substeps;            ///< Sub-steps per tick (1..16), default 8 (SPEC.md §11).
    uint32_t velocity_iterations; ///< Solve iterations per sub-step (1..64), default 1.
    uint32_t position_iterations; ///< Relax iterations per sub-step (0..64), default 1.
    uint32_t max_bodies;          ///< Capacity of bodies (fixed at creation).
    uint32_t max_contacts;        ///< Capacity of contact manifolds (fixed at creation).
    uint32_t max_shapes;          ///< Capacity of shapes; 0 = max_bodies (one each).
    ls_fx sleep_linear;           ///< Below this speed (m/s) a body may sleep.
    ls_fx sleep_angular;          ///< Below this angular speed (rad/s) a body may sleep.
    ls_fx sleep_time;             ///< Seconds of rest before an island sleeps.
    ls_fx contact_margin;         ///< Speculative contact distance, m.
    ls_fx linear_slop;            ///< Allowed penetration, m.
    ls_fx contact_hertz;          ///< Stiffness of contact position correction, Hz (default 100).
    ls_fx contact_damping_ratio;  ///< Damping ratio of contact correction (default 10).
    ls_fx joint_hertz;            ///< Stiffness of rigid joint rows, Hz (default 120).
    ls_fx joint_damping_ratio;    ///< Damping ratio of rigid joint rows (default 2).
    ls_fx max_push_velocity;      ///< Most speed position correction may add, m/s (default 3).
    ls_fx restitution_threshold;  ///< Closing speed (m/s) below which nothing bounces.
    ls_fx rolling_resistance;     ///< Lever arm (m) of rolling and twisting friction at 1-2 point
                                  ///< contacts.
    uint64_t seed;                ///< Seed of the world PRNG (in snapshots and checksum).
    uint32_t worker_count;        ///< Threads stepping the world, the caller included (1..64,
                                  ///< default 1). Results are the same bits for any count.
    ls_enqueue_task_fn *enqueue_task; ///< Optional (with finish_task): the game's task system
                                      ///< runs the parallel loops instead of the library's threads.
    ls_finish_task_fn *finish_task;   ///< Optional: waits for a task of enqueue_task.
    void *task_context;               ///< Passed to enqueue_task and finish_task.
    uint32_t max_joints;              ///< Capacity of joints (0..2^20, default 1024; ls/joint.h).
    uint32_t max_particle_systems;    ///< Capacity of particle systems (0..4096, default 16;
                                      ///< ls/particles.h).
    uint32_t max_particles; ///< Capacity of particles, all systems (0..2^22, default 4096).
    uint32_t max_particle_constraints; ///< Capacity of particle constraints, all systems
                                       ///< (0..2^24, default 16384).
    uint32_t max_vehicles;             ///< Capacity of ray-cast vehicles (0..1024, default 16;
                                       ///< ls/vehicle.h).
    ls_simd simd; ///< Vector path of the solver (default LS_SIMD_AUTO); not state, same bits.
    ls_profile_clock_fn *profile_clock; ///< Optional: times the stages (ls_world_profile).
    void *profile_context;              ///< Passed to profile_clock.
    uint32_t cookie; ///< Set by ls_default_world_def(); a def without it is refused.
} ls_world_def;

/// Contact begin/end event between two shapes (shape_a has the lower slot).
typedef struct ls_contact_event {
    ls_body_id a;        ///< Body of shape_a.
    ls_body_id b;        ///< Body of shape_b.
    ls_shape_id shape_a; ///< Lower-index shape.
    ls_shape_id shape_b; ///< Higher-index shape.
} ls_contact_event;

/// Events of the last step; arrays valid until the next step or destroy.
typedef struct ls_contact_events {
    const ls_contact_event *begin; ///< Pairs that started touching.
    uint32_t begin_count;          ///< Number of begin events.
    const ls_contact_event *end;   ///< Pairs that stopped touching.
    uint32_t end_count;            ///< Number of end events.
} ls_contact_events;

/// Step statistics and overflow report of the last step.
typedef struct ls_step_info {
    uint32_t tick;            ///< Ticks completed so far.
    uint32_t awake_bodies;    ///< Dynamic bodies awake after the step.
    uint32_t asleep_bodies;   ///< Dynamic bodies asleep after the step.
    uint32_t contacts;        ///< Touching manifolds.
    ls_fx max_penetration;    ///< Deepest contact before solving, m.
    uint32_t overflow_count;  ///< Saturations, range violations and contacts deeper than
                              ///< 0.1 m so far (0 is healthy).
    ls_body_id overflow_body; ///< First body that overflowed (null if none).
    uint32_t overflow_tick;   ///< Tick of that first overflow.
    bool capacity_exceeded;   ///< A pair or contact buffer was full this step.
    ls_particle_system_id overflow_system; ///< The first overflow's particle system, when it
                                           ///< was a particle's (null otherwise).
    uint32_t overflow_particle;            ///< That particle's index in its system.
    uint32_t contacts_recycled; ///< Contacts that kept their manifold this step (SPEC.md §11).
} ls_step_info;

/// Ray cast result.
typedef struct ls_ray_hit {
    ls_body_id body;   ///< Body hit (null when nothing).
    ls_shape_id shape; ///< Shape hit.
    ls_vec3 point;     ///< World hit point.
    ls_vec3 normal;    ///< Surface normal at the hit.
    ls_fx fraction;    ///< Fraction of the ray, 0..1.
} ls_ray_hit;

/// The default world definition (60 Hz, gravity -9.81, 8+3 iterations, 4096 bodies).
LS_API ls_world_def ls_default_world_def(void);
/// The default body definition: dynamic unit box of density 1000 at the origin.
LS_API ls_body_def ls_default_body_def(void);
/// The default shape definition: 1 m box, density 1000, friction 0.6, at the body origin.
LS_API ls_shape_def ls_default_shape_def(void);
/// dt for a tick rate as the exact raw constant of SPEC.md §5 (0 if unsupported).
LS_API ls_fx ls_tick_dt(uint32_t tick_rate);

/// Create a world. On error returns NULL and fills *err (may be NULL) naming the field.
LS_API ls_world *ls_world_create(const ls_world_def *def, ls_error *err);
/// Bytes ls_world_create allocates for this definition (all of a world's memory:
/// stepping never allocates). Lets a caller check a budget before creating.
LS_API size_t ls_world_memory_size(const ls_world_def *def);
/// Destroy a world and everything in it.
LS_API void ls_world_destroy(ls_world *w);
/// Advance one tick (SPEC.md §11). Never allocates.
LS_API void ls_world_step(ls_world *w);
/// The canonical checksum of the world state (SPEC.md §12).
LS_API uint64_t ls_world_checksum(const ls_world *w);
/// Statistics of the last step.
LS_API ls_step_info ls_world_info(const ls_world *w);
/// Where the last step spent its time (ls_profile; zeros without
/// ls_world_def.profile_clock).
LS_API ls_profile ls_world_profile(const ls_world *w);
/// Name of the vector path the solver runs ("scalar", "avx2", ...).
LS_API const char *ls_world_simd_name(const ls_world *w);
/// True when this build and CPU can run vector path `simd` (LS_SIMD_AUTO and
/// LS_SIMD_SCALAR always can).
LS_API bool ls_simd_available(ls_simd simd);
/// Contact begin/end events of the last step.
LS_API ls_contact_events ls_world_contact_events(const ls_world *w);
/// Ticks stepped so far.
LS_API uint32_t ls_world_tick(const ls_world *w);
/// The world's PRNG (part of the state: snapshots and checksum include it).
LS_API ls_rng *ls_world_rng(ls_world *w);

/// Number of game state words a world holds (SPEC.md §26.8).
#define LS_WORLD_GAME_WORDS 32
/// Set game state word `index` (< LS_WORLD_GAME_WORDS): game rules keep their
/// state (scores, timers) here so that snapshots, rollback, replays and the
/// checksum carry it with the physics. A world whose words were never set
/// saves and hashes exactly as before they existed.
LS_API ls_result ls_world_set_game_word(ls_world *w, uint32_t index, int32_t value);
/// Game state word `index` (0 when never set or out of range).
LS_API int32_t ls_world_game_word(const ls_world *w, uint32_t index);

/// Create a body. Validates ranges; on error returns the null id and fills *err
/// (may be NULL) with the code, the field (e.g. "position.z") and the value.
LS_API ls_body_id ls_body_create(ls_world *w, const ls_body_def *def, ls_error *err);
/// Destroy a body; touching bodies wake. LS_ERR_INVALID_ID for a stale id.
LS_API ls_result ls_body_destroy(ls_world *w, ls_body_id id);
/// True if id names a live body.
LS_API bool ls_body_is_valid(const ls_world *w, ls_body_id id);
/// Number of live bodies.
LS_API uint32_t ls_world_body_count(const ls_world *w);
/// The id of the body in slot `index` (0-based), or null if the slot is free.
LS_API ls_body_id ls_world_body_at(const ls_world *w, uint32_t index);
/// Everything readable about one body, from ls_body_get_state.
typedef struct ls_body_state {
    ls_body_type type;        ///< Static, kinematic or dynamic.
    ls_vec3 position;         ///< Centre of mass, m.
    ls_quat orientation;      ///< Unit quaternion.
    ls_vec3 linear_velocity;  ///< m/s.
    ls_vec3 angular_velocity; ///< rad/s, world frame.
    ls_fx mass;               ///< kg (0 for static and kinematic bodies).
    bool asleep;              ///< True when asleep.
    uint64_t user_data;       ///< User data given at creation.
    ls_shape_def shape;       ///< The first shape (hull/mesh pointers are the world's copies).
    uint32_t shape_count;     ///< Number of shapes (ls_body_shape_at reads each).
    ls_vec3 origin;           ///< Body origin (position minus the centre-of-mass offset).
} ls_body_state;

/// The checked getter: the body's whole state, or LS_ERR_INVALID_ID (and *err
/// filled) for a stale, destroyed or null id. The single-field getters below
/// assert on such ids instead (LS_ASSERT), never returning a silent zero.
LS_API ls_result ls_body_get_state(const ls_world *w, ls_body_id id, ls_body_state *out,
                                   ls_error *err);
/// The body's first shape.
LS_API ls_shape_def ls_body_shape(const ls_world *w, ls_body_id id);
/// Number of shapes of a body.
LS_API uint32_t ls_body_shape_count(const ls_world *w, ls_body_id id);
/// Shape k (< ls_body_shape_count) of a body, local pose relative to the body
/// origin; hull and mesh point at the world's copies (valid while the world lives).
LS_API ls_shape_def ls_body_shape_at(const ls_world *w, ls_body_id id, uint32_t k);
/// Id of shape k of a body.
LS_API ls_shape_id ls_body_shape_id(const ls_world *w, ls_body_id id, uint32_t k);
/// World transform of a shape (position and orientation of its local frame).
LS_API ls_result ls_shape_get_transform(const ls_world *w, ls_shape_id id, ls_vec3 *position,
                                        ls_quat *orientation);
/// Body position (centre of mass).
LS_API ls_vec3 ls_body_position(const ls_world *w, ls_body_id id);
/// Body orientation.
LS_API ls_quat ls_body_orientation(const ls_world *w, ls_body_id id);
/// Linear velocity.
LS_API ls_vec3 ls_body_linear_velocity(const ls_world *w, ls_body_id id);
/// Angular velocity (world frame).
LS_API ls_vec3 ls_body_angular_velocity(const ls_world *w, ls_body_id id);
/// Mass in kg (0 for static and kinematic bodies).
LS_API ls_fx ls_body_mass(const ls_world *w, ls_body_id id);
/// Body type.
LS_API ls_body_type ls_body_type_of(const ls_world *w, ls_body_id id);
/// True when the body is asleep.
LS_API bool ls_body_is_asleep(const ls_world *w, ls_body_id id);
/// User data given at creation.
LS_API uint64_t ls_body_user_data(const ls_world *w, ls_body_id id);
/// Teleport a body (wakes it). LS_ERR_INVALID_ID for a stale id.
LS_API ls_result ls_body_set_transform(ls_world *w, ls_body_id id, ls_vec3 position,
                                       ls_quat orientation);
/// Set velocities (wakes the body; static bodies ignore it). LS_ERR_INVALID_ID for a stale id,
/// LS_ERR_OUT_OF_RANGE (nothing changed) beyond 512 m/s or 128 rad/s (SPEC.md §5).
LS_API ls_result ls_body_set_velocity(ls_world *w, ls_body_id id, ls_vec3 linear, ls_vec3 angular);
/// Add a force (N) at the centre of mass for the next step (wakes the body; only
/// dynamic bodies feel it). LS_ERR_INVALID_ID for a stale id.
LS_API ls_result ls_body_apply_force(ls_world *w, ls_body_id id, ls_vec3 force);
/// Add a torque (N m) for the next step (wakes the body). LS_ERR_INVALID_ID for a stale id.
LS_API ls_result ls_body_apply_torque(ls_world *w, ls_body_id id, ls_vec3 torque);
/// Apply an impulse (N s) at a world point now (wakes the body). LS_ERR_INVALID_ID for a stale id.
LS_API ls_result ls_body_apply_impulse(ls_world *w, ls_body_id id, ls_vec3 impulse, ls_vec3 point);
/// Wake a body and its island. LS_ERR_INVALID_ID for a stale id.
LS_API ls_result ls_body_wake(ls_world *w, ls_body_id id);

/// Closest hit of the segment from `from` to `to`; false when nothing is hit.
LS_API bool ls_world_ray_cast(const ls_world *w, ls_vec3 from, ls_vec3 to, ls_ray_hit *hit);
/// Ids of bodies whose AABB overlaps [min, max], in id order; returns the total count
/// (may exceed max_out; only max_out are written).
LS_API uint32_t ls_world_query_aabb(const ls_world *w, ls_vec3 min, ls_vec3 max, ls_body_id *out,
                                    uint32_t max_out);

/// Bytes a snapshot of this world needs.
LS_API size_t ls_world_snapshot_size(const ls_world *w);
/// Save the complete state into buf (see ls_world_snapshot_size). Returns the bytes
/// written or 0 if the buffer is too small.
LS_API size_t ls_world_snapshot_save(const ls_world *w, uint8_t *buf, size_t size);
/// Restore a snapshot saved from a world created with the same definition. On
/// failure *err (may be NULL) says why; a corrupt snapshot leaves the world empty.
LS_API ls_result ls_world_snapshot_restore(ls_world *w, const uint8_t *buf, size_t size,
                                           ls_error *err);

LS_EXTERN_C_END

#endif
