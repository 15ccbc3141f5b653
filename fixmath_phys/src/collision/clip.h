// SPDX-License-Identifier: MIT
// The one polygon clipper of the narrow phase: Sutherland-Hodgman clipping
// of a labelled convex polygon (an incident face, or a mesh triangle) to the
// side planes of a reference face, one plane at a time. Used by box-box
// (collide_box.c), hull-hull (collide_hull.c) and triangle-convex (mesh.c).
//
// The clipper decides, the caller measures. Each narrow phase has its own
// arithmetic for a plane (box-frame coordinates, Q32.32 side distances,
// Q2.30 unit normals) and its own rounding of a crossing, and both are part
// of its contract (and of the golden checksums), so a plane comes with an
// ls_clip_rule of the caller's. What is shared is the walk and its labels:
// which points are kept, which crossings are made, in which order, and the
// label of every edge, from which the callers build their feature ids.
//
// Everything here is inline: box-box face contacts clip four times per
// touching pair and step, and with the clipper inline each caller's rule is a
// constant, so its distance and crossing are direct calls or inlined code,
// as when each file had its own copy (no call through a pointer per point).
#ifndef LS_COLLISION_CLIP_H
#define LS_COLLISION_CLIP_H

#include "geom.h"
#include "ls/hull.h"

#include <string.h>

/// Most points any caller keeps: collide_hull.c's bound (a hull face clipped
/// by up to as many side planes, plus slack), the largest of the three.
#define LS_CLIP_MAX (2 * LS_HULL_MAX_VERTICES + 8)

/// A convex polygon: points p[0 .. n) and lab[i], the label of the edge from
/// p[i] to p[i + 1] (an edge of the polygon as given, or a clipping plane).
/// A point beyond `cap` is dropped, so each caller keeps its own bound.
typedef struct ls_clip_poly {
    int n;
    int cap; ///< most points kept, at most LS_CLIP_MAX
    ls_vec3 p[LS_CLIP_MAX];
    uint8_t lab[LS_CLIP_MAX];
} ls_clip_poly;

/// How one kind of plane measures a point and places a crossing, in its
/// caller's arithmetic (`plane` is the caller's description of the plane).
typedef struct ls_clip_rule {
    /// Signed distance of p from the plane, > 0 outside, in any unit that
    /// `crossing` understands.
    int64_t (*distance)(const void *plane, ls_vec3 p);
    /// Where edge a -> b crosses the plane, from the distances of its ends
    /// (of opposite signs, neither zero).
    ls_vec3 (*crossing)(const void *plane, ls_vec3 a, ls_vec3 b, int64_t da, int64_t db);
} ls_clip_rule;

/// Make poly empty, keeping at most cap (<= LS_CLIP_MAX) points.
static inline void ls_clip_start(ls_clip_poly *poly, int cap)
{
    LS_ASSERT(cap >= 0 && cap <= LS_CLIP_MAX);
    poly->n = 0;
    poly->cap = cap;
}

/// Append point p and the label of the edge leaving it (dropped when full).
static inline void ls_clip_push(ls_clip_poly *poly, ls_vec3 p, uint8_t lab)
{
    if (poly->n < poly->cap) {
        poly->p[poly->n] = p;
        poly->lab[poly->n] = lab;
        poly->n++;
    }
}

/// Clip poly, in place, to the inside of one plane (distance <= 0): points
/// on the plane count as inside and are never duplicated by a crossing; each
/// kept point keeps its label, and an edge that now runs along the plane gets
/// `label`. The points stay in order, starting from the first one kept or
/// made. scratch is working space (its contents are lost).
static inline void ls_clip(ls_clip_poly *poly, ls_clip_poly *scratch, const ls_clip_rule *rule,
                           const void *plane, uint8_t label)
{
    // Each edge a -> b gives what of it is inside, a included and b not: a
    // when it is inside, then the crossing when the edge leaves; only the
    // crossing when it enters. The edge leaving a new point runs along the
    // plane where the polygon leaves (a crossing, or a point on the plane
    // whose next point is outside); otherwise it lies on an edge of the
    // polygon as given and keeps its label. Each distance is measured once.
    int64_t d[LS_CLIP_MAX];
    int n = poly->n;
    for (int i = 0; i < n; i++) {
        d[i] = rule->distance(plane, poly->p[i]);
    }
    ls_clip_start(scratch, poly->cap);
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        ls_vec3 a = poly->p[i], b = poly->p[j];
        int64_t da = d[i], db = d[j];
        if (da <= 0 && db <= 0) {
            ls_clip_push(scratch, a, poly->lab[i]);
        } else if (da == 0) {
            ls_clip_push(scratch, a, label); // leaves along the plane from a itself
        } else if (da < 0) {
            ls_clip_push(scratch, a, poly->lab[i]);
            ls_clip_push(scratch, rule->crossing(plane, a, b, da, db), label);
        } else if (db < 0) {
            ls_clip_push(scratch, rule->crossing(plane, a, b, da, db), poly->lab[i]);
        }
    }
    poly->n = scratch->n;
    memcpy(poly->p, scratch->p, (size_t)scratch->n * sizeof *poly->p);
    memcpy(poly->lab, scratch->lab, (size_t)scratch->n * sizeof *poly->lab);
}

/// Label of the edge arriving at point i of a non-empty polygon (the edge
/// leaving point i - 1): with lab[i], the two features that meet at p[i].
static inline uint8_t ls_clip_label_in(const ls_clip_poly *poly, int i)
{
    return poly->lab[(i + poly->n - 1) % poly->n];
}

#endif
