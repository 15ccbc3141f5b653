// SPDX-License-Identifier: MIT
// Mass properties of bodies (see mass.h). Each shape kind gives its mass,
// centre and inertia tensor in its own frame (shape_kind.h); this file moves
// them into the body frame and sums them with the parallel-axis theorem.
// Masses are Q16.16 values held in int64 ("wide") so a large shape does not
// saturate before the range check; inertia tensors are Q32.32, every product
// exact in 128 bits and rounded once (a 1/1024 kg m^2 moment keeps 22 bits:
// Q16.16 would leave it 6 and miss the analytic value by up to 0.8 %). A body of one shape at its
// origin with no rotation takes exactly the numbers of that shape (no rotation or shift is rounded
// in), and a diagonal tensor is inverted axis by axis.
#include "mass.h"

#include "../../../core/src/error_field.h"
#include "../collision/collide_internal.h"
#include "../collision/gjk.h"
#include "../collision/shape_kind.h"
#include "ls/fx_text.h"

#include <stdio.h>

#define MASS_MIN    INT64_C(655)                // 0.01 kg
#define MASS_MAX    LS_SHAPE_MASS_MAX_RAW       // 1000 kg
#define INERTIA_MIN (INT64_C(64) << 16)         // 1/1024 kg m^2, Q32.32
#define INERTIA_MAX (INT64_C(0x7FFFFFFF) << 16) // Q32.32
#define INV_MAX     INT64_C(67108864)           // 1024 (kg m^2)^-1

static ls_result refuse(ls_error *err, const char *field, const char *what, int64_t raw)
{
    // Beyond Q16.16 the value is shown in whole units (it has no fixed-point form).
    char text[LS_FX_TEXT_MAX + 8];
    if (raw > LS_FX_MAX || raw < -LS_FX_MAX) {
        snprintf(text, sizeof text, "%lld", (long long)(raw / 65536));
    } else {
        ls_fx_format((ls_fx)raw, text);
    }
    ls_error_set_field_(err, LS_ERR_OUT_OF_RANGE, field,
                        "%s %s outside the supported range (SPEC.md section 5)", what, text);
    return LS_ERR_OUT_OF_RANGE;
}

// Symmetric tensor as a full wide matrix t[i][j].
static void tensor_full(const int64_t in[6], int64_t t[3][3])
{
    t[0][0] = in[0];
    t[1][1] = in[1];
    t[2][2] = in[2];
    t[0][1] = t[1][0] = in[3];
    t[0][2] = t[2][0] = in[4];
    t[1][2] = t[2][1] = in[5];
}

// round(a / 2^16), half away from zero, of an exact 128-bit sum (the caller
// keeps the result within int64).
static int64_t round16(ls_i128 a)
{
    bool neg = ls_i128_sign(a) < 0;
    ls_i128 m = neg ? ls_i128_neg(a) : a;
    int64_t q = ls_i128_lo64(ls_i128_shr(ls_i128_add(m, ls_i128_from_i64(INT64_C(1) << 15)), 16));
    return neg ? -q : q;
}

// R t R^T of a Q32.32 tensor (R entries are Q16.16 within +-1): each product
// sum exact in 128 bits, rounded once per pass.
static void tensor_rotate(ls_mat3 r, int64_t t[3][3])
{
    const ls_fx rr[3][3] = {{r.row[0].x, r.row[0].y, r.row[0].z},
                            {r.row[1].x, r.row[1].y, r.row[1].z},
                            {r.row[2].x, r.row[2].y, r.row[2].z}};
    int64_t rt[3][3], out[3][3];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            ls_i128 s = ls_i128_from_i64(0);
            for (int k = 0; k < 3; k++) {
                s = ls_i128_add(s, ls_i128_mul(rr[i][k], t[k][j]));
            }
            rt[i][j] = round16(s);
        }
    }
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            ls_i128 s = ls_i128_from_i64(0);
            for (int k = 0; k < 3; k++) {
                s = ls_i128_add(s, ls_i128_mul(rt[i][k], rr[j][k]));
            }
            out[i][j] = round16(s);
        }
    }
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            t[i][j] = out[i][j];
        }
    }
}

static bool is_identity_pose(const ls_mass_part *p)
{
    return ls_vec3_equal(p->position, ls_vec3_zero()) && p->orientation.x == 0 &&
           p->orientation.y == 0 && p->orientation.z == 0 && p->orientation.w == LS_FX_ONE;
}

