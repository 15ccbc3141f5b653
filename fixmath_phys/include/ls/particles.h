// SPDX-License-Identifier: MIT
/// @file
/// Verlet particle systems (SPEC.md §25; Jakobsen, "Advanced Character
/// Physics"): particles with a position x and a previous position x* (the
/// velocity is implicit), relaxed constraints (sticks, min/max ranges, pins,
/// angle limits, breakable sticks) and builders for cloth, ropes, particle
/// ragdolls and particle rigid bodies. Everything is Q16.16 in SI units;
/// particles live in pools sized by ls_world_def (max_particle_systems,
/// max_particles, max_particle_constraints) and stepping never allocates.
#ifndef LS_PARTICLES_H
#define LS_PARTICLES_H

#include "ls/world.h"

LS_EXTERN_C_BEGIN

// ls_particle_system_id is declared in ls/world.h (the step info names one).

/// How a system projects its sticks and ranges (SPEC.md §25.4).
typedef enum ls_stick_mode {
    LS_STICK_APPROX = 0, ///< Square-root free (seed §5.6): one division, never overshoots.
    LS_STICK_EXACT = 1,  ///< Exact: one projection restores the length (an integer sqrt).
} ls_stick_mode;

/// What built a system; the codes are part of the snapshot format.
typedef enum ls_particle_system_kind {
    LS_PARTICLES_GENERIC = 0, ///< Particles and constraints added one by one.
    LS_PARTICLES_CLOTH = 1,   ///< ls_cloth_create.
    LS_PARTICLES_ROPE = 2,    ///< ls_rope_create.
    LS_PARTICLES_RAGDOLL = 3, ///< ls_particle_ragdoll_create.
    LS_PARTICLES_BODY = 4,    ///< ls_particle_body_create (embeds a rigid shape).
    LS_PARTICLES_KIND_COUNT   ///< Number of kinds.
} ls_particle_system_kind;

/// Particle system definition. Start from ls_default_particle_system_def().
typedef struct ls_particle_system_def {
    uint32_t max_particles;   ///< Particles reserved for this system (1..world max_particles).
    uint32_t max_constraints; ///< Constraints reserved (0..world max_particle_constraints).
    uint32_t iterations;      ///< Relaxation iterations per tick (1..64), default 4.
    ls_stick_mode stick_mode; ///< Stick projection, default LS_STICK_APPROX.
    ls_fx damping;            ///< Fraction of the implicit velocity removed per tick (0..1),
                              ///< default 0: x' = x + (v - round(v*damping)) + a*dt^2.
    ls_fx gravity_scale;      ///< Multiplies the world gravity (-16..16), default 1.
    ls_fx friction;           ///< Coulomb coefficient against shapes (0..4), default 0.5.
    ls_vec3 acceleration;     ///< Extra constant acceleration (the mean wind), m/s^2
                              ///< (each component within +-1000), default 0.
    ls_fx turbulence;         ///< Amplitude of the seeded random acceleration drawn per
                              ///< particle per tick, m/s^2 (0..1000), default 0.
    uint64_t seed;            ///< Seed of the system's own PRNG (turbulence); state.
    uint32_t category;        ///< Collision category bits (like shapes), default 1.
    uint32_t mask;            ///< Categories the particles collide with, default all.
    bool collide_particles;   ///< Collide with particles of other systems, default true.
    uint64_t user_data;       ///< Opaque to the engine; not part of the checksum.
    uint32_t cookie; ///< Set by ls_default_particle_system_def(); a def without it is refused.
} ls_particle_system_def;

/// One particle's definition. Start from ls_default_particle_def().
typedef struct ls_particle_def {
    ls_vec3 position; ///< m, each component within +-2048.
    ls_vec3 velocity; ///< m/s: the previous position is position - round(velocity*dt).
    ls_fx mass;       ///< kg (0.001..1000); 0 makes the particle immovable (pinned).
    ls_fx radius;     ///< Collision radius, m (0..64), default 0.02.
    uint32_t cookie;  ///< Set by ls_default_particle_def(); a def without it is refused.
} ls_particle_def;

/// Everything readable about one particle, from ls_particle_get_state.
typedef struct ls_particle_state {
    ls_vec3 position; ///< x, m.
    ls_vec3 previous; ///< x*, m (x - x* is the last tick's displacement).
    ls_vec3 velocity; ///< (x - x*) / dt, m/s.
    ls_fx inv_mass;   ///< 1/kg; 0 when immovable or held by an enabled pin.
    ls_fx radius;     ///< m.
    ls_vec3 force;    ///< Force accumulated for the next step, N.
} ls_particle_state;

