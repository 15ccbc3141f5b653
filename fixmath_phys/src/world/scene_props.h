// SPDX-License-Identifier: MIT
// The property tables of scene statements (SPEC.md §14), shared by the parser
// (scene.c, one reading walker) and the writer (scene_write.c, one writing
// walker). See scene_props.c.
#ifndef LS_WORLD_SCENE_PROPS_H
#define LS_WORLD_SCENE_PROPS_H

#include "ls/scene.h"

#include <stddef.h>
#include <stdint.h>

/// What follows a property keyword in the text, and what it is stored as.
typedef enum ls_scene_value_ {
    LS_SV_FLAG_,  ///< Nothing: the keyword stores `set` in a bool; written when it holds `set`.
    LS_SV_FX_,    ///< One Q16.16 number (ls_fx at `off`).
    LS_SV_FX2_,   ///< Two numbers (ls_fx at `off` and `off2`).
    LS_SV_VEC3_,  ///< Three numbers (ls_vec3 at `off`).
    LS_SV_U32_,   ///< One integer in lo..hi (uint32_t at `off`).
    LS_SV_U32_2_, ///< Two integers: lo..hi (at `off`), lo2..hi2 (at `off2`).
    LS_SV_U32_AS_U64_,  ///< One integer in lo..hi stored in a uint64_t at `off`.
    LS_SV_WORD_,        ///< One of `words` (NULL-terminated), its index in an enum at `off`.
    LS_SV_INDEX_FX_,    ///< A 0-based index (stored 1-based, uint32_t at `off`), then a number at
                        ///< `off2`.
    LS_SV_U64_,         ///< One integer 0..2^64-1 (uint64_t at `off`).
    LS_SV_QUAT_,        ///< Four numbers X Y Z W, normalisable (ls_quat at `off`).
    LS_SV_BODY_,        ///< A body: 0-based index or label (stored 1-based, uint32_t at `off`).
    LS_SV_WORD_BOOLS_,  ///< One of `words`: bit 0 of its index in a bool at `off`, bit 1 at `off2`.
    LS_SV_PINS_,        ///< Cloth pin names joined by '+', or `none` (uint32_t bits at `off`).
    LS_SV_INDICES_,     ///< `N I...` (read by hand): uint32_t * at `off`, uint32_t count at `off2`.
    LS_SV_HULL_POINTS_, ///< `points N x y z ...` (read by hand): the ls_hull * at `off`.
    LS_SV_MESH_VERTICES_,  ///< `vertices N x y z ...` (read by hand): the ls_mesh * at `off`.
    LS_SV_MESH_TRIANGLES_, ///< `triangles M i j k ...` (read by hand): the ls_mesh * at `off`.
    LS_SV_NONE_, ///< Read by hand (LS_SP_BY_HAND_); written by hand or never (`car`, `obj`).
} ls_scene_value_;

/// Flags of a property (ls_scene_prop_.flags).
enum {
    LS_SP_RANGE_ = 1u << 0,           ///< Numbers must lie in lo..hi (lo2..hi2 for the second).
    LS_SP_DIRECTION_ = 1u << 1,       ///< A vector that must not be zero.
    LS_SP_ASCENDING_ = 1u << 2,       ///< Two numbers with the first not above the second (`why`).
    LS_SP_DESCENDING_ = 1u << 3,      ///< Two numbers with the second not above the first (`why`).
    LS_SP_SECOND_OPTIONAL_ = 1u << 4, ///< The second number only when the next token is one.
    LS_SP_BY_HAND_ = 1u << 5,         ///< Read by the statement's parser itself (irregular syntax).
    LS_SP_OR_ZERO_ = 1u << 6,         ///< A number that is 0 (never) or in lo..hi.
    LS_SP_ZERO_BASED_ = 1u << 7,      ///< LS_SV_BODY_ stored 0-based.
    LS_SP_REPEATABLE_ = 1u << 8, ///< May be given twice on a line, the last wins (kept as it was).
    LS_SP_GEOMETRY_ = 1u << 9,   ///< Shape geometry a particle_body embeds (with the shape kind).
};

