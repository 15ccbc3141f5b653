// SPDX-License-Identifier: MIT
// Scene statement properties as tables (SPEC.md §14).
//
// Why: the parser and the writer used to mirror each other by hand, one
// function per statement on each side, so a property added to one side and not
// the other was caught only by a round-trip test. Each property keyword is now
// one entry here, with its value kind, where it is stored, its range and when
// it is written; scene.c reads every entry with one walker (read_prop) and
// scene_write.c writes every entry with one walker (write_props), so both
// directions follow the same entry. The table order is the writing order;
// the parser looks keywords up by name. What does not fit a table (a body
// reference, `car`, `anti_roll`'s wheel check, the world's speed threshold
// message) is read by a small hand-written function of the statement's parser
// (LS_SP_BY_HAND_), yet still has its one entry here.
#include "scene_props.h"

#include "ls/vehicle.h"

#include <string.h>

#define FX(v) ((int64_t)(v))
#define JB    (1u << LS_JOINT_BALL)
#define JH    (1u << LS_JOINT_HINGE)
#define JF    (1u << LS_JOINT_FIXED)
#define JP    (1u << LS_JOINT_PRISMATIC)
#define JD    (1u << LS_JOINT_DISTANCE)
#define JC    (1u << LS_JOINT_CONE)
#define JALL  (JB | JH | JF | JP | JD | JC)
#define ONE   1u // the single kind of a statement without kinds

// ---- world (fields of ls_scene) ----

#define W(field) offsetof(ls_scene, field)

static const ls_scene_prop_ world_props[] = {
    {.name = "gravity", .value = LS_SV_VEC3_, .kinds = ONE, .off = W(world.gravity)},
    {.name = "tick_rate",
     .value = LS_SV_U32_,
     .kinds = ONE,
     .off = W(world.tick_rate),
     .lo = 30,
     .hi = 120},
    {.name = "substeps",
     .value = LS_SV_U32_,
     .kinds = ONE,
     .off = W(world.substeps),
     .lo = 1,
     .hi = 16},
    {.name = "iterations",
     .value = LS_SV_U32_2_,
     .kinds = ONE,
     .off = W(world.velocity_iterations),
     .off2 = W(world.position_iterations),
     .lo = 1,
     .hi = 64,
     .lo2 = 0,
     .hi2 = 64},
    {.name = "ticks", .value = LS_SV_U32_, .kinds = ONE, .off = W(ticks), .lo = 1, .hi = 10000000},
    {.name = "seed",
     .value = LS_SV_U32_AS_U64_,
     .kinds = ONE,
     .off = W(world.seed),
     .lo = 0,
     .hi = UINT32_MAX},
    {.name = "max_bodies",
     .value = LS_SV_U32_,
     .kinds = ONE,
     .off = W(world.max_bodies),
     .lo = 1,
     .hi = 1u << 20},
    {.name = "max_contacts",
     .value = LS_SV_U32_,
     .kinds = ONE,
     .off = W(world.max_contacts),
     .lo = 1,
     .hi = 1u << 22},
    {.name = "max_shapes",
     .value = LS_SV_U32_,
     .when = LS_SW_NONZERO_,
     .kinds = ONE,
     .off = W(world.max_shapes),
     .lo = 0,
     .hi = 1u << 22},
    // Closing speed (m/s) below which nothing bounces (SPEC.md §11.2): 0 lets every
    // contact with restitution bounce; 100 m/s is beyond every body's speed (§5).
    // By hand: its message and column predate read_fx_in's.
    {.name = "restitution_threshold",
     .value = LS_SV_FX_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_BY_HAND_,
     .kinds = ONE,
     .off = W(world.restitution_threshold),
     .lo = 0,
     .hi = FX(LS_FX_INT(100))},
};

// ---- joint (fields of ls_joint_def; kinds: bit per ls_joint_type) ----

#define J(field) offsetof(ls_joint_def, field)