/// Constraint kind. The codes are part of the snapshot format.
typedef enum ls_particle_constraint_type {
    LS_PARTICLE_STICK = 0, ///< |x_b - x_a| = length (exact or approx by the system's mode).
    LS_PARTICLE_RANGE = 1, ///< min_length <= |x_b - x_a| <= max_length (ropes, slack,
                           ///< one-sided sticks for self-collision).
    LS_PARTICLE_PIN = 2,   ///< x_a = target (a world point or a point of a body).
    LS_PARTICLE_ANGLE = 3, ///< The angle at a between a->b and a->c within [min, max].
    LS_PARTICLE_CONSTRAINT_KIND_COUNT ///< Number of kinds.
} ls_particle_constraint_type;

/// Constraint definition. Start from ls_default_particle_constraint_def().
/// Fields a kind does not use are ignored.
typedef struct ls_particle_constraint_def {
    ls_particle_constraint_type type; ///< Kind.
    uint32_t a;                       ///< Particle index in the system (pin: the pinned particle;
                                      ///< angle: the vertex).
    uint32_t b;                       ///< Second particle (stick, range, angle), != a.
    uint32_t c;                       ///< Angle: third particle, != a, b.
    ls_fx length;     ///< Stick rest length, m (0.001..128); 0 = the distance at creation.
    ls_fx min_length; ///< Range: shortest length, m (0 = no lower bound).
    ls_fx max_length; ///< Range: longest length, m (0 = no upper bound; else >= min).
    ls_fx min_angle;  ///< Angle: smallest angle at a, rad (0..pi).
    ls_fx max_angle;  ///< Angle: largest angle at a, rad (min_angle..pi).
    ls_fx stiffness;  ///< Fraction of the error removed by one projection (0..1],
                      ///< default 1 (rigid); 0.5 halves the error per projection.
    ls_fx tear_ratio; ///< Stick, range: the constraint breaks at the end of a tick when
                      ///< its length exceeds tear_ratio x rest (max) length; 0 = never,
                      ///< else 1..64.
    ls_vec3 target;   ///< Pin: world point, or (with body) the point in the body's
                      ///< frame, from its centre of mass.
    ls_body_id body;  ///< Pin: follow this body's point (null: a fixed world point).
    uint32_t cookie;  ///< Set by ls_default_particle_constraint_def(); a def without it is refused.
} ls_particle_constraint_def;

/// A constraint torn in the last step (it stays in the system, disabled).
typedef struct ls_particle_event {
    ls_particle_system_id system; ///< Its system.
    uint32_t constraint;          ///< Its index in the system.
    uint32_t a;                   ///< First particle.
    uint32_t b;                   ///< Second particle.
} ls_particle_event;

/// Constraints torn in the last step, systems in id order, constraints in
/// index order; valid until the next step.
typedef struct ls_particle_events {
    const ls_particle_event *torn; ///< Torn constraints.
    uint32_t torn_count;           ///< Number of entries in `torn`.
} ls_particle_events;

/// The default system definition: 16 particles and 64 constraints reserved,
/// 4 iterations, approximate sticks, no damping, gravity scale 1, friction 0.5.
LS_API ls_particle_system_def ls_default_particle_system_def(void);
/// The default particle: at the origin, at rest, 1 kg, radius 0.02 m.
LS_API ls_particle_def ls_default_particle_def(void);
/// The default constraint: a rigid stick from particle 0 to 1 at its current length.
LS_API ls_particle_constraint_def ls_default_particle_constraint_def(void);

/// Create an empty system reserving def->max_particles and def->max_constraints
/// slots of the world's pools. On error returns the null id and fills *err
/// (may be NULL) naming the field (LS_ERR_CAPACITY when the pools are full).
LS_API ls_particle_system_id ls_particle_system_create(ls_world *w,
                                                       const ls_particle_system_def *def,
                                                       ls_error *err);
/// Destroy a system (its pool ranges are compacted). LS_ERR_INVALID_ID for a stale id.
LS_API ls_result ls_particle_system_destroy(ls_world *w, ls_particle_system_id id);
/// True if id names a live system.
LS_API bool ls_particle_system_is_valid(const ls_world *w, ls_particle_system_id id);
/// Number of live systems.
LS_API uint32_t ls_world_particle_system_count(const ls_world *w);
/// The id of the system in slot `index` (0-based), or null if the slot is free.
LS_API ls_particle_system_id ls_world_particle_system_at(const ls_world *w, uint32_t index);
/// The system's kind (asserts on a stale id).
LS_API ls_particle_system_kind ls_particle_system_kind_of(const ls_world *w,
                                                          ls_particle_system_id id);