/// When the writer writes a property (after the statement kind applies).
typedef enum ls_scene_when_ {
    LS_SW_ALWAYS_,       ///< Always.
    LS_SW_NONZERO_,      ///< When it is not 0 (some number; an index or count: that).
    LS_SW_NOT_DEFAULT_,  ///< When it differs from the statement's default.
    LS_SW_ENABLED_,      ///< When the bool at `enable` is true (the keyword sets it when read).
    LS_SW_NEVER_,        ///< Never (LS_SV_NONE_).
    LS_SW_NOT_IDENTITY_, ///< A quaternion neither the identity nor all zero (a zeroed definition).
} ls_scene_when_;

/// One property keyword of a statement: everything both directions need.
typedef struct ls_scene_prop_ {
    const char *name;  ///< The keyword.
    uint8_t value;     ///< ls_scene_value_.
    uint8_t when;      ///< ls_scene_when_.
    uint16_t flags;    ///< LS_SP_* bits.
    uint32_t kinds;    ///< Statement kinds that take it (bit per kind, e.g. joint type).
    uint32_t shown;    ///< Kinds it is written for when narrower than `kinds` (0: all of them).
    uint32_t degrees;  ///< Kinds whose numbers are angles written in degrees (radians stored).
    uint32_t required; ///< Kinds that must give it (`why` is the message).
    size_t off, off2;  ///< Where the value lives in the statement's struct.
    size_t enable;     ///< A bool set when the keyword is read (LS_SW_ENABLED_), else 0.
    int64_t lo, hi, lo2, hi2; ///< Ranges (integers, or ls_fx raw values); `set` is lo for flags.
    const char *const *words; ///< LS_SV_WORD_: the words, NULL-terminated.
    const char *allowed;      ///< LS_SV_WORD_: the words as the message lists them.
    const char *why;          ///< The message of LS_SP_ASCENDING_/LS_SP_DESCENDING_ or `required`.
} ls_scene_prop_;

/// A statement's table.
typedef struct ls_scene_props_ {
    const ls_scene_prop_ *props; ///< In writing order.
    uint32_t count;              ///< Entries (at most 32: an index is a bit of `seen`).
} ls_scene_props_;

/// `world` (struct: ls_scene), `joint` (ls_joint_def; kind: joint type),
/// `vehicle` (ls_scene_vehicle), `wheel` (ls_wheel_def).
extern const ls_scene_props_ ls_scene_world_props_;
/// See ls_scene_world_props_.
extern const ls_scene_props_ ls_scene_joint_props_;
/// See ls_scene_world_props_.
extern const ls_scene_props_ ls_scene_vehicle_props_;
/// See ls_scene_world_props_.
extern const ls_scene_props_ ls_scene_wheel_props_;

/// The shape kind a body line's shapes are written as when its only shape is
/// a plane (the compact form of version 1 files: no density, pose or motion).
#define LS_SCENE_PLANE_ALONE_ LS_SHAPE_KIND_COUNT
/// The shape kind written for a shape type that is none of ls_shape_type.
#define LS_SCENE_SHAPE_OTHER_ (LS_SHAPE_KIND_COUNT + 1)
/// Shape properties of `body` and `shape` lines (fields of ls_shape_def; kind:
/// shape type, LS_SCENE_PLANE_ALONE_ or LS_SCENE_SHAPE_OTHER_). Every line
/// takes each of them; `shown` says for which shape types they are written.
extern const ls_scene_props_ ls_scene_shape_props_;
/// Body properties of `body` lines (fields of ls_body_def; kinds as for shapes).
extern const ls_scene_props_ ls_scene_body_props_;
/// `game` (fields of ls_scene_soccer; kind: ls_scene_game, push takes none).
extern const ls_scene_props_ ls_scene_game_props_;
/// Particle statements (fields of ls_scene_particles), indexed by
/// ls_scene_particle_kind: the keywords of that statement's builder definition
/// (particle_body's embedded shape is the statement parser's).
extern const ls_scene_props_ ls_scene_particle_props_[4];
/// Every particle statement's ls_particle_system_def keywords.
extern const ls_scene_props_ ls_scene_particle_system_props_;
/// Every particle statement's own keywords (fields of ls_scene_particles): `pinned`.
extern const ls_scene_props_ ls_scene_particle_common_props_;

/// The index of keyword `key` in table t, or -1.
int ls_scene_prop_find_(const ls_scene_props_ *t, const char *key);

#endif
