// SPDX-License-Identifier: MIT
// Inverse of symmetric positive-definite 3x3 matrices.
#include "ls/mat3.h"

#include "mat3_spd2.h"

// One entry of the inverse: cofactor c over the determinant's den (det / 2^4),
// scaled back by 2^sh; false when it does not fit.
static bool inverse_entry(int64_t c, int64_t den, int sh, ls_fx *out)
{
    int64_t n = c * ((int64_t)1 << 28);
    int64_t q = (n >= 0 ? n + den / 2 : n - den / 2) / den;
    // Undo the scaling: inverse(m) = inverse(m * 2^sh) * 2^sh.
    if (sh > 0 && (q > (INT64_MAX >> sh) || q < -(INT64_MAX >> sh))) {
        return false;
    }
    int64_t v = ls_shift_round_(q, sh);
    if (v > LS_FX_MAX || v < LS_FX_MIN) {
        return false;
    }
    *out = (ls_fx)v;
    return true;
}

// Why written out (flat arrays, the nine cofactors spelled): indexed by row
// and column through modulo arithmetic and per-entry branches the loops were
// most of the function's time, and the joint solver inverts a K in every
// solve of every joint; the integers are the same.
bool ls_mat3_inverse_spd(ls_mat3 m, ls_mat3 *out)
{
    const ls_fx e[9] = {m.row[0].x, m.row[0].y, m.row[0].z, m.row[1].x, m.row[1].y,
                        m.row[1].z, m.row[2].x, m.row[2].y, m.row[2].z};
    // Scale by a power of two so the largest entry lies in [2^15, 2^16) raw
    // (0.5..1.0): cofactors (Q32.32, < 2^33) and the determinant (Q48, < 2^51)
    // are then exact in 64 bits. The inverse scales back by the same power.
    uint32_t mx = 0;
    for (int k = 0; k < 9; k++) {
        uint32_t v = (uint32_t)ls_fx_abs(e[k]);
        mx = v > mx ? v : mx;
    }
    if (mx == 0) {
        return false;
    }
    int sh = 15 - (31 - __builtin_clz(mx));
    int64_t a[9];
    for (int k = 0; k < 9; k++) {
        a[k] = ls_shift_round_(e[k], sh);
    }
    // Cofactor matrix (Q32.32): c[i][j] = a[i1][j1] a[i2][j2] - a[i1][j2] a[i2][j1],
    // i1 = i + 1, i2 = i + 2 (mod 3), the same for j.
    int64_t c[9];
    c[0] = a[4] * a[8] - a[5] * a[7];
    c[1] = a[5] * a[6] - a[3] * a[8];
    c[2] = a[3] * a[7] - a[4] * a[6];
    c[3] = a[7] * a[2] - a[8] * a[1];
    c[4] = a[8] * a[0] - a[6] * a[2];
    c[5] = a[6] * a[1] - a[7] * a[0];
    c[6] = a[1] * a[5] - a[2] * a[4];
    c[7] = a[2] * a[3] - a[0] * a[5];
    c[8] = a[0] * a[4] - a[1] * a[3];
    int64_t det = a[0] * c[0] + a[1] * c[1] + a[2] * c[2]; // Q48
    if (det <= 0 || a[0] <= 0 || c[8] <= 0) {
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
    bool symmetric = e[1] == e[3] && e[2] == e[6] && e[5] == e[7];
    ls_fx r[9];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            if (symmetric && j < i) {
                r[3 * i + j] = r[3 * j + i];
            } else if (!inverse_entry(c[3 * j + i], den, sh, &r[3 * i + j])) {
                return false;
            }
        }
    }
    out->row[0] = ls_vec3_make(r[0], r[1], r[2]);
    out->row[1] = ls_vec3_make(r[3], r[4], r[5]);
    out->row[2] = ls_vec3_make(r[6], r[7], r[8]);
    return true;
}

// The steps of ls_mat3_inverse_spd with e = (k00, k01, 0, k01, k11, 0, 0, 0,
// 1): the scaled entries a2, a5, a6, a7 are 0, so c2, c5, c6, c7 = 0 and c0 =
// a4 a8, c1 = -a3 a8, c3 = -a8 a1, c4 = a8 a0 (exact integers, so the
// same values), the matrix is symmetric, and the entries of a zero cofactor
// are 0 (0 + den/2 over den > 0 is 0, which always fits).
bool ls_mat3_inverse_spd2_(ls_fx k00, ls_fx k01, ls_fx k11, ls_mat3 *out)
{
    uint32_t mx = LS_FX_ONE;
    const ls_fx e[3] = {k00, k01, k11};
    for (int k = 0; k < 3; k++) {
        uint32_t v = (uint32_t)ls_fx_abs(e[k]);
        mx = v > mx ? v : mx;
    }
    int sh = 15 - (31 - __builtin_clz(mx));
    int64_t a0 = ls_shift_round_(k00, sh), a1 = ls_shift_round_(k01, sh),
            a4 = ls_shift_round_(k11, sh), a8 = ls_shift_round_(LS_FX_ONE, sh);
    int64_t c0 = a4 * a8, c1 = -(a1 * a8), c4 = a8 * a0, c8 = a0 * a4 - a1 * a1;
    int64_t det = a0 * c0 + a1 * c1;
    if (det <= 0 || a0 <= 0 || c8 <= 0) {
        return false;
    }
    int64_t den = det >> 4;
    if (den == 0) {
        return false;
    }
    ls_fx r0, r1, r4, r8;
    if (!inverse_entry(c0, den, sh, &r0) || !inverse_entry(c1, den, sh, &r1) ||
        !inverse_entry(c4, den, sh, &r4) || !inverse_entry(c8, den, sh, &r8)) {
        return false;
    }
    out->row[0] = ls_vec3_make(r0, r1, 0);
    out->row[1] = ls_vec3_make(r1, r4, 0);
    out->row[2] = ls_vec3_make(0, 0, r8);
    return true;
}
