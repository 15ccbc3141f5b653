// SPDX-License-Identifier: MIT
// Mass properties of shapes (uniform density), computed in 64-bit fixed point.
#ifndef LS_MASS_H
#define LS_MASS_H

#include "ls/world.h"

/// Mass, its inverse and the principal inverse inertia in the body frame.
typedef struct ls_mass_props {
    ls_fx mass;
    ls_fx inv_mass;
    ls_vec3 inv_inertia;
} ls_mass_props;

/// Mass properties of a dynamic body's shape. Refuses (LS_ERR_OUT_OF_RANGE, with
/// a message) a mass outside 0.01..1000 kg or a principal inertia outside
/// 1/1024..32767 kg m^2 (SPEC.md §5).
ls_result ls_mass_compute(const ls_shape_def *s, ls_mass_props *out, ls_error *err);

#endif
