// SPDX-License-Identifier: MIT
// Cloth builder (SPEC.md §25.7; Jakobsen §4 "cloth"): an nu x nv grid of
// particles, particle (i, j) = index j*nu + i at origin + i*spacing*u +
// j*spacing*v (u, v the normalised axes; each term a §4 product, rounded).
// Constraints: every rest length is the distance at creation; the order
// (the relaxation order, SPEC.md §25.5) is 14 batches, each a set of sticks
// no two of which share a particle (so consecutive projections do not wait
// for each other: the red-black order of Gauss-Seidel, 2-3x faster than
// particle by particle on one core), each batch in (j, i) order:
//   structural along u, (i, j)-(i+1, j): i even, then i odd;
//   structural along v, (i, j)-(i, j+1): j even, then j odd;
//   shear (i, j)-(i+1, j+1): i even, i odd; (i+1, j)-(i, j+1): i even, i odd;
//   bend (i, j)-(i+2, j): (i/2) even, (i/2) odd; (i, j)-(i, j+2): (j/2)
//   even, (j/2) odd (bend_stiffness; they never tear).
// Pinned particles (the pins bits) are immovable (mass 0); the others share
// the mass equally.
#include "particles_internal.h"

#include <string.h>

ls_cloth_def ls_default_cloth_def(void)
{
    ls_cloth_def d;
    memset(&d, 0, sizeof d);
    d.system = ls_default_particle_system_def();
    d.axis_u = ls_vec3_make(LS_FX_ONE, 0, 0);
    d.axis_v = ls_vec3_make(0, 0, LS_FX_ONE);
    d.nu = 16;
    d.nv = 16;
    d.spacing = 6554; // 0.1 m
    d.mass = LS_FX_ONE;
    d.radius = 1311; // 0.02 m
    d.shear = true;
    d.bend = true;
    d.bend_stiffness = LS_FX_ONE;
    d.cookie = LS_DEF_COOKIE;
    return d;
}

static uint32_t constraint_count(const ls_cloth_def *d)
{
    uint32_t nu = d->nu, nv = d->nv;
    uint32_t n = (nu - 1) * nv + nu * (nv - 1);
    n += d->shear ? 2 * (nu - 1) * (nv - 1) : 0;
    n += d->bend ? (nu - 2) * nv + nu * (nv - 2) : 0;
    return n;
}

static bool pinned(const ls_cloth_def *d, uint32_t i, uint32_t j)
{
    uint32_t p = d->pins, iu = d->nu - 1, jv = d->nv - 1;
    return ((p & LS_CLOTH_PIN_CORNER_00) && i == 0 && j == 0) ||
           ((p & LS_CLOTH_PIN_CORNER_10) && i == iu && j == 0) ||
           ((p & LS_CLOTH_PIN_CORNER_01) && i == 0 && j == jv) ||
           ((p & LS_CLOTH_PIN_CORNER_11) && i == iu && j == jv) ||
           ((p & LS_CLOTH_PIN_EDGE_V0) && j == 0) || ((p & LS_CLOTH_PIN_EDGE_V1) && j == jv) ||
           ((p & LS_CLOTH_PIN_EDGE_U0) && i == 0) || ((p & LS_CLOTH_PIN_EDGE_U1) && i == iu);
}

static ls_vec3 grid_point(const ls_cloth_def *d, ls_vec3 u, ls_vec3 v, uint32_t i, uint32_t j)
{
    int64_t si = (int64_t)d->spacing * i, sj = (int64_t)d->spacing * j; // < 2^31: checked
    ls_vec3 p = ls_vec3_add(d->origin, ls_vec3_scale(u, (ls_fx)si));
    return ls_vec3_add(p, ls_vec3_scale(v, (ls_fx)sj));
}

static bool in_world(ls_vec3 p)
{
    return ls_fx_abs(p.x) <= LS_PARTICLE_POS_MAX && ls_fx_abs(p.y) <= LS_PARTICLE_POS_MAX &&
           ls_fx_abs(p.z) <= LS_PARTICLE_POS_MAX;
}

static ls_result check(const ls_cloth_def *d, ls_vec3 u, ls_vec3 v, ls_error *err)
{
    if (d->nu < 2 || d->nu > 256 || d->nv < 2 || d->nv > 256) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, d->nu < 2 || d->nu > 256 ? "nu" : "nv",
                                  "a cloth has 2..256 particles along each axis (got %u x %u)",
                                  d->nu, d->nv);
    }
    if (d->spacing < 655 || d->spacing > LS_FX_INT(64)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "spacing",
                                  "cloth spacing must be 0.01..64 m");
    }
    if (u.x == 0 && u.y == 0 && u.z == 0) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ARGUMENT, "axis_u", "axis_u is zero");
    }
    if (ls_vec3_len_sq_q32(ls_vec3_cross(u, v)) < ((uint64_t)1 << 30)) { // |u x v| < 0.5
        return ls_particles_fail_(err, LS_ERR_INVALID_ARGUMENT, "axis_v",
                                  "axis_v is zero or within 30 degrees of axis_u");
    }
    uint32_t n = d->nu * d->nv;
    int64_t each = ((int64_t)d->mass + n / 2) / n;
    if (each < 66 || each > LS_FX_INT(1000)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "mass",
                                  "cloth mass / %u particles must be 0.001..1000 kg", n);
    }
    if (d->radius < 0 || d->radius > LS_FX_INT(64)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "radius", "radius must be 0..64 m");
    }
    if (d->bend && (d->bend_stiffness <= 0 || d->bend_stiffness > LS_FX_ONE)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "bend_stiffness",
                                  "bend_stiffness must be in (0, 1]");
    }
    if (d->tear_ratio != 0 && (d->tear_ratio < LS_FX_ONE || d->tear_ratio > LS_FX_INT(64))) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "tear_ratio",
                                  "tear_ratio must be 0 (never) or 1..64");
    }
    if (d->pins > 255u) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ARGUMENT, "pins",
                                  "pins holds bits other than LS_CLOTH_PIN_*");
    }
    if ((int64_t)d->spacing * (d->nu > d->nv ? d->nu : d->nv) > LS_FX_INT(4096) ||
        !in_world(grid_point(d, u, v, 0, 0)) || !in_world(grid_point(d, u, v, d->nu - 1, 0)) ||
        !in_world(grid_point(d, u, v, 0, d->nv - 1)) ||
        !in_world(grid_point(d, u, v, d->nu - 1, d->nv - 1))) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "origin",
                                  "the cloth reaches beyond +-2048 m");
    }
    return LS_OK;
}

