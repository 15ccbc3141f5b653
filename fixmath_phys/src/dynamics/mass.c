// SPDX-License-Identifier: MIT
// Volumes and inertia tensors of spheres, boxes and capsules. Intermediates are
// Q16.16 values held in int64 ("wide") so volumes of large shapes do not
// saturate before the range check.
#include "mass.h"

#include "ls/fx_text.h"

#include <stdio.h>

#define PI_RAW      INT64_C(205887)
#define MASS_MIN    INT64_C(655)      // 0.01 kg
#define MASS_MAX    INT64_C(65536000) // 1000 kg
#define INERTIA_MIN INT64_C(64)       // 1/1024 kg m^2
#define INERTIA_MAX INT64_C(0x7FFFFFFF)

// Product of two wide Q16.16 values (caller keeps |a * b| < 2^62).
static int64_t wmul(int64_t a, int64_t b)
{
    return ls_fx_round_q32(a * b);
}

// Wide value times a rational n/d.
static int64_t wfrac(int64_t a, int64_t n, int64_t d)
{
    return (a * n + d / 2) / d;
}

static ls_result refuse(ls_error *err, const char *field, const char *what, int64_t raw)
{
    // Beyond Q16.16 the value is shown in whole units (it has no fixed-point form).
    char text[LS_FX_TEXT_MAX + 8];
    if (raw > LS_FX_MAX || raw < -LS_FX_MAX) {
        snprintf(text, sizeof text, "%lld", (long long)(raw / 65536));
    } else {
        ls_fx_format((ls_fx)raw, text);
    }
    ls_error_set(err, LS_ERR_OUT_OF_RANGE, "%s %s outside the supported range (SPEC.md section 5)",
                 what, text);
    if (err) {
        snprintf(err->field, sizeof err->field, "%s", field);
    }
    return LS_ERR_OUT_OF_RANGE;
}

// Volume (wide Q16.16) and principal inertia per unit mass of a shape.
static void shape_volume_inertia(const ls_shape_def *s, int64_t *volume, int64_t *unit_inertia)
{
    int64_t r = s->radius, r2 = wmul(r, r);
    switch (s->type) {
    case LS_SHAPE_SPHERE:
        *volume = wfrac(wmul(wmul(r2, r), PI_RAW), 4, 3);
        unit_inertia[0] = unit_inertia[1] = unit_inertia[2] = wfrac(r2, 2, 5);
        break;
    case LS_SHAPE_BOX: {
        int64_t x = s->half_extents.x, y = s->half_extents.y, z = s->half_extents.z;
        int64_t x2 = wmul(x, x), y2 = wmul(y, y), z2 = wmul(z, z);
        *volume = 8 * wmul(wmul(x, y), z);
        unit_inertia[0] = wfrac(y2 + z2, 1, 3);
        unit_inertia[1] = wfrac(x2 + z2, 1, 3);
        unit_inertia[2] = wfrac(x2 + y2, 1, 3);
        break;
    }
    default: { // capsule along Y: a cylinder of half height h plus one sphere
        int64_t h = s->half_height, h2 = wmul(h, h);
        int64_t vc = wmul(wmul(r2, 2 * h), PI_RAW);
        int64_t vs = wfrac(wmul(wmul(r2, r), PI_RAW), 4, 3);
        *volume = vc + vs;
        // Per-unit-mass inertia of each part, mixed by volume fraction below.
        int64_t cyl_y = wfrac(r2, 1, 2), sph_y = wfrac(r2, 2, 5);
        int64_t cyl_x = wfrac(r2, 1, 4) + wfrac(h2, 1, 3);
        int64_t sph_x = wfrac(r2, 2, 5) + h2 + wfrac(wmul(h, r), 3, 4);
        int64_t fc = *volume > 0 ? (vc * 65536 + *volume / 2) / *volume : 0; // Q16 fraction
        unit_inertia[1] = wmul(cyl_y, fc) + wmul(sph_y, 65536 - fc);
        unit_inertia[0] = unit_inertia[2] = wmul(cyl_x, fc) + wmul(sph_x, 65536 - fc);
        break;
    }
    }
}

ls_result ls_mass_compute(const ls_shape_def *s, ls_mass_props *out, ls_error *err)
{
    int64_t volume, unit[3];
    if (s->density <= 0) {
        return refuse(err, "shape.density", "shape.density", s->density);
    }
    shape_volume_inertia(s, &volume, unit);
    if (volume <= 0 || volume > INT64_MAX / s->density) {
        return refuse(err, "shape", "volume", volume);
    }
    int64_t mass = wmul(volume, s->density);
    if (mass < MASS_MIN || mass > MASS_MAX) {
        return refuse(err, "shape.density", "mass (kg)", mass);
    }
    ls_fx inv[3];
    for (int k = 0; k < 3; k++) {
        int64_t inertia = wmul(unit[k], mass);
        if (inertia < INERTIA_MIN || inertia > INERTIA_MAX) {
            return refuse(err, "shape", "principal inertia (kg m^2)", inertia);
        }
        inv[k] = ls_fx_div(LS_FX_ONE, (ls_fx)inertia);
    }
    out->mass = (ls_fx)mass;
    out->inv_mass = ls_fx_div(LS_FX_ONE, (ls_fx)mass);
    out->inv_inertia = ls_vec3_make(inv[0], inv[1], inv[2]);
    return LS_OK;
}