/// The system's user data (asserts on a stale id).
LS_API uint64_t ls_particle_system_user_data(const ls_world *w, ls_particle_system_id id);
/// Change the mean wind acceleration and turbulence amplitude (m/s^2, ranges as
/// in the definition). LS_ERR_INVALID_ID or LS_ERR_OUT_OF_RANGE.
LS_API ls_result ls_particle_system_set_wind(ls_world *w, ls_particle_system_id id,
                                             ls_vec3 acceleration, ls_fx turbulence);

/// Change the relaxation iterations per tick (1..64; an adaptive scheme must
/// decide from state only, so peers agree). LS_ERR_INVALID_ID or LS_ERR_OUT_OF_RANGE.
LS_API ls_result ls_particle_system_set_iterations(ls_world *w, ls_particle_system_id id,
                                                   uint32_t iterations);

/// Add a particle; returns its index in the system (0, 1, ... in order of
/// addition) or UINT32_MAX with *err filled (range, LS_ERR_CAPACITY, stale id).
LS_API uint32_t ls_particle_add(ls_world *w, ls_particle_system_id id, const ls_particle_def *def,
                                ls_error *err);
/// Number of particles of a system (0 for a stale id).
LS_API uint32_t ls_particle_count(const ls_world *w, ls_particle_system_id id);
/// The positions of all particles of a system, index order, *count of them;
/// valid until the next step, creation or destruction (NULL for a stale id).
LS_API const ls_vec3 *ls_particle_positions(const ls_world *w, ls_particle_system_id id,
                                            uint32_t *count);
/// The checked getter: one particle's state, or LS_ERR_INVALID_ID (stale system)
/// / LS_ERR_OUT_OF_RANGE (index) with *err filled.
LS_API ls_result ls_particle_get_state(const ls_world *w, ls_particle_system_id id, uint32_t index,
                                       ls_particle_state *out, ls_error *err);
/// Position x of a particle (asserts on a stale id or index).
LS_API ls_vec3 ls_particle_position(const ls_world *w, ls_particle_system_id id, uint32_t index);
/// Previous position x* of a particle (asserts on a stale id or index).
LS_API ls_vec3 ls_particle_previous(const ls_world *w, ls_particle_system_id id, uint32_t index);
/// Set x and x* (teleport, a hit, or motion inherited from two animation
/// frames: the next tick continues by x - x*). Each component within +-2048 m.
LS_API ls_result ls_particle_set_position(ls_world *w, ls_particle_system_id id, uint32_t index,
                                          ls_vec3 position, ls_vec3 previous);
/// Set a particle's mass (kg, 0.001..1000; 0 = immovable); the weights of its
/// constraints are recomputed.
LS_API ls_result ls_particle_set_mass(ls_world *w, ls_particle_system_id id, uint32_t index,
                                      ls_fx mass);
/// Add a force (N) to a particle for the next step only (F*inv_mass*dt^2 of displacement).
LS_API ls_result ls_particle_apply_force(ls_world *w, ls_particle_system_id id, uint32_t index,
                                         ls_vec3 force);

/// Add a constraint; returns its index in the system (creation order, which is
/// the relaxation order) or UINT32_MAX with *err filled naming the field.
LS_API uint32_t ls_particle_constraint_add(ls_world *w, ls_particle_system_id id,
                                           const ls_particle_constraint_def *def, ls_error *err);
/// Shorthand: a rigid stick between particles a and b at their current distance.
LS_API uint32_t ls_particle_stick_add(ls_world *w, ls_particle_system_id id, uint32_t a, uint32_t b,
                                      ls_error *err);
/// Number of constraints of a system (0 for a stale id).
LS_API uint32_t ls_particle_constraint_count(const ls_world *w, ls_particle_system_id id);
/// Kind of a constraint (asserts on a stale id or index).
LS_API ls_particle_constraint_type ls_particle_constraint_type_of(const ls_world *w,
                                                                  ls_particle_system_id id,
                                                                  uint32_t index);
/// True when the constraint is enabled and not torn (asserts on a stale id or index).
LS_API bool ls_particle_constraint_is_active(const ls_world *w, ls_particle_system_id id,
                                             uint32_t index);
/// True when the constraint has torn (asserts on a stale id or index).
LS_API bool ls_particle_constraint_is_torn(const ls_world *w, ls_particle_system_id id,
                                           uint32_t index);
/// Enable or disable a constraint (a torn one stays off). A pin holds its
/// particle immovable only while enabled.
LS_API ls_result ls_particle_constraint_set_enabled(ls_world *w, ls_particle_system_id id,
                                                    uint32_t index, bool enabled);
