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
// the parser looks keywords up by name. What does not fit a table is read by
// a small hand-written function of the statement's parser (LS_SP_BY_HAND_) yet
// still has its one entry here: `car`, `anti_roll` (a wheel of the vehicle),
// the world's `restitution_threshold` (its message predates the walker's),
// the soccer `ball` (a dynamic body), shape data (`points`, `vertices`,
// `triangles`, `obj`: built at the end of the line), `player`, `label` and
// `pinned`. The words that give a statement its kind (body type, shape kind,
// joint type, game) are not properties: each statement's parser reads them.
#include "scene_props.h"

#include "ls/particles.h"
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
     .flags = LS_SP_REPEATABLE_,
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
     .flags = LS_SP_BY_HAND_ | LS_SP_REPEATABLE_,
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

// ---- body and shape lines (fields of ls_shape_def and ls_body_def) ----

#define SH(field)  offsetof(ls_shape_def, field)
#define B(field)   offsetof(ls_body_def, field)
#define K(type)    (1u << (type))
#define ALL_SHAPES ((1u << (LS_SCENE_SHAPE_OTHER_ + 1)) - 1u)
#define PLANES     (K(LS_SHAPE_PLANE) | K(LS_SCENE_PLANE_ALONE_))
#define NOT_ALONE  (ALL_SHAPES & ~K(LS_SCENE_PLANE_ALONE_))
#define SHAPE_FX(key, field, shown_, flags_)                                                       \
    {                                                                                              \
        .name = key, .value = LS_SV_FX_, .flags = flags_, .kinds = ALL_SHAPES, .shown = shown_,    \
        .off = SH(field)                                                                           \
    }

static const ls_scene_prop_ shape_props[] = {
    {.name = "normal",
     .value = LS_SV_VEC3_,
     .when = LS_SW_NONZERO_, // `normal 0 0 0` does not parse
     .flags = LS_SP_DIRECTION_,
     .kinds = ALL_SHAPES,
     .shown = PLANES,
     .off = SH(normal)},
    SHAPE_FX("d", plane_d, PLANES, 0),
    {.name = "half",
     .value = LS_SV_VEC3_,
     .flags = LS_SP_GEOMETRY_,
     .kinds = ALL_SHAPES,
     .shown = K(LS_SHAPE_BOX),
     .off = SH(half_extents)},
    SHAPE_FX("radius", radius, K(LS_SHAPE_SPHERE) | K(LS_SHAPE_CAPSULE), LS_SP_GEOMETRY_),
    SHAPE_FX("half_height", half_height, K(LS_SHAPE_CAPSULE), LS_SP_GEOMETRY_),
    // Hull vertices as `points N ...` (building a hull from its own vertices
    // gives the same hull), mesh data inline as `vertices N ... triangles M ...`;
    // read by hand (the hull or mesh is built at the end of the line).
    {.name = "points",
     .value = LS_SV_HULL_POINTS_,
     .flags = LS_SP_BY_HAND_ | LS_SP_GEOMETRY_,
     .kinds = ALL_SHAPES,
     .shown = K(LS_SHAPE_HULL),
     .off = SH(hull)},
    {.name = "vertices",
     .value = LS_SV_MESH_VERTICES_,
     .flags = LS_SP_BY_HAND_,
     .kinds = ALL_SHAPES,
     .shown = K(LS_SHAPE_MESH),
     .off = SH(mesh)},
    {.name = "triangles",
     .value = LS_SV_MESH_TRIANGLES_,
     .flags = LS_SP_BY_HAND_,
     .kinds = ALL_SHAPES,
     .shown = K(LS_SHAPE_MESH),
     .off = SH(mesh)},
    // `obj FILE`: read by hand; the mesh is written inline.
    {.name = "obj",
     .value = LS_SV_NONE_,
     .when = LS_SW_NEVER_,
     .flags = LS_SP_BY_HAND_,
     .kinds = ALL_SHAPES},
    {.name = "at",
     .value = LS_SV_VEC3_,
     .flags = LS_SP_GEOMETRY_,
     .when = LS_SW_NONZERO_,
     .kinds = ALL_SHAPES,
     .off = SH(local_position)},
    {.name = "rot",
     .value = LS_SV_QUAT_,
     .flags = LS_SP_GEOMETRY_,
     .when = LS_SW_NOT_IDENTITY_,
     .kinds = ALL_SHAPES,
     .off = SH(local_orientation)},
    SHAPE_FX("density", density, NOT_ALONE, 0),
    SHAPE_FX("friction", friction, 0, 0),
    SHAPE_FX("restitution", restitution, 0, 0),
    {.name = "filter",
     .value = LS_SV_U32_2_,
     .kinds = ALL_SHAPES,
     .off = SH(category),
     .off2 = SH(mask),
     .lo = 0,
     .hi = UINT32_MAX,
     .lo2 = 0,
     .hi2 = UINT32_MAX},
};

