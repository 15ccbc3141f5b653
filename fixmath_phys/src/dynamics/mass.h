// SPDX-License-Identifier: MIT
// Mass properties of bodies made of one or more shapes of uniform density,
// computed in 64-bit fixed point (parallel-axis theorem for compounds).
#ifndef LS_MASS_H
#define LS_MASS_H

#include "../collision/geom.h"

/// One shape of a body: geometry, density and pose in the body frame (from the body origin).
typedef struct ls_mass_part {
    const ls_geom *geom;
    ls_fx density;
    ls_vec3 position;
    ls_quat orientation; ///< unit
} ls_mass_part;

/// Mass, its inverse, the body-frame inverse inertia tensor about the centre
/// of mass, and the centre of mass in the body frame.
typedef struct ls_mass_props {
    ls_fx mass;
    ls_fx inv_mass;
    ls_mat3 inv_inertia;
    ls_vec3 center;
} ls_mass_props;

/// Mass properties of a dynamic body's shapes. Refuses (LS_ERR_OUT_OF_RANGE,
/// with a message) a mass outside 0.01..1000 kg, a principal inertia outside
/// 1/1024..32767 kg m^2 or an inverse inertia tensor outside [-1024, 1024]
/// per entry (SPEC.md §5).
ls_result ls_mass_compute_(const ls_mass_part *parts, uint32_t count, ls_mass_props *out,
                           ls_error *err);

#endif