ls_result ls_mass_compute_(const ls_mass_part *parts, uint32_t count, ls_mass_props *out,
                           ls_error *err)
{
    int64_t mass = 0, moment[3] = {0, 0, 0}, t[3][3] = {{0}};
    ls_shape_mass sm[LS_BODY_MAX_SHAPES];
    ls_vec3 centre[LS_BODY_MAX_SHAPES];
    for (uint32_t i = 0; i < count; i++) {
        const ls_mass_part *p = &parts[i];
        if (p->density <= 0) {
            return refuse(err, "shape.density", "shape.density", p->density);
        }
        if (!ls_shape_kind_of(p->geom->kind)->mass(p->geom, p->density, &sm[i])) {
            return sm[i].mass > 0 ? refuse(err, "shape.density", "mass (kg)", sm[i].mass)
                                  : refuse(err, "shape", "volume", 0);
        }
        ls_mat3 r = ls_mat3_from_quat(p->orientation);
        centre[i] = is_identity_pose(p)
                        ? sm[i].center
                        : ls_vec3_add(p->position, ls_mat3_mul_vec(r, sm[i].center));
        mass += sm[i].mass;
        const ls_fx c3[3] = {centre[i].x, centre[i].y, centre[i].z};
        for (int k = 0; k < 3; k++) {
            moment[k] += sm[i].mass * c3[k]; // Q32.32: <= 2^26 * 2^23 per shape
        }
    }
    if (mass < MASS_MIN || mass > MASS_MAX) {
        return refuse(err, "shape.density", "mass (kg)", mass);
    }
    // Centre of mass: moment / mass (Q32.32 / Q16.16 = Q16.16), rounded to nearest.
    ls_fx c[3];
    for (int k = 0; k < 3; k++) {
        int64_t q =
            moment[k] >= 0 ? (moment[k] + mass / 2) / mass : -((-moment[k] + mass / 2) / mass);
        c[k] = (ls_fx)q;
    }
    ls_vec3 com = ls_vec3_make(c[0], c[1], c[2]);
    for (uint32_t i = 0; i < count; i++) {
        int64_t ti[3][3];
        tensor_full(sm[i].inertia, ti);
        if (!is_identity_pose(&parts[i])) {
            tensor_rotate(ls_mat3_from_quat(parts[i].orientation), ti);
        }
        // Parallel axis: m (|d|^2 E - d d^T), d from the body's centre of mass.
        ls_vec3 d = ls_vec3_sub(centre[i], com);
        const int64_t d3[3] = {d.x, d.y, d.z};
        int64_t d2 = d3[0] * d3[0] + d3[1] * d3[1] + d3[2] * d3[2]; // Q32.32, exact
        for (int a = 0; a < 3; a++) {
            for (int b = 0; b < 3; b++) {
                int64_t g = (a == b ? d2 : 0) - d3[a] * d3[b];
                t[a][b] += ti[a][b] + (g == 0 ? 0 : round16(ls_i128_mul(g, sm[i].mass)));
            }
        }
    }
    for (int k = 0; k < 3; k++) {
        if (t[k][k] < INERTIA_MIN || t[k][k] > INERTIA_MAX) {
            return refuse(err, "shape", "principal inertia (kg m^2)", t[k][k] / 65536);
        }
    }
    out->mass = (ls_fx)mass;
    out->inv_mass = ls_fx_div(LS_FX_ONE, (ls_fx)mass);
    out->center = com;
    if (t[0][1] == 0 && t[0][2] == 0 && t[1][2] == 0) {
        // 1/I: 2^48 / I_q32 rounded half up, <= 2^26 (1024) by the range check.
        ls_fx inv[3];
        for (int k = 0; k < 3; k++) {
            inv[k] = (ls_fx)(((INT64_C(1) << 48) + t[k][k] / 2) / t[k][k]);
        }
        out->inv_inertia = ls_mat3_diag(ls_vec3_make(inv[0], inv[1], inv[2]));
        return LS_OK;
    }
    ls_mat3 m;
    for (int a = 0; a < 3; a++) {
        int64_t lim = INERTIA_MAX / 65536, e[3];
        for (int b = 0; b < 3; b++) {
            int64_t q = ls_fx_round_q32(t[a][b]); // Q16.16
            e[b] = q > lim ? lim : q < -lim ? -lim : q;
        }
        m.row[a] = ls_vec3_make((ls_fx)e[0], (ls_fx)e[1], (ls_fx)e[2]);
    }
    if (!ls_mat3_inverse_spd(m, &out->inv_inertia)) {
        return refuse(err, "shape", "inertia tensor (not invertible) xx", t[0][0] / 65536);
    }
    const ls_vec3 *rows = out->inv_inertia.row;
    for (int a = 0; a < 3; a++) {
        const ls_fx e[3] = {rows[a].x, rows[a].y, rows[a].z};
        for (int b = 0; b < 3; b++) {
            if (e[b] > INV_MAX || e[b] < -INV_MAX) {
                return refuse(err, "shape", "inverse inertia (1/(kg m^2))", e[b]);
            }
        }
    }
    return LS_OK;
}