#define BODY_VEC3(key, field)                                                                      \
    {                                                                                              \
        .name = key, .value = LS_SV_VEC3_, .kinds = ALL_SHAPES, .shown = NOT_ALONE,                \
        .off = B(field)                                                                            \
    }
#define BODY_FLAG(key, field, set)                                                                 \
    {                                                                                              \
        .name = key, .value = LS_SV_FLAG_, .kinds = ALL_SHAPES, .off = B(field), .lo = set         \
    }

static const ls_scene_prop_ body_props[] = {
    BODY_VEC3("pos", position),
    {.name = "quat",
     .value = LS_SV_QUAT_,
     .when = LS_SW_NOT_DEFAULT_,
     .kinds = ALL_SHAPES,
     .shown = NOT_ALONE,
     .off = B(orientation)},
    BODY_VEC3("vel", linear_velocity),
    BODY_VEC3("angvel", angular_velocity),
    {.name = "linear_damping",
     .value = LS_SV_FX_,
     .kinds = ALL_SHAPES,
     .shown = NOT_ALONE,
     .off = B(linear_damping)},
    {.name = "angular_damping",
     .value = LS_SV_FX_,
     .kinds = ALL_SHAPES,
     .shown = NOT_ALONE,
     .off = B(angular_damping)},
    BODY_FLAG("asleep", awake, 0),
    BODY_FLAG("no_sleep", allow_sleep, 0),
    BODY_FLAG("bullet", bullet, 1),
    // By hand, and written by the body line's writer: `player K` is kept in
    // the scene's player table, `label NAME` in its labels.
    {.name = "player",
     .value = LS_SV_NONE_,
     .when = LS_SW_NEVER_,
     .flags = LS_SP_BY_HAND_,
     .kinds = ALL_SHAPES,
     .lo = 0,
     .hi = LS_SCENE_MAX_PLAYERS - 1},
    {.name = "label",
     .value = LS_SV_NONE_,
     .when = LS_SW_NEVER_,
     .flags = LS_SP_BY_HAND_,
     .kinds = ALL_SHAPES},
};

// ---- game (fields of ls_scene_soccer; kinds: bit per ls_scene_game) ----

#define G(field) offsetof(ls_scene_soccer, field)
#define SOCCER   (1u << LS_SCENE_GAME_SOCCER)
#define GOAL(key, field, low)                                                                      \
    {                                                                                              \
        .name = key, .value = LS_SV_FX_, .flags = LS_SP_RANGE_, .kinds = SOCCER,                   \
        .required = SOCCER, .off = G(field), .lo = FX(low), .hi = FX(LS_FX_INT(1000)),             \
        .why = "needs `" key "`"                                                                   \
    }

static const ls_scene_prop_ game_props[] = {
    // By hand: the ball must be a dynamic body.
    {.name = "ball",
     .value = LS_SV_BODY_,
     .flags = LS_SP_BY_HAND_ | LS_SP_ZERO_BASED_,
     .kinds = SOCCER,
     .required = SOCCER,
     .off = G(ball_body),
     .why = "needs `ball`"},
    GOAL("goal_z", goal_z, LS_FX_ONE / 2),
    GOAL("goal_half_width", goal_half_width, LS_FX_ONE / 10 + 1),
    GOAL("goal_height", goal_height, LS_FX_ONE / 10 + 1),
    {.name = "kickoff",
     .value = LS_SV_U32_,
     .kinds = SOCCER,
     .off = G(kickoff_ticks),
     .lo = 0,
     .hi = 100000},
};