static const ls_scene_prop_ joint_props[] = {
    {.name = "anchor",
     .value = LS_SV_VEC3_,
     .kinds = JALL,
     .required = JALL,
     .off = J(anchor),
     .why = "needs `anchor X Y Z`"},
    {.name = "anchor_b",
     .value = LS_SV_VEC3_,
     .kinds = JD,
     .required = JD,
     .off = J(anchor_b),
     .why = "needs `anchor_b X Y Z`"},
    {.name = "length",
     .value = LS_SV_FX2_,
     .when = LS_SW_NONZERO_,
     .flags = LS_SP_ASCENDING_,
     .kinds = JD,
     .off = J(min_length),
     .off2 = J(max_length),
     .why = "lower above upper"},
    {.name = "axis",
     .value = LS_SV_VEC3_,
     .flags = LS_SP_DIRECTION_,
     .kinds = JH | JP | JC,
     .required = JH | JP | JC,
     .off = J(axis),
     .why = "needs `axis X Y Z`"},
    {.name = "limits",
     .value = LS_SV_FX2_,
     .when = LS_SW_ENABLED_,
     .flags = LS_SP_ASCENDING_,
     .kinds = JH | JP,
     .degrees = JH,
     .off = J(lower),
     .off2 = J(upper),
     .enable = J(enable_limit),
     .why = "lower above upper"},
    {.name = "motor",
     .value = LS_SV_FX2_,
     .when = LS_SW_ENABLED_,
     .kinds = JH | JP | JC,
     .off = J(motor_speed),
     .off2 = J(max_motor_torque),
     .enable = J(enable_motor)},
    {.name = "spring",
     .value = LS_SV_FX2_,
     .when = LS_SW_ENABLED_,
     .kinds = JH | JP | JD,
     .off = J(spring_hertz),
     .off2 = J(spring_damping_ratio),
     .enable = J(enable_spring)},
    {.name = "cone",
     .value = LS_SV_FX_,
     .kinds = JC,
     .degrees = JC,
     .required = JC,
     .off = J(cone_angle),
     .why = "needs `cone SWING` (degrees)"},
    {.name = "twist",
     .value = LS_SV_FX2_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_ASCENDING_,
     .kinds = JC,
     .degrees = JC,
     .off = J(twist_lower),
     .off2 = J(twist_upper),
     .why = "lower above upper"},
    // `break FORCE [TORQUE]`: the torque is there when the next token is a number.
    {.name = "break",
     .value = LS_SV_FX2_,
     .when = LS_SW_NONZERO_,
     .flags = LS_SP_SECOND_OPTIONAL_,
     .kinds = JALL,
     .off = J(break_force),
     .off2 = J(break_torque)},
    {.name = "collide", .value = LS_SV_FLAG_, .kinds = JALL, .off = J(collide_connected), .lo = 1},
};

// ---- vehicle (fields of ls_scene_vehicle) ----

#define V(field) offsetof(ls_scene_vehicle, field)
static const char *const probes[] = {"ray", "sphere", NULL};

static const ls_scene_prop_ vehicle_props[] = {
    // By hand: `car` replaces the whole definition from the chassis box (and
    // is written out wheel by wheel).
    {.name = "car",
     .value = LS_SV_NONE_,
     .when = LS_SW_NEVER_,
     .flags = LS_SP_BY_HAND_,
     .kinds = ONE},
    {.name = "probe",
     .value = LS_SV_WORD_,
     .when = LS_SW_NOT_DEFAULT_,
     .kinds = ONE,
     .off = V(def.probe),
     .words = probes,
     .allowed = "ray, sphere"},
    {.name = "engine",
     .value = LS_SV_FX_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_RANGE_,
     .kinds = ONE,
     .off = V(def.engine_force),
     .lo = 0,
     .hi = FX(LS_FX_INT(30000))},
    {.name = "brake",
     .value = LS_SV_FX_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_RANGE_,
     .kinds = ONE,
     .off = V(def.brake_force),
     .lo = 0,
     .hi = FX(LS_FX_INT(30000))},
    {.name = "max_steer",
     .value = LS_SV_FX_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_RANGE_,
     .kinds = ONE,
     .off = V(def.max_steer),
     .lo = 0,
     .hi = FX(LS_FX_ONE * 6 / 5)},
    {.name = "steer_rate",
     .value = LS_SV_FX_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_RANGE_,
     .kinds = ONE,
     .off = V(def.steer_rate),
     .lo = 0,
     .hi = FX(LS_FX_INT(64))},
    {.name = "boost",
     .value = LS_SV_FX_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_RANGE_,
     .kinds = ONE,
     .off = V(def.boost_force),
     .lo = 0,
     .hi = FX(LS_FX_INT(30000))},
    {.name = "filter",
     .value = LS_SV_U32_2_,
     .when = LS_SW_NOT_DEFAULT_,
     .kinds = ONE,
     .off = V(def.filter.category),
     .off2 = V(def.filter.mask),
     .lo = 0,
     .hi = UINT32_MAX,
     .lo2 = 0,
     .hi2 = UINT32_MAX},
    {.name = "throttle",
     .value = LS_SV_FX_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_RANGE_,
     .kinds = ONE,
     .off = V(controls.throttle),
     .lo = -FX(LS_FX_ONE),
     .hi = FX(LS_FX_ONE)},
    {.name = "steer",
     .value = LS_SV_FX_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_RANGE_,
     .kinds = ONE,
     .off = V(controls.steer),
     .lo = -FX(LS_FX_ONE),
     .hi = FX(LS_FX_ONE)},
    {.name = "braking",
     .value = LS_SV_FX_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_RANGE_,
     .kinds = ONE,
     .off = V(controls.brake),
     .lo = 0,
     .hi = FX(LS_FX_ONE)},
    {.name = "handbrake",
     .value = LS_SV_FLAG_,
     .kinds = ONE,
     .off = V(controls.handbrake),
     .lo = 1},
    {.name = "boosting", .value = LS_SV_FLAG_, .kinds = ONE, .off = V(controls.boost), .lo = 1},
};

