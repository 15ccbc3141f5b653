// SPDX-License-Identifier: MIT
/// @file
/// Ray-cast vehicles (SPEC.md §26; seed 004 §2.6): a dynamic chassis body and
/// 2..8 wheels, each a ray (or a sphere shape cast) along its suspension axis
/// with a spring and damper that never pull, per-wheel drive, brake and
/// steering shares, a steering rate, Coulomb tyre friction (static/dynamic)
/// shaped by a lateral slip curve for a rolling tyre, anti-roll bars and
/// wheel spin. Controls (throttle, brake, steer, handbrake) are Q16.16 values
/// set by the game from its inputs, never from a clock. Everything a vehicle
/// holds is in the snapshot and the checksum.
#ifndef LS_VEHICLE_H
#define LS_VEHICLE_H

#include "ls/query.h"
#include "ls/world.h"

LS_EXTERN_C_BEGIN

/// Vehicle handle: 1-based slot index and generation. All-zero is the null id.
typedef struct ls_vehicle_id {
    uint32_t index1;     ///< Slot + 1; 0 means null.
    uint32_t generation; ///< Incremented when the slot is reused.
} ls_vehicle_id;

/// Most wheels a vehicle can have.
#define LS_VEHICLE_MAX_WHEELS 8

/// How a wheel finds the ground; the codes are part of the snapshot format.
typedef enum ls_wheel_probe {
    LS_WHEEL_RAY = 0,    ///< A ray from the mount along the suspension axis.
    LS_WHEEL_SPHERE = 1, ///< A sphere of the wheel radius cast along the axis.
} ls_wheel_probe;

/// One wheel. Start from ls_default_wheel_def().
typedef struct ls_wheel_def {
    ls_vec3 mount;            ///< Suspension top in the chassis frame (from its centre of mass), m.
    ls_vec3 axis;             ///< Suspension direction (down) in the chassis frame, unit,
                              ///< default (0, -1, 0).
    ls_vec3 forward;          ///< Rolling direction at zero steer in the chassis frame,
                              ///< perpendicular to axis, unit, default (0, 0, 1).
    ls_fx radius;             ///< Wheel radius, m (0.05..4), default 0.35.
    ls_fx rest_length;        ///< Spring length at rest (no load), m (0.01..4), default 0.3.
    ls_fx max_travel;         ///< Most compression, m (0..rest_length], default 0.2.
    ls_fx stiffness;          ///< Spring k, N/m (1..32767; SPEC.md §26.1), default 20000.
    ls_fx damping;            ///< Damper c, N·s/m (0..20000), default 2000.
    ls_fx inertia;            ///< Wheel spin inertia, kg·m² (0.01..100), default 1.
    ls_fx drive_share;        ///< Share of the engine force (0..1), default 0.
    ls_fx brake_share;        ///< Share of the brake force (0..1), default 0.25.
    ls_fx steer_share;        ///< Wheel angle = the vehicle's steering angle × this (-1..1),
                              ///< default 0.
    bool handbrake;           ///< The handbrake locks this wheel, default false.
    ls_fx static_friction;    ///< Tyre μ while gripping (0..4), default 1.
    ls_fx dynamic_friction;   ///< Tyre μ while sliding (0..static_friction), default 0.8.
    ls_fx rolling_resistance; ///< Rolling loss coefficient × N (0..1), default 0.01.
    uint32_t anti_roll_pair;  ///< Index + 1 of the wheel sharing this one's anti-roll bar,
                              ///< 0 for none (set it on one wheel of the pair).
    ls_fx anti_roll_stiffness; ///< Anti-roll bar stiffness, N/m (0..32767), default 0.
    ls_fx peak_slip;  ///< Slip angle of the peak lateral grip (static_friction), rad (0..1.5),
                      ///< default 0.14 (8 degrees). Below it a rolling tyre's lateral force
                      ///< grows linearly with the slip angle (SPEC.md §26.5); 0 turns the
                      ///< slip curve off (Coulomb grip up to static_friction at any slip).
    ls_fx slide_slip; ///< Slip angle from which the lateral grip is dynamic_friction, rad
                      ///< (peak_slip..1.5), default 0.35 (20 degrees); in between it falls
                      ///< linearly from static_friction.
} ls_wheel_def;

/// Vehicle definition. Start from ls_default_vehicle_def().
typedef struct ls_vehicle_def {
    ls_body_id chassis;                         ///< A dynamic body the vehicle drives (required).
    uint32_t wheel_count;                       ///< 2..LS_VEHICLE_MAX_WHEELS.
    ls_wheel_def wheels[LS_VEHICLE_MAX_WHEELS]; ///< The first wheel_count are used.
    ls_wheel_probe probe;                       ///< Ray or sphere cast, default LS_WHEEL_RAY.
    ls_fx engine_force;     ///< Drive force at full throttle, N (0..30000), default 4000.
    ls_fx brake_force;      ///< Brake force at full brake, N (0..30000), default 6000.
    ls_fx max_steer;        ///< Steering angle at full steer, rad (0..1.2), default 0.5.
    ls_fx steer_rate;       ///< Most the steering angle moves per second toward
                            ///< steer × max_steer, rad/s (0..64; 0 = instant), default 2
                            ///< (full lock of 0.5 rad in 0.25 s, a quick driver's hands).
    ls_fx boost_force;      ///< Extra forward force at the chassis with boost, N, default 0.
    ls_query_filter filter; ///< What the wheels touch; the chassis's own shapes are
                            ///< always skipped. Default: everything.
    uint64_t user_data;     ///< Opaque to the engine; not part of the checksum.
    uint32_t cookie;        ///< Set by ls_default_vehicle_def(); a def without it is refused.
} ls_vehicle_def;

