// SPDX-License-Identifier: MIT
// Gyroscopic motion of free rigid bodies (SPEC.md §11.3). Without a torque a
// body's angular momentum L = R I Rᵀ ω is constant in the world, so ω changes
// as the body turns whenever its inertia is not the same about every axis
// (the tennis-racket flip). Each sub-step, after the orientation has turned
// from R to R', the solver moves ω so that L is unchanged:
//     ω_b = Rᵀ ω,  L_b = I ω_b,  ΔL_b = (R'ᵀ R - 1) L_b,  ω' = ω + R' I⁻¹ ΔL_b
// (R' Rᵀ ω = ω exactly, since the sub-step turns about ω itself). Why a delta:
// the stored I and I⁻¹ are each rounded, so I⁻¹ I is not exactly the identity;
// applied to the whole of ω that rounding would grow or shrink every spin by
// ~0.1 % per sub-step, applied to the small change it is harmless. Why not the
// implicit Newton step of Bullet/Jolt: it needs a 3×3 solve per body per
// sub-step in fixed point; this explicit form keeps L exactly and a guard
// (solver.c) removes any kinetic energy the discretisation would add.
//
// Only the ratio of I to I⁻¹ matters, so both are stored scaled (the largest
// entry of I becomes 1) and fit Q16.16 whatever the body's size.
#include "../world/world_internal.h"

#include <string.h>

static int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

void ls_body_update_gyro_(ls_body *b)
{
    memset(&b->gyro_i, 0, sizeof b->gyro_i);
    memset(&b->gyro_m, 0, sizeof b->gyro_m);
    b->gyro = false;
    if (b->type != LS_BODY_DYNAMIC) {
        return;
    }
    const ls_mat3 *m = &b->inv_inertia;
    int64_t a[3][3];
    ls_fx e[3][3] = {{m->row[0].x, m->row[0].y, m->row[0].z},
                     {m->row[1].x, m->row[1].y, m->row[1].z},
                     {m->row[2].x, m->row[2].y, m->row[2].z}};
    bool diagonal = e[0][1] == 0 && e[0][2] == 0 && e[1][0] == 0 && e[1][2] == 0 && e[2][0] == 0 &&
                    e[2][1] == 0;
    if (diagonal && e[0][0] == e[1][1] && e[1][1] == e[2][2]) {
        return; // isotropic: L and ω stay parallel, nothing to do
    }
    // Normalise I⁻¹ so its largest entry is in [1/2, 1) (Q16.16 raw below
    // 2^16): the cofactors below then stay under 2^34 and the determinant
    // under 2^52.
    int64_t big = 0;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            big = abs64(e[i][j]) > big ? abs64(e[i][j]) : big;
        }
    }
    int64_t n[3][3];
    int shift = 0;
    while ((big >> shift) >= 65536) {
        shift++;
    }
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            n[i][j] = (int64_t)e[i][j] >> shift; // floor: deterministic on every target
        }
    }
    // Adjugate (cofactor transpose; symmetric input gives a symmetric result).
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
            a[i][j] = n[r0][c0] * n[r1][c1] - n[r0][c1] * n[r1][c0];
        }
    }
    int64_t det = n[0][0] * a[0][0] + n[0][1] * a[1][0] + n[0][2] * a[2][0]; // Q48
    int64_t amax = 0;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            amax = abs64(a[i][j]) > amax ? abs64(a[i][j]) : amax;
        }
    }
    if (det <= 0 || amax == 0) {
        return; // not positive definite: leave the body without the gyroscopic term
    }
    // I scaled: adj / amax, so its largest entry is exactly 1.
    int64_t as = amax;
    int down = 0;
    while ((as >> down) >= ((int64_t)1 << 46)) {
        down++;
    }
    ls_fx gi[3][3];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            gi[i][j] = (ls_fx)(((a[i][j] >> down) * 65536) / (amax >> down));
        }
    }
    // I⁻¹ at the same scale: n * amax / det = n / q with q = det / amax (Q16).
    int64_t q = det / amax;
    if (q <= 0) {
        return;
    }
    ls_fx gm[3][3];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            int64_t v = (n[i][j] * 65536) / q;
            if (v > LS_FX_MAX || v < -LS_FX_MAX) {
                return; // too badly conditioned for Q16.16: no gyroscopic term
            }
            gm[i][j] = (ls_fx)v;
        }
    }
    for (int i = 0; i < 3; i++) {
        b->gyro_i.row[i] = ls_vec3_make(gi[i][0], gi[i][1], gi[i][2]);
        b->gyro_m.row[i] = ls_vec3_make(gm[i][0], gm[i][1], gm[i][2]);
    }
    b->gyro = true;
}
