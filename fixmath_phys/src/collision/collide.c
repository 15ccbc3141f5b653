// SPDX-License-Identifier: MIT
// Narrow-phase entry points: transforms, AABBs and the pair dispatch through
// the shape registry (shape_kind.h).
#include "collide.h"
#include "collide_internal.h"
#include "shape_kind.h"

#include <string.h>

ls_xform ls_xform_make_(ls_vec3 p, ls_quat q)
{
    ls_xform xf = {p, q, ls_mat3_from_quat(q)};
    return xf;
}

ls_aabb ls_geom_aabb_(const ls_geom *g, const ls_xform *xf, ls_fx margin)
{
    return ls_shape_kind_of(g->kind)->aabb(g, xf, margin);
}

int ls_collide_(const ls_geom *a, const ls_xform *xa, const ls_geom *b, const ls_xform *xb,
                ls_fx margin, ls_manifold *m)
{
    memset(m, 0, sizeof *m);
    // Each pair has one routine, in the row of one of its kinds; the swapped
    // pair has the same midpoints, depths and features, only the normal's
    // direction changes.
    ls_collide_fn fn = ls_shape_kind_of(a->kind)->collide[b->kind];
    if (fn) {
        fn(a, xa, b, xb, margin, m);
    } else if ((fn = ls_shape_kind_of(b->kind)->collide[a->kind]) != NULL) {
        fn(b, xb, a, xa, margin, m);
        m->normal = ls_vec3_neg(m->normal);
    }
    if (m->count == 0) {
        memset(m, 0, sizeof *m); // a routine may have set the normal before rejecting
    }
    return m->count;
}