/// Move a pin's target (world point, or the point in its body's frame); IK and
/// dragging. LS_ERR_INVALID_ARGUMENT for another kind.
LS_API ls_result ls_particle_pin_set_target(ls_world *w, ls_particle_system_id id, uint32_t index,
                                            ls_vec3 target);
/// Constraints torn in the last step.
LS_API ls_particle_events ls_world_particle_events(const ls_world *w);

// ---- Builders: each creates one system with exactly the capacity it needs. ----

/// Cloth pins (bits of ls_cloth_def.pins): particle (i, j) is index j*nu + i.
enum {
    LS_CLOTH_PIN_CORNER_00 = 1u, ///< (0, 0)
    LS_CLOTH_PIN_CORNER_10 = 2u, ///< (nu-1, 0)
    LS_CLOTH_PIN_CORNER_01 = 4u, ///< (0, nv-1)
    LS_CLOTH_PIN_CORNER_11 = 8u, ///< (nu-1, nv-1)
    LS_CLOTH_PIN_EDGE_V0 = 16u,  ///< the row j = 0
    LS_CLOTH_PIN_EDGE_V1 = 32u,  ///< the row j = nv-1
    LS_CLOTH_PIN_EDGE_U0 = 64u,  ///< the column i = 0
    LS_CLOTH_PIN_EDGE_U1 = 128u, ///< the column i = nu-1
};

/// Cloth: an nu x nv grid of particles, sticks between neighbours
/// (structural), diagonals (shear) and second neighbours (bend). Start from
/// ls_default_cloth_def().
typedef struct ls_cloth_def {
    ls_particle_system_def system; ///< Iterations, mode, damping, wind...; the
                                   ///< capacities are computed by the builder.
    ls_vec3 origin;                ///< Position of particle (0, 0), m.
    ls_vec3 axis_u;                ///< Direction of increasing i (normalised), default +x.
    ls_vec3 axis_v;                ///< Direction of increasing j (normalised), default +z.
    uint32_t nu;                   ///< Particles along u (2..256), default 16.
    uint32_t nv;                   ///< Particles along v (2..256), default 16.
    ls_fx spacing;                 ///< Distance between neighbours, m (0.01..64), default 0.1.
    ls_fx mass;                    ///< Total mass, kg, split equally (each 0.001..1000), default 1.
    ls_fx radius;                  ///< Particle radius, m (0..64), default 0.02.
    bool shear;                    ///< Add the two diagonals of every cell, default true.
    bool bend;                     ///< Add sticks to second neighbours, default true.
    ls_fx bend_stiffness;          ///< Stiffness of the bend sticks (0..1], default 1.
    ls_fx tear_ratio; ///< Structural and shear sticks tear above this stretch (0 = never).
    uint32_t pins;    ///< LS_CLOTH_PIN_* bits: those particles are immovable.
    uint32_t cookie;  ///< Set by ls_default_cloth_def(); a def without it is refused.
} ls_cloth_def;

/// Rope: segments+1 particles from start to end joined by sticks (or by
/// ranges 0..length when slack). Start from ls_default_rope_def().
typedef struct ls_rope_def {
    ls_particle_system_def system; ///< As for cloth (default 24 iterations).
    ls_vec3 start;                 ///< First particle, m.
    ls_vec3 end;                   ///< Last particle, m.
    uint32_t segments;             ///< 1..4096, default 16.
    ls_fx mass;                    ///< Total mass of the rope's particles, kg, default 1.
    ls_fx end_mass;                ///< Mass of the last particle instead (0 = like the others), kg.
    ls_fx radius;                  ///< Particle radius, m, default 0.02.
    bool slack;                    ///< Segments may shorten (range 0..length), default false.
    ls_fx tear_ratio;              ///< Segments tear above this stretch (0 = never).
    bool pin_start;                ///< The first particle is immovable, default true.
    bool pin_end;                  ///< The last particle is immovable, default false.
    ls_body_id attach_start;       ///< Pin the first particle to this body where it is (one way:
                                   ///< the body drives the particle); null: none.
    ls_body_id attach_end;         ///< The same for the last particle.
    bool long_range;               ///< Long-range attachments: no particle gets farther from a
                                   ///< held end (pinned or attached) than the rope's rest length
                                   ///< between them (heavy ends do not stretch the rope), default
                                   ///< true; ignored with tear_ratio (a torn part must fall).
    uint32_t cookie;               ///< Set by ls_default_rope_def(); a def without it is refused.
} ls_rope_def;