// Append a stick between grid particles p and q (creation order as above).
static bool stick(ls_world *w, ls_particle_system *s, uint32_t p, uint32_t q, ls_fx stiffness,
                  ls_fx tear, ls_error *err)
{
    ls_particle_constraint_def c = ls_default_particle_constraint_def();
    c.a = p;
    c.b = q;
    c.stiffness = stiffness;
    c.tear_ratio = tear;
    return ls_particles_push_constraint_(w, s, &c, err) != UINT32_MAX;
}

ls_particle_system_id ls_cloth_create(ls_world *w, const ls_cloth_def *def, ls_error *err)
{
    if (ls_world_locked_(w, err)) {
        return (ls_particle_system_id){0, 0};
    }
    ls_particle_system_id none = {0, 0};
    if (!w || !def) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "no world or no cloth definition");
        return none;
    }
    if (ls_def_missing_(def->cookie, "cloth_def", err)) {
        return none;
    }
    ls_vec3 u = ls_vec3_normalize(def->axis_u, ls_vec3_zero());
    ls_vec3 v = ls_vec3_normalize(def->axis_v, ls_vec3_zero());
    if (check(def, u, v, err) != LS_OK) {
        return none;
    }
    ls_particle_system_def sd = def->system;
    sd.max_particles = def->nu * def->nv;
    sd.max_constraints = constraint_count(def);
    if (ls_particles_check_system_def_(w, &sd, "system.", true, err) != LS_OK) {
        return none;
    }
    uint32_t slot;
    ls_particle_system *s = ls_particles_new_system_(w, &sd, LS_PARTICLES_CLOTH, &slot);
    uint32_t n = sd.max_particles, nu = def->nu, nv = def->nv;
    ls_particle_def pd = ls_default_particle_def();
    pd.radius = def->radius;
    for (uint32_t j = 0; j < nv; j++) {
        for (uint32_t i = 0; i < nu; i++) {
            pd.position = grid_point(def, u, v, i, j);
            pd.mass = pinned(def, i, j) ? 0 : (ls_fx)(((int64_t)def->mass + n / 2) / n);
            ls_particles_push_(w, s, &pd);
        }
    }
    ls_fx one = LS_FX_ONE, tear = def->tear_ratio, bend = def->bend_stiffness;
    bool ok = true;
    // Batches of sticks that share no particle (see the top of the file).
    for (uint32_t c = 0; c < 2 && ok; c++) { // structural along u, i even then odd
        for (uint32_t j = 0; j < nv && ok; j++) {
            for (uint32_t i = c; i + 1 < nu && ok; i += 2) {
                ok = stick(w, s, j * nu + i, j * nu + i + 1, one, tear, err);
            }
        }
    }
    for (uint32_t c = 0; c < 2 && ok; c++) { // structural along v, j even then odd
        for (uint32_t j = c; j + 1 < nv && ok; j += 2) {
            for (uint32_t i = 0; i < nu && ok; i++) {
                ok = stick(w, s, j * nu + i, (j + 1) * nu + i, one, tear, err);
            }
        }
    }
    for (uint32_t c = 0; c < 4 && def->shear && ok; c++) { // diagonals, then anti-diagonals
        for (uint32_t j = 0; j + 1 < nv && ok; j++) {
            for (uint32_t i = c & 1; i + 1 < nu && ok; i += 2) {
                uint32_t p = j * nu + i;
                ok = c < 2 ? stick(w, s, p, p + nu + 1, one, tear, err)
                           : stick(w, s, p + 1, p + nu, one, tear, err);
            }
        }
    }
    for (uint32_t c = 0; c < 2 && def->bend && ok; c++) { // along u: i with (i / 2) % 2 == c
        for (uint32_t j = 0; j < nv && ok; j++) {
            for (uint32_t i = 0; i + 2 < nu && ok; i++) {
                if ((i / 2) % 2 == c) {
                    ok = stick(w, s, j * nu + i, j * nu + i + 2, bend, 0, err);
                }
            }
        }
    }
    for (uint32_t c = 0; c < 2 && def->bend && ok; c++) { // along v: j with (j / 2) % 2 == c
        for (uint32_t j = 0; j + 2 < nv && ok; j++) {
            for (uint32_t i = 0; i < nu && ((j / 2) % 2 == c) && ok; i++) {
                ok = stick(w, s, j * nu + i, (j + 2) * nu + i, bend, 0, err);
            }
        }
    }
    ls_particle_system_id id = ls_particle_system_id_of_(w, slot);
    if (!ok) { // a stick shorter than 0.001 m after rounding: cannot happen with spacing >= 0.01
        ls_particle_system_destroy(w, id);
        return none;
    }
    ls_error_clear(err);
    return id;
}
