// SPDX-License-Identifier: MIT
// Private layout of ray-cast vehicles (SPEC.md §26): slots with a generation
// and a free list like bodies; everything here but def.user_data is state.
#ifndef LS_VEHICLE_INTERNAL_H
#define LS_VEHICLE_INTERNAL_H

#include "../world/world_internal.h"
#include "ls/vehicle.h"

/// Largest peak_slip and slide_slip, rad (1.5; a slip angle is at most pi/2).
#define LS_SLIP_MAX 98304

/// One vehicle slot (all fields state; see SPEC.md §26.7 for the snapshot).
typedef struct ls_vehicle {
    uint32_t generation; ///< id generation of this slot
    bool alive;
    ls_vehicle_def def;           ///< validated definition
    ls_vehicle_controls controls; ///< controls in force
    ls_fx steer; ///< steering angle now, rad (moves toward steer x max_steer, SPEC.md §26.1)
    ls_wheel_state wheels[LS_VEHICLE_MAX_WHEELS]; ///< per wheel, after the last step
} ls_vehicle;

/// Slot of a valid id, or NULL.
ls_vehicle *ls_vehicle_slot_(const ls_world *w, ls_vehicle_id id);
/// Run every live vehicle for one tick (SPEC.md §26.3), in slot order.
void ls_world_step_vehicles_(ls_world *w);
/// Validate a definition against world w (stability bound uses its dt);
/// false with *err naming the field.
bool ls_vehicle_def_valid_(const ls_world *w, const ls_vehicle_def *d, ls_error *err);

/// What one wheel's probe found this tick (pass 1 of SPEC.md §26.3).
typedef struct ls_wheel_probe_hit {
    bool hit;
    ls_vec3 mount, axis, point, normal;
    int64_t raw;     ///< rest_length - (hit distance - radius), m Q16.16, unclamped
    uint32_t ground; ///< dynamic/kinematic ground body slot, UINT32_MAX otherwise
    ls_fx speed;     ///< compression rate, m/s
    int64_t force;   ///< spring + damper (+ anti-roll), N Q16.16
} ls_wheel_probe_hit;

/// Velocity of body b at world point p.
ls_vec3 ls_vehicle_point_velocity_(const ls_body *b, ls_vec3 p);
/// Impulse j on a dynamic body at world point p.
void ls_vehicle_apply_impulse_(ls_body *b, ls_vec3 j, ls_vec3 p);
/// Force f on a dynamic body at world point p (into its accumulators).
void ls_vehicle_apply_force_(ls_body *b, ls_vec3 f, ls_vec3 p);
/// Velocity of body b at world point p at the end of this tick from gravity
/// and its accumulated force and torque (SPEC.md §26.5).
ls_vec3 ls_vehicle_point_velocity_next_(const ls_world *w, const ls_body *b, ls_vec3 p);
/// Effective mass of chassis b against ground g (NULL: immovable) at point p
/// along unit d (SPEC.md §26.5).
ls_fx ls_vehicle_pair_effective_mass_(const ls_body *b, const ls_body *g, ls_vec3 p, ls_vec3 d);
/// Effective mass of body b at point p along unit d.
ls_fx ls_vehicle_effective_mass_(const ls_body *b, ls_vec3 p, ls_vec3 d);
/// Probe wheel i of v on chassis b (SPEC.md §26.3).
void ls_vehicle_probe_wheel_(const ls_world *w, const ls_vehicle *v, const ls_body *b, uint32_t i,
                             ls_wheel_probe_hit *pr);
/// Tyre forces of every wheel in contact (`pr[i].hit`), with normal forces
/// n_force[i] and steered forwards fwd[i], swept LS_TYRE_ITERATIONS times
/// (SPEC.md §26.5); sets st[i].sliding and speed[i], the longitudinal contact
/// speed for the wheel spin (0 airborne or locked).
void ls_vehicle_tyres_(ls_world *w, const ls_vehicle *v, ls_body *b, const ls_wheel_probe_hit *pr,
                       const ls_fx *n_force, const ls_vec3 *fwd, ls_wheel_state *st, ls_fx *speed,
                       bool *ovf);
/// Rotate unit u about unit axis a (u perpendicular to a) by angle t.
ls_vec3 ls_vehicle_rotate_about_(ls_vec3 u, ls_vec3 a, ls_fx t);

#endif