/// Particle ragdoll (Jakobsen's Hitman ragdoll): 16 particles (0 head, 1 neck,
/// 2 chest, 3 pelvis, then left/right pairs: 4-5 shoulders, 6-7 elbows, 8-9
/// hands, 10-11 hips, 12-13 knees, 14-15 feet), 26 sticks, 7 angle limits
/// (elbows, knees, hips, neck) and 3 one-sided sticks that keep the knees,
/// feet and hands apart. Start from ls_default_particle_ragdoll_def().
typedef struct ls_particle_ragdoll_def {
    ls_particle_system_def system; ///< As for cloth (default 8 iterations).
    ls_vec3 position;              ///< The pelvis, m.
    ls_quat orientation;           ///< Standing along +y, facing +z when identity.
    ls_fx height;                  ///< Head top to soles, m (0.2..10), default 1.8.
    ls_fx mass;                    ///< Total, kg, default 70.
    ls_fx radius;                  ///< Particle radius, m, default 0.06.
    ls_vec3 velocity;              ///< Initial velocity of every particle, m/s.
    uint32_t cookie; ///< Set by ls_default_particle_ragdoll_def(); a def without it is refused.
} ls_particle_ragdoll_def;

/// Particle arrangement of a particle rigid body.
typedef enum ls_particle_body_kind {
    LS_PARTICLE_BODY_TETRA = 0, ///< 4 particles at the origin and the three axes, 6 sticks.
    LS_PARTICLE_BODY_BOX = 1,   ///< 8 particles at the corners of a box, 28 sticks.
} ls_particle_body_kind;

/// Particle rigid body (seed §2.5): particles kept rigid by sticks, with a
/// rigid shape embedded by barycentric weights (collisions use the shape).
/// Start from ls_default_particle_body_def().
typedef struct ls_particle_body_def {
    ls_particle_system_def system; ///< As for cloth.
    ls_particle_body_kind kind;    ///< Tetrahedron or box of particles.
    ls_shape_def shape;            ///< Embedded shape (sphere, box, capsule or hull; its local
                                   ///< pose is from the body origin); its size sets the particles'.
    ls_vec3 position;              ///< Body origin (the particles' centroid), m.
    ls_quat orientation;           ///< Unit quaternion (normalised).
    ls_vec3 linear_velocity;       ///< m/s.
    ls_vec3 angular_velocity;      ///< rad/s (each particle starts with v + w x r).
    ls_fx mass;                    ///< Total, kg, split equally, default 1.
    ls_fx radius;                  ///< Particle radius, m, default 0.
    uint32_t cookie; ///< Set by ls_default_particle_body_def(); a def without it is refused.
} ls_particle_body_def;

/// The default cloth: 16 x 16, spacing 0.1 m in the xz plane at the origin, 1 kg.
LS_API ls_cloth_def ls_default_cloth_def(void);
/// The default rope: 16 segments from (0, 2, 0) to (2, 2, 0), 1 kg, start pinned.
LS_API ls_rope_def ls_default_rope_def(void);
/// The default ragdoll: 1.8 m, 70 kg, pelvis at (0, 1, 0).
LS_API ls_particle_ragdoll_def ls_default_particle_ragdoll_def(void);
/// The default particle body: a tetrahedron embedding a 0.5 m box, 1 kg.
LS_API ls_particle_body_def ls_default_particle_body_def(void);
/// Build a cloth. On error returns the null id with *err naming the field.
LS_API ls_particle_system_id ls_cloth_create(ls_world *w, const ls_cloth_def *def, ls_error *err);
/// Build a rope. On error returns the null id with *err naming the field.
LS_API ls_particle_system_id ls_rope_create(ls_world *w, const ls_rope_def *def, ls_error *err);
/// Build a particle ragdoll. On error returns the null id with *err naming the field.
LS_API ls_particle_system_id ls_particle_ragdoll_create(ls_world *w,
                                                        const ls_particle_ragdoll_def *def,
                                                        ls_error *err);
/// Build a particle rigid body. On error returns the null id with *err naming the field.
LS_API ls_particle_system_id ls_particle_body_create(ls_world *w, const ls_particle_body_def *def,
                                                     ls_error *err);
/// A particle body's pose from its particles: the centroid and the orientation
/// of the frame they span (Gram-Schmidt). LS_ERR_INVALID_ID, or
/// LS_ERR_INVALID_ARGUMENT for a system that is not a particle body.
LS_API ls_result ls_particle_body_get_transform(const ls_world *w, ls_particle_system_id id,
                                                ls_vec3 *position, ls_quat *orientation);

LS_EXTERN_C_END

#endif