// ---- particle statements (fields of ls_scene_particles; SPEC.md §14, §24) ----

#define P(field) offsetof(ls_scene_particles, field)
// Masses at parse time: 0.001 kg .. the largest Q16.16 (the builders check
// what each particle gets).
#define MASS_MIN 66
#define MASS_MAX INT32_MAX
#define PARTICLE_FX(key, field, when_, low, high)                                                  \
    {                                                                                              \
        .name = key, .value = LS_SV_FX_, .when = when_, .flags = LS_SP_RANGE_, .kinds = ONE,       \
        .off = P(field), .lo = FX(low), .hi = FX(high)                                             \
    }
#define PARTICLE_VEC3(key, field, when_)                                                           \
    {                                                                                              \
        .name = key, .value = LS_SV_VEC3_, .when = when_, .kinds = ONE, .off = P(field)            \
    }
#define PARTICLE_FLAG(key, field, set)                                                             \
    {                                                                                              \
        .name = key, .value = LS_SV_FLAG_, .kinds = ONE, .off = P(field), .lo = set                \
    }
#define TEAR(field)                                                                                \
    {                                                                                              \
        .name = "tear", .value = LS_SV_FX_, .when = LS_SW_NOT_DEFAULT_, .flags = LS_SP_OR_ZERO_,   \
        .kinds = ONE, .off = P(field), .lo = FX(LS_FX_ONE), .hi = FX(LS_FX_INT(64))                \
    }

static const ls_scene_prop_ cloth_props[] = {
    PARTICLE_VEC3("origin", cloth.origin, LS_SW_ALWAYS_),
    {.name = "axis_u",
     .value = LS_SV_VEC3_,
     .flags = LS_SP_DIRECTION_,
     .kinds = ONE,
     .off = P(cloth.axis_u)},
    {.name = "axis_v",
     .value = LS_SV_VEC3_,
     .flags = LS_SP_DIRECTION_,
     .kinds = ONE,
     .off = P(cloth.axis_v)},
    {.name = "grid",
     .value = LS_SV_U32_2_,
     .kinds = ONE,
     .off = P(cloth.nu),
     .off2 = P(cloth.nv),
     .lo = 2,
     .hi = 256,
     .lo2 = 2,
     .hi2 = 256},
    PARTICLE_FX("spacing", cloth.spacing, LS_SW_ALWAYS_, LS_FX_ONE / 100, LS_FX_INT(64)),
    PARTICLE_FX("mass", cloth.mass, LS_SW_ALWAYS_, MASS_MIN, MASS_MAX),
    PARTICLE_FX("radius", cloth.radius, LS_SW_ALWAYS_, 0, LS_FX_INT(64)),
    PARTICLE_FLAG("no_shear", cloth.shear, 0),
    PARTICLE_FLAG("no_bend", cloth.bend, 0),
    PARTICLE_FX("bend_stiffness", cloth.bend_stiffness, LS_SW_NOT_DEFAULT_, 1, LS_FX_ONE),
    TEAR(cloth.tear_ratio),
    {.name = "pins",
     .value = LS_SV_PINS_,
     .when = LS_SW_NOT_DEFAULT_,
     .kinds = ONE,
     .off = P(cloth.pins)},
};

static const char *const rope_pins[] = {"none", "start", "end", "both", NULL};

