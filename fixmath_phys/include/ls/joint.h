// SPDX-License-Identifier: MIT
/// @file
/// Joints between two bodies (SPEC.md §23): ball, hinge, fixed, prismatic,
/// distance and cone-twist, solved by the soft sub-stepped solver with the
/// contacts. Anchors and axes are given in world space at creation; angles are
/// radians, lengths metres, forces newtons, all Q16.16.
#ifndef LS_JOINT_H
#define LS_JOINT_H

#include "ls/world.h"

LS_EXTERN_C_BEGIN

/// Joint handle: 1-based slot index and generation. All-zero is the null id.
typedef struct ls_joint_id {
    uint32_t index1;     ///< Slot + 1; 0 means null.
    uint32_t generation; ///< Incremented when the slot is reused.
} ls_joint_id;

/// Joint kind. The codes are part of the snapshot format.
typedef enum ls_joint_type {
    LS_JOINT_BALL = 0,      ///< Spherical: the anchors coincide; free rotation.
    LS_JOINT_HINGE = 1,     ///< Revolute about `axis`: limits, motor, spring.
    LS_JOINT_FIXED = 2,     ///< Weld: no relative motion.
    LS_JOINT_PRISMATIC = 3, ///< Slider along `axis`, no rotation: limits, motor, spring.
    LS_JOINT_DISTANCE = 4,  ///< Rod, rope or spring between `anchor` and `anchor_b`.
    LS_JOINT_CONE = 5,      ///< Cone-twist about `axis` (ragdoll shoulders, hips).
    LS_JOINT_KIND_COUNT     ///< Number of joint kinds.
} ls_joint_type;

/// Joint definition. Start from ls_default_joint_def(). Fields a type does not
/// use are ignored (they must still hold their defaults or valid values).
typedef struct ls_joint_def {
    ls_joint_type type;         ///< Kind of joint.
    ls_body_id body_a;          ///< First body (the joint frame is fixed in it).
    ls_body_id body_b;          ///< Second body (reactions are reported on it); differs from a.
    ls_vec3 anchor;             ///< World anchor at creation, m (distance: the point on body a).
    ls_vec3 anchor_b;           ///< Distance only: world anchor on body b at creation, m.
    ls_vec3 axis;               ///< World axis (hinge, prismatic, cone twist axis); non-zero.
    bool enable_limit;          ///< Hinge, prismatic: keep the angle/translation in [lower, upper].
    ls_fx lower;                ///< Hinge: rad in [-pi, pi]; prismatic: m in [-2048, 2048].
    ls_fx upper;                ///< As lower; lower <= upper.
    bool enable_motor;          ///< Hinge, prismatic: drive the relative speed to motor_speed;
                                ///< cone: joint friction (torque max_motor_torque, speed 0).
    ls_fx motor_speed;          ///< rad/s (|.| <= 128) or m/s (|.| <= 512); cone: 0.
    ls_fx max_motor_torque;     ///< Most motor torque, N m (prismatic: force, N); >= 0.
    bool enable_spring;         ///< Hinge, prismatic, distance: a spring toward the rest pose.
    ls_fx spring_hertz;         ///< Spring frequency, Hz (0..1000; 0 = no spring force).
    ls_fx spring_damping_ratio; ///< Spring damping ratio (0..100).
    ls_fx min_length;           ///< Distance: shortest length, m; min = max = 0: a rigid rod.
    ls_fx max_length;           ///< Distance: longest length, m (0..4096, >= min_length).
    ls_fx cone_angle;           ///< Cone: largest swing of the axis, rad (0..pi).
    ls_fx twist_lower;          ///< Cone: lowest twist about the axis, rad (-pi..pi).
    ls_fx twist_upper;          ///< Cone: highest twist, rad (twist_lower..pi).
    ls_fx break_force;          ///< Breaks above this reaction force, N (0 = unbreakable).
    ls_fx break_torque;         ///< Breaks above this reaction torque, N m (0 = unbreakable).
    bool collide_connected;     ///< Let the two bodies collide (default false).
    uint64_t user_data;         ///< Opaque to the engine; not part of the checksum.
    uint32_t cookie;            ///< Set by ls_default_joint_def(); a def without it is refused.
} ls_joint_def;

