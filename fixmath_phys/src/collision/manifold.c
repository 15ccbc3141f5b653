// SPDX-License-Identifier: MIT
// Reduction of a pair routine's candidate contact points to a manifold of at
// most LS_MANIFOLD_MAX points, shared by the box and hull routines: the
// deepest, the farthest from it, the one making the widest triangle with
// them, then the one that grows that triangle most. Kept points stay in
// candidate order, so the manifold depends only on the candidates; every
// choice is an exact 64-bit comparison with ties to the lowest index.
#include "collide_internal.h"

/// Twice the signed area of triangle (a, b, p) seen along n, in Q32.32.
static int64_t tri_area(ls_vec3 a, ls_vec3 b, ls_vec3 p, ls_vec3 n)
{
    return ls_vec3_dot_q32(ls_vec3_cross(ls_vec3_sub(b, a), ls_vec3_sub(p, a)), n);
}

/// Index of the deepest candidate (ties: lowest index).
static int pick_deepest(const ls_contact_cand *c, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++) {
        if (c[i].depth > c[best].depth) {
            best = i;
        }
    }
    return best;
}

/// Index of the candidate farthest from c[from] (ties: lowest index).
static int pick_farthest(const ls_contact_cand *c, int n, int from)
{
    int best = -1;
    uint64_t best_d = 0;
    for (int i = 0; i < n; i++) {
        uint64_t d = ls_vec3_len_sq_q32(ls_vec3_sub(c[i].p, c[from].p));
        if (i != from && (best < 0 || d > best_d)) {
            best = i;
            best_d = d;
        }
    }
    return best;
}

/// Third point: the largest |area| with c[i0], c[i1]; *orient gets its sign.
static int pick_widest(const ls_contact_cand *c, int n, int i0, int i1, ls_vec3 normal, int *orient)
{
    int best = -1;
    int64_t best_a = -1;
    for (int i = 0; i < n; i++) {
        int64_t a = tri_area(c[i0].p, c[i1].p, c[i].p, normal);
        int64_t mag = a < 0 ? -a : a;
        if (i != i0 && i != i1 && mag > best_a) {
            best = i;
            best_a = mag;
            *orient = a < 0 ? -1 : 1;
        }
    }
    return best;
}

/// Fourth point: the one that grows the triangle tri[] the most, measured as
/// the largest area outside any of its edges; -1 when none lies outside.
static int pick_fourth(const ls_contact_cand *c, int n, const int tri[3], int orient,
                       ls_vec3 normal)
{
    int best = -1;
    int64_t best_gain = 0;
    for (int i = 0; i < n; i++) {
        if (i == tri[0] || i == tri[1] || i == tri[2]) {
            continue;
        }
        for (int e = 0; e < 3; e++) {
            int64_t a = tri_area(c[tri[e]].p, c[tri[(e + 1) % 3]].p, c[i].p, normal);
            int64_t gain = orient > 0 ? -a : a; // positive outside edge e
            if (gain > best_gain) {
                best = i;
                best_gain = gain;
            }
        }
    }
    return best;
}

void ls_manifold_reduce_(const ls_contact_cand *c, int n, ls_manifold *m)
{
    int keep[LS_MANIFOLD_MAX] = {-1, -1, -1, -1};
    if (n > LS_MANIFOLD_MAX) {
        int orient = 1;
        keep[0] = pick_deepest(c, n);
        keep[1] = pick_farthest(c, n, keep[0]);
        keep[2] = pick_widest(c, n, keep[0], keep[1], m->normal, &orient);
        keep[3] = pick_fourth(c, n, keep, orient, m->normal);
    }
    for (int i = 0; i < n; i++) {
        bool kept =
            n <= LS_MANIFOLD_MAX || i == keep[0] || i == keep[1] || i == keep[2] || i == keep[3];
        if (kept) {
            ls_manifold_push(m, c[i].p, c[i].depth, c[i].feature);
        }
    }
}