static const ls_scene_prop_ rope_props[] = {
    PARTICLE_VEC3("from", rope.start, LS_SW_ALWAYS_),
    PARTICLE_VEC3("to", rope.end, LS_SW_ALWAYS_),
    {.name = "segments",
     .value = LS_SV_U32_,
     .kinds = ONE,
     .off = P(rope.segments),
     .lo = 1,
     .hi = 4096},
    PARTICLE_FX("mass", rope.mass, LS_SW_ALWAYS_, MASS_MIN, MASS_MAX),
    PARTICLE_FX("end_mass", rope.end_mass, LS_SW_NOT_DEFAULT_, 0, LS_FX_INT(1000)),
    PARTICLE_FX("radius", rope.radius, LS_SW_ALWAYS_, 0, LS_FX_INT(64)),
    PARTICLE_FLAG("slack", rope.slack, 1),
    PARTICLE_FLAG("no_long_range", rope.long_range, 0),
    TEAR(rope.tear_ratio),
    {.name = "pin",
     .value = LS_SV_WORD_BOOLS_,
     .when = LS_SW_NOT_DEFAULT_,
     .kinds = ONE,
     .off = P(rope.pin_start),
     .off2 = P(rope.pin_end),
     .words = rope_pins,
     .allowed = "none, start, end, both"},
    {.name = "attach_start",
     .value = LS_SV_BODY_,
     .when = LS_SW_NONZERO_,
     .kinds = ONE,
     .off = P(rope.attach_start.index1)},
    {.name = "attach_end",
     .value = LS_SV_BODY_,
     .when = LS_SW_NONZERO_,
     .kinds = ONE,
     .off = P(rope.attach_end.index1)},
};

static const ls_scene_prop_ ragdoll_props[] = {
    PARTICLE_VEC3("pos", ragdoll.position, LS_SW_ALWAYS_),
    {.name = "quat",
     .value = LS_SV_QUAT_,
     .when = LS_SW_NOT_DEFAULT_,
     .kinds = ONE,
     .off = P(ragdoll.orientation)},
    PARTICLE_FX("height", ragdoll.height, LS_SW_ALWAYS_, LS_FX_ONE / 5, LS_FX_INT(10)),
    PARTICLE_FX("mass", ragdoll.mass, LS_SW_ALWAYS_, MASS_MIN, MASS_MAX),
    PARTICLE_FX("radius", ragdoll.radius, LS_SW_ALWAYS_, 0, LS_FX_INT(64)),
    PARTICLE_VEC3("vel", ragdoll.velocity, LS_SW_NOT_DEFAULT_),
};

static const char *const arrangements[] = {"tetra", "box", NULL};

static const ls_scene_prop_ particle_body_props[] = {
    {.name = "particles",
     .value = LS_SV_WORD_,
     .kinds = ONE,
     .off = P(body.kind),
     .words = arrangements,
     .allowed = "tetra, box"},
    PARTICLE_VEC3("pos", body.position, LS_SW_ALWAYS_),
    {.name = "quat",
     .value = LS_SV_QUAT_,
     .when = LS_SW_NOT_DEFAULT_,
     .kinds = ONE,
     .off = P(body.orientation)},
    PARTICLE_VEC3("vel", body.linear_velocity, LS_SW_NOT_DEFAULT_),
    PARTICLE_VEC3("angvel", body.angular_velocity, LS_SW_NOT_DEFAULT_),
    PARTICLE_FX("mass", body.mass, LS_SW_ALWAYS_, MASS_MIN, MASS_MAX),
    PARTICLE_FX("particle_radius", body.radius, LS_SW_ALWAYS_, 0, LS_FX_INT(64)),
};

// `pinned N I...`: particle indices, strictly ascending (read by hand: checked
// against the particle count at the end of the line).
static const ls_scene_prop_ particle_common_props[] = {
    {.name = "pinned",
     .value = LS_SV_INDICES_,
     .when = LS_SW_NONZERO_,
     .flags = LS_SP_BY_HAND_,
     .kinds = ONE,
     .off = P(pinned),
     .off2 = P(pinned_count)},
};

// ---- particle systems (fields of ls_particle_system_def) ----

#define S(field) offsetof(ls_particle_system_def, field)
#define SYSTEM_FX(key, field, low, high)                                                           \
    {                                                                                              \
        .name = key, .value = LS_SV_FX_, .when = LS_SW_NOT_DEFAULT_, .flags = LS_SP_RANGE_,        \
        .kinds = ONE, .off = S(field), .lo = FX(low), .hi = FX(high)                               \
    }