/// A joint that broke in the last step (it has been destroyed).
typedef struct ls_joint_event {
    ls_joint_id joint;  ///< The destroyed joint's id.
    ls_body_id body_a;  ///< Its first body.
    ls_body_id body_b;  ///< Its second body.
    ls_vec3 force;      ///< Reaction force that broke it, N (world frame, on body b).
    ls_vec3 torque;     ///< Reaction torque at that step, N m.
    uint64_t user_data; ///< The joint's user data.
} ls_joint_event;

/// Joints broken in the last step, in joint slot order; valid until the next step.
typedef struct ls_joint_events {
    const ls_joint_event *broken; ///< Broken joints.
    uint32_t broken_count;        ///< Number of broken joints.
} ls_joint_events;

/// The default definition: a ball joint at the origin, axis +x, no limit,
/// motor or spring, unbreakable, connected bodies do not collide.
LS_API ls_joint_def ls_default_joint_def(void);
/// Create a joint (wakes both bodies). Validates the bodies and every range; on
/// error returns the null id and fills *err (may be NULL) naming the field.
LS_API ls_joint_id ls_joint_create(ls_world *w, const ls_joint_def *def, ls_error *err);
/// Destroy a joint (wakes both bodies). LS_ERR_INVALID_ID for a stale id.
LS_API ls_result ls_joint_destroy(ls_world *w, ls_joint_id id);
/// True if id names a live joint.
LS_API bool ls_joint_is_valid(const ls_world *w, ls_joint_id id);
/// Number of live joints.
LS_API uint32_t ls_world_joint_count(const ls_world *w);
/// The id of the joint in slot `index` (0-based), or null if the slot is free.
LS_API ls_joint_id ls_world_joint_at(const ls_world *w, uint32_t index);
/// Joints broken in the last step.
LS_API ls_joint_events ls_world_joint_events(const ls_world *w);
/// The joint's kind (asserts on a stale id).
LS_API ls_joint_type ls_joint_type_of(const ls_world *w, ls_joint_id id);
/// The joint's first body (asserts on a stale id).
LS_API ls_body_id ls_joint_body_a(const ls_world *w, ls_joint_id id);
/// The joint's second body (asserts on a stale id).
LS_API ls_body_id ls_joint_body_b(const ls_world *w, ls_joint_id id);
/// Constraint force on body b in the last step, N, world frame (asserts on a stale id).
LS_API ls_vec3 ls_joint_reaction_force(const ls_world *w, ls_joint_id id);
/// Constraint torque on body b in the last step, N m, world frame (asserts on a stale id).
LS_API ls_vec3 ls_joint_reaction_torque(const ls_world *w, ls_joint_id id);
/// Hinge angle of body b relative to body a about the axis, rad in [-pi, pi]
/// (0 at creation; asserts on a stale id or another kind).
LS_API ls_fx ls_joint_hinge_angle(const ls_world *w, ls_joint_id id);
/// Prismatic translation of body b's anchor along the axis, m (0 at creation;
/// asserts on a stale id or another kind).
LS_API ls_fx ls_joint_prismatic_translation(const ls_world *w, ls_joint_id id);
/// Enable or disable the motor of a hinge or prismatic joint and set its speed
/// and largest torque (force), or a cone joint's friction (speed 0, the
/// torque); wakes the bodies. LS_ERR_INVALID_ID, LS_ERR_INVALID_ARGUMENT
/// (another kind) or LS_ERR_OUT_OF_RANGE (a cone's speed other than 0 too).
LS_API ls_result ls_joint_set_motor(ls_world *w, ls_joint_id id, bool enable, ls_fx speed,
                                    ls_fx max_torque);
/// Enable or disable the spring of a hinge, prismatic or distance joint and set
/// its frequency and damping ratio; wakes the bodies. Errors as ls_joint_set_motor.
LS_API ls_result ls_joint_set_spring(ls_world *w, ls_joint_id id, bool enable, ls_fx hertz,
                                     ls_fx damping_ratio);

LS_EXTERN_C_END

#endif
