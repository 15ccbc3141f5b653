// SPDX-License-Identifier: MIT
// Inverse of symmetric positive-definite 3x3 matrices.
#include "ls/mat3.h"

static ls_fx get(const ls_mat3 *m, int i, int j)
{
    const ls_vec3 *r = &m->row[i];
    return j == 0 ? r->x : j == 1 ? r->y : r->z;
}

static void set(ls_mat3 *m, int i, int j, ls_fx v)
{
    ls_vec3 *r = &m->row[i];
    if (j == 0) {
        r->x = v;
    } else if (j == 1) {
        r->y = v;
    } else {
        r->z = v;
    }
}

bool ls_mat3_inverse_spd(ls_mat3 m, ls_mat3 *out)
{
    // Scale by a power of two so the largest entry lies in [2^15, 2^16) raw
    // (0.5..1.0): cofactors (Q32.32, < 2^33) and the determinant (Q48, < 2^51)
    // are then exact in 64 bits. The inverse scales back by the same power.
    uint32_t mx = 0;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            uint32_t a = (uint32_t)ls_fx_abs(get(&m, i, j));
            mx = a > mx ? a : mx;
        }
    }
    if (mx == 0) {
        return false;
    }
    int sh = 15 - (31 - __builtin_clz(mx));
    int64_t a[3][3];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            a[i][j] = ls_shift_round_(get(&m, i, j), sh);
        }
    }
    int64_t c[3][3]; // cofactor matrix, Q32.32
    for (int i = 0; i < 3; i++) {
        int i1 = (i + 1) % 3, i2 = (i + 2) % 3;
        for (int j = 0; j < 3; j++) {
            int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            c[i][j] = a[i1][j1] * a[i2][j2] - a[i1][j2] * a[i2][j1];
        }
    }
    int64_t det = a[0][0] * c[0][0] + a[0][1] * c[0][1] + a[0][2] * c[0][2]; // Q48
    if (det <= 0 || a[0][0] <= 0 || c[2][2] <= 0) {
        return false; // Sylvester's criterion: leading minors must be positive
    }
    // inverse = cofactor^T / det in Q16.16 of the scaled matrix: c * 2^32 / det,
    // computed as (c * 2^28) / (det / 2^4) to stay inside 64 bits.
    int64_t den = det >> 4;
    if (den == 0) {
        return false;
    }
    // A symmetric m (every caller's K) has a symmetric cofactor matrix, exactly:
    // its lower triangle is the upper one mirrored, without three divisions.
    bool symmetric =
        m.row[0].y == m.row[1].x && m.row[0].z == m.row[2].x && m.row[1].z == m.row[2].y;
    ls_mat3 r;
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            if (symmetric && j < i) {
                set(&r, i, j, get(&r, j, i));
                continue;
            }
            int64_t n = c[j][i] * ((int64_t)1 << 28);
            int64_t q = (n >= 0 ? n + den / 2 : n - den / 2) / den;
            // Undo the scaling: inverse(m) = inverse(m * 2^sh) * 2^sh.
            if (sh > 0 && (q > (INT64_MAX >> sh) || q < -(INT64_MAX >> sh))) {
                return false;
            }
            int64_t v = ls_shift_round_(q, sh);
            if (v > LS_FX_MAX || v < LS_FX_MIN) {
                return false;
            }
            set(&r, i, j, (ls_fx)v);
        }
    }
    *out = r;
    return true;
}