// ---- wheel (fields of ls_wheel_def) ----

#define H(field) offsetof(ls_wheel_def, field)
#define WHEEL_FX(key, field, low, high)                                                            \
    {                                                                                              \
        .name = key, .value = LS_SV_FX_, .when = LS_SW_NOT_DEFAULT_, .flags = LS_SP_RANGE_,        \
        .kinds = ONE, .off = H(field), .lo = FX(low), .hi = FX(high)                               \
    }

static const ls_scene_prop_ wheel_props[] = {
    {.name = "mount",
     .value = LS_SV_VEC3_,
     .flags = LS_SP_RANGE_,
     .kinds = ONE,
     .required = ONE,
     .off = H(mount),
     .lo = FX(LS_FX_INT(-64)),
     .hi = FX(LS_FX_INT(64)),
     .why = "needs `mount X Y Z`"},
    {.name = "axis",
     .value = LS_SV_VEC3_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_DIRECTION_,
     .kinds = ONE,
     .off = H(axis)},
    {.name = "forward",
     .value = LS_SV_VEC3_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_DIRECTION_,
     .kinds = ONE,
     .off = H(forward)},
    WHEEL_FX("radius", radius, LS_FX_ONE / 20 + 1, LS_FX_INT(4)),
    WHEEL_FX("rest", rest_length, LS_FX_ONE / 100, LS_FX_INT(4)),
    WHEEL_FX("travel", max_travel, 0, LS_FX_INT(4)),
    WHEEL_FX("spring", stiffness, LS_FX_ONE, INT32_MAX),
    WHEEL_FX("damper", damping, 0, LS_FX_INT(20000)),
    WHEEL_FX("inertia", inertia, LS_FX_ONE / 100, LS_FX_INT(100)),
    WHEEL_FX("drive", drive_share, 0, LS_FX_ONE),
    WHEEL_FX("brake", brake_share, 0, LS_FX_ONE),
    WHEEL_FX("steer", steer_share, -LS_FX_ONE, LS_FX_ONE),
    WHEEL_FX("rolling", rolling_resistance, 0, LS_FX_ONE),
    {.name = "handbrake", .value = LS_SV_FLAG_, .kinds = ONE, .off = H(handbrake), .lo = 1},
    {.name = "friction",
     .value = LS_SV_FX2_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_RANGE_ | LS_SP_DESCENDING_,
     .kinds = ONE,
     .off = H(static_friction),
     .off2 = H(dynamic_friction),
     .lo = 0,
     .hi = FX(LS_FX_INT(4)),
     .lo2 = 0,
     .hi2 = FX(LS_FX_INT(4)),
     .why = "dynamic (sliding) above static"},
    // `slip PEAK SLIDE`: the lateral slip curve's angles, rad (SPEC.md §26.5).
    {.name = "slip",
     .value = LS_SV_FX2_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_RANGE_ | LS_SP_ASCENDING_,
     .kinds = ONE,
     .off = H(peak_slip),
     .off2 = H(slide_slip),
     .lo = 0,
     .hi = FX(LS_FX_ONE * 3 / 2),
     .lo2 = 0,
     .hi2 = FX(LS_FX_ONE * 3 / 2),
     .why = "slide angle below the peak angle"},
    // `anti_roll J STIFFNESS`: by hand (J is another wheel of the vehicle).
    {.name = "anti_roll",
     .value = LS_SV_INDEX_FX_,
     .when = LS_SW_NONZERO_,
     .flags = LS_SP_BY_HAND_,
     .kinds = ONE,
     .off = H(anti_roll_pair),
     .off2 = H(anti_roll_stiffness),
     .lo = 0,
     .hi = INT32_MAX},
};

// LS_SV_WORD_ values are stored as an unsigned in an enum field.
_Static_assert(sizeof(ls_wheel_probe) == sizeof(unsigned), "probe is stored as an unsigned");

#define TABLE(t)                                                                                   \
    {                                                                                              \
        t, (uint32_t)(sizeof t / sizeof t[0])                                                      \
    }
const ls_scene_props_ ls_scene_world_props_ = TABLE(world_props);
const ls_scene_props_ ls_scene_joint_props_ = TABLE(joint_props);
const ls_scene_props_ ls_scene_vehicle_props_ = TABLE(vehicle_props);
const ls_scene_props_ ls_scene_wheel_props_ = TABLE(wheel_props);

int ls_scene_prop_find_(const ls_scene_props_ *t, const char *key)
{
    for (uint32_t i = 0; i < t->count; i++) {
        if (strcmp(key, t->props[i].name) == 0) {
            return (int)i;
        }
    }
    return -1;
}