/// The driver's controls, held until changed (state: in the snapshot and checksum).
typedef struct ls_vehicle_controls {
    ls_fx throttle; ///< -1 (reverse) .. 1.
    ls_fx brake;    ///< 0 .. 1.
    ls_fx steer;    ///< -1 (left) .. 1 (right).
    bool handbrake; ///< Lock the handbrake wheels.
    bool boost;     ///< Add boost_force.
} ls_vehicle_controls;

/// What one wheel did in the last step (for rendering and tests).
typedef struct ls_wheel_state {
    bool in_contact;        ///< The probe hit something within reach.
    ls_vec3 contact_point;  ///< World contact point, m (valid when in_contact).
    ls_vec3 contact_normal; ///< World ground normal (valid when in_contact).
    ls_body_id ground;      ///< Body touched (null when none or static shape-only).
    ls_fx compression;      ///< Spring compression, m (0..max_travel).
    ls_fx suspension_speed; ///< Compression rate, m/s (positive = compressing).
    ls_fx suspension_force; ///< Spring + damper force along the axis, N (>= 0).
    ls_fx steer_angle;      ///< Current steering angle, rad.
    ls_fx spin_speed;       ///< Wheel angular speed, rad/s.
    ls_fx spin_angle;       ///< Wheel rotation angle, rad, wrapped to [-pi, pi).
    bool sliding;           ///< The tyre slid (dynamic friction) in the last step.
    ls_vec3 center;         ///< World wheel centre (mount + (rest - compression) × axis), m.
} ls_wheel_state;

/// The default wheel: see ls_wheel_def's field defaults.
LS_API ls_wheel_def ls_default_wheel_def(void);
/// The default vehicle: no chassis, 0 wheels (set both), ray probes, 4000 N engine.
LS_API ls_vehicle_def ls_default_vehicle_def(void);
/// A ready four-wheel car definition for a chassis box of half extents `half`
/// (x: half width, y: half height, z: half length, forward +z): wheels at the
/// bottom corners, front wheels steer, drive shares 0.25 each (AWD).
LS_API ls_vehicle_def ls_default_car_def(ls_body_id chassis, ls_vec3 half);

/// Create a vehicle, validating every field. On error returns the null id and
/// fills *err (may be NULL) naming the field (LS_ERR_CAPACITY when the pool,
/// ls_world_def.max_vehicles, is full).
LS_API ls_vehicle_id ls_vehicle_create(ls_world *w, const ls_vehicle_def *def, ls_error *err);
/// Destroy a vehicle (its chassis body stays).
LS_API ls_result ls_vehicle_destroy(ls_world *w, ls_vehicle_id id);
/// True when the id names a live vehicle.
LS_API bool ls_vehicle_is_valid(const ls_world *w, ls_vehicle_id id);
/// Live vehicles, and the index-th one in slot order (null past the end).
LS_API uint32_t ls_world_vehicle_count(const ls_world *w);
/// The index-th live vehicle in slot order (null past the end).
LS_API ls_vehicle_id ls_world_vehicle_at(const ls_world *w, uint32_t index);
/// The vehicle's chassis body.
LS_API ls_body_id ls_vehicle_chassis(const ls_world *w, ls_vehicle_id id);
/// Number of wheels (0 for an invalid id).
LS_API uint32_t ls_vehicle_wheel_count(const ls_world *w, ls_vehicle_id id);
/// Set the controls (values are clamped to their ranges).
LS_API ls_result ls_vehicle_set_controls(ls_world *w, ls_vehicle_id id,
                                         const ls_vehicle_controls *controls);
/// The controls in force.
LS_API ls_vehicle_controls ls_vehicle_get_controls(const ls_world *w, ls_vehicle_id id);
/// The steering angle now (state: it follows steer × max_steer at most
/// steer_rate per second), rad; a wheel's angle is this × its steer_share
/// (0 for an invalid id).
LS_API ls_fx ls_vehicle_steer_angle(const ls_world *w, ls_vehicle_id id);
/// One wheel's state after the last step.
LS_API ls_result ls_vehicle_get_wheel(const ls_world *w, ls_vehicle_id id, uint32_t wheel,
                                      ls_wheel_state *out);
/// Chassis speed along its forward axis, m/s (signed).
LS_API ls_fx ls_vehicle_forward_speed(const ls_world *w, ls_vehicle_id id);

LS_EXTERN_C_END

#endif