static const char *const stick_modes[] = {"approx", "exact", NULL};

static const ls_scene_prop_ particle_system_props[] = {
    {.name = "iterations",
     .value = LS_SV_U32_,
     .when = LS_SW_NOT_DEFAULT_,
     .kinds = ONE,
     .off = S(iterations),
     .lo = 1,
     .hi = 64},
    {.name = "stick",
     .value = LS_SV_WORD_,
     .when = LS_SW_NOT_DEFAULT_,
     .kinds = ONE,
     .off = S(stick_mode),
     .words = stick_modes,
     .allowed = "approx, exact"},
    SYSTEM_FX("damping", damping, 0, LS_FX_ONE),
    SYSTEM_FX("gravity_scale", gravity_scale, -LS_FX_INT(16), LS_FX_INT(16)),
    SYSTEM_FX("friction", friction, 0, LS_FX_INT(4)),
    {.name = "wind",
     .value = LS_SV_VEC3_,
     .when = LS_SW_NOT_DEFAULT_,
     .flags = LS_SP_RANGE_,
     .kinds = ONE,
     .off = S(acceleration),
     .lo = -FX(LS_FX_INT(1000)),
     .hi = FX(LS_FX_INT(1000))},
    SYSTEM_FX("turbulence", turbulence, 0, LS_FX_INT(1000)),
    {.name = "seed", .value = LS_SV_U64_, .when = LS_SW_NOT_DEFAULT_, .kinds = ONE, .off = S(seed)},
    {.name = "filter",
     .value = LS_SV_U32_2_,
     .when = LS_SW_NOT_DEFAULT_,
     .kinds = ONE,
     .off = S(category),
     .off2 = S(mask),
     .lo = 0,
     .hi = UINT32_MAX,
     .lo2 = 0,
     .hi2 = UINT32_MAX},
    {.name = "no_particle_collision",
     .value = LS_SV_FLAG_,
     .kinds = ONE,
     .off = S(collide_particles),
     .lo = 0},
};

// LS_SV_WORD_ values are stored as an unsigned in an enum field.
_Static_assert(sizeof(ls_wheel_probe) == sizeof(unsigned), "probe is stored as an unsigned");
_Static_assert(sizeof(ls_stick_mode) == sizeof(unsigned), "stick is stored as an unsigned");
_Static_assert(sizeof(ls_particle_body_kind) == sizeof(unsigned),
               "particles is stored as an unsigned");

#define TABLE(t)                                                                                   \
    {                                                                                              \
        t, (uint32_t)(sizeof t / sizeof t[0])                                                      \
    }
const ls_scene_props_ ls_scene_world_props_ = TABLE(world_props);
const ls_scene_props_ ls_scene_joint_props_ = TABLE(joint_props);
const ls_scene_props_ ls_scene_vehicle_props_ = TABLE(vehicle_props);
const ls_scene_props_ ls_scene_wheel_props_ = TABLE(wheel_props);
const ls_scene_props_ ls_scene_game_props_ = TABLE(game_props);
const ls_scene_props_ ls_scene_shape_props_ = TABLE(shape_props);
const ls_scene_props_ ls_scene_body_props_ = TABLE(body_props);
const ls_scene_props_ ls_scene_particle_props_[4] = {
    [LS_SCENE_CLOTH] = TABLE(cloth_props),
    [LS_SCENE_ROPE] = TABLE(rope_props),
    [LS_SCENE_RAGDOLL] = TABLE(ragdoll_props),
    [LS_SCENE_PARTICLE_BODY] = TABLE(particle_body_props),
};
const ls_scene_props_ ls_scene_particle_system_props_ = TABLE(particle_system_props);
const ls_scene_props_ ls_scene_particle_common_props_ = TABLE(particle_common_props);

int ls_scene_prop_find_(const ls_scene_props_ *t, const char *key)
{
    for (uint32_t i = 0; i < t->count; i++) {
        if (strcmp(key, t->props[i].name) == 0) {
            return (int)i;
        }
    }
    return -1;
}
