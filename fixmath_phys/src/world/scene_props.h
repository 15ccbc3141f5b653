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
    LS_SV_U32_AS_U64_, ///< One integer in lo..hi stored in a uint64_t at `off`.
    LS_SV_WORD_,       ///< One of `words` (NULL-terminated), its index in an enum at `off`.
    LS_SV_INDEX_FX_,   ///< A 0-based index (stored 1-based, uint32_t at `off`), then a number at
                       ///< `off2`.
    LS_SV_NONE_, ///< Read by hand (LS_SP_BY_HAND_), never written (a `car` is written wheel by
                 ///< wheel).
} ls_scene_value_;

/// Flags of a property (ls_scene_prop_.flags).
enum {
    LS_SP_RANGE_ = 1u << 0,           ///< Numbers must lie in lo..hi (lo2..hi2 for the second).
    LS_SP_DIRECTION_ = 1u << 1,       ///< A vector that must not be zero.
    LS_SP_ASCENDING_ = 1u << 2,       ///< Two numbers with the first not above the second (`why`).
    LS_SP_DESCENDING_ = 1u << 3,      ///< Two numbers with the second not above the first (`why`).
    LS_SP_SECOND_OPTIONAL_ = 1u << 4, ///< The second number only when the next token is one.
    LS_SP_BY_HAND_ =
        1u << 5, ///< The statement's parser reads it itself (irregular syntax or checks).
};

/// When the writer writes a property (after the statement kind applies).
typedef enum ls_scene_when_ {
    LS_SW_ALWAYS_,      ///< Always.
    LS_SW_NONZERO_,     ///< When some number of it is not 0.
    LS_SW_NOT_DEFAULT_, ///< When it differs from the statement's default.
    LS_SW_ENABLED_,     ///< When the bool at `enable` is true (the keyword sets it when read).
    LS_SW_NEVER_,       ///< Never (LS_SV_NONE_).
} ls_scene_when_;

/// One property keyword of a statement: everything both directions need.
typedef struct ls_scene_prop_ {
    const char *name;  ///< The keyword.
    uint8_t value;     ///< ls_scene_value_.
    uint8_t when;      ///< ls_scene_when_.
    uint16_t flags;    ///< LS_SP_* bits.
    uint32_t kinds;    ///< Statement kinds that take it (bit per kind; joints: type).
    uint32_t degrees;  ///< Kinds whose numbers are angles written in degrees (radians stored).
    uint32_t required; ///< Kinds that must give it (`need` is the message).
    size_t off, off2;  ///< Where the value lives in the statement's struct.
    size_t enable;     ///< A bool set when the keyword is read (LS_SW_ENABLED_), else 0.
    int64_t lo, hi, lo2, hi2; ///< Ranges (integers, or ls_fx raw values); `set` is lo for flags.
    const char *const *words; ///< LS_SV_WORD_: the words, NULL-terminated.
    const char *allowed;      ///< LS_SV_WORD_: the words as the message lists them.
    const char *why;          ///< LS_SP_ASCENDING_/LS_SP_DESCENDING_ message; else `need`.
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

/// The index of keyword `key` in table t, or -1.
int ls_scene_prop_find_(const ls_scene_props_ *t, const char *key);

#endif
