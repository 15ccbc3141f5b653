// SPDX-License-Identifier: MIT
// Narrow phase: contact manifolds between pairs of shapes.
#ifndef LS_COLLIDE_H
#define LS_COLLIDE_H

#include "geom.h"

/// Build the world transform of a body from position and orientation.
ls_xform ls_xform_make_(ls_vec3 p, ls_quat q);

/// World-space AABB of a shape on a body with transform xf, grown by margin.
/// Planes return a huge box (+-LS_FX_MAX / 2).
ls_aabb ls_geom_aabb_(const ls_geom *g, const ls_xform *xf, ls_fx margin);

/// Contact manifold between shape a (on transform xa) and shape b (on xb).
/// Points are reported when the surfaces are closer than `margin` (depth >
/// -margin). The normal points from a to b. Returns m->count (0 = no contact).
/// Any pair of kinds is accepted; the implementation swaps internally so that
/// the result is always expressed with a first. Plane-plane gives 0.
ls_manifold_fn ls_collide_;

#endif
