// SPDX-License-Identifier: MIT
// Sticks (SPEC.md §25.4): |x_b - x_a| = r, exact or sqrt-free by the
// system's mode (exact: distance.h; approx, division-free: stick.h, and
// stick_avx2.c eight at a time), and the mass-weighted shares every
// two-particle constraint uses.
#include "stick.h"

#include <string.h>

void ls_pcon_pair_weights_(ls_fx w_a, ls_fx w_b, ls_fx stiffness, ls_fx *wa, ls_fx *wb)
{
    if (w_a == 0 && w_b == 0) {
        *wa = *wb = 0;
    } else if (w_a == w_b) {
        *wa = *wb = ls_fx_mul(stiffness, LS_FX_HALF);
    } else {
        int64_t sum = (int64_t)w_a + w_b;
        *wa = (ls_fx)(((int64_t)stiffness * w_a + sum / 2) / sum);
        *wb = stiffness - *wa;
    }
}

ls_fx ls_pcon_distance_(const ls_world *w, const ls_particle_system *s, uint32_t a, uint32_t b)
{
    const ls_vec3 *x = w->particles->x + s->first;
    return ls_vec3_distance(x[b], x[a]);
}

// ---- The stick kind ----

static ls_result stick_init(const ls_world *w, const ls_particle_system *s,
                            const ls_particle_constraint_def *d, ls_pcon *c, ls_error *err)
{
    if (ls_pcon_check_index_(s, d->a, "a", err) != LS_OK ||
        ls_pcon_check_index_(s, d->b, "b", err) != LS_OK ||
        ls_pcon_check_common_(d, true, err) != LS_OK) {
        return err ? err->code : LS_ERR_INVALID_ARGUMENT;
    }
    if (d->a == d->b) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ARGUMENT, "b",
                                  "a stick joins two different particles");
    }
    ls_fx len = d->length ? d->length : ls_pcon_distance_(w, s, d->a, d->b);
    if (len < LS_PARTICLE_LEN_MIN || len > LS_PARTICLE_LEN_MAX) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "length",
                                  "stick length must be 0.001..128 m (the particles are %s)",
                                  d->length ? "not used" : "that far apart now");
    }
    c->a = d->a;
    c->b = d->b;
    c->rest = len;
    c->inv_rest = ls_stick_inv_rest_(len, &c->ishift);
    return LS_OK;
}

void ls_stick_project_scalar_(ls_vec3 *x, const ls_pcon *c, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        const ls_pcon *ck = &c[k];
        if ((ck->wa | ck->wb) != 0) { // 0, 0: disabled, torn or both immovable
            ls_stick_project_one_(&x[ck->a], &x[ck->b], ck);
        }
    }
}

static void stick_project(ls_world *w, ls_particle_system *s, ls_pcon *c, uint32_t n)
{
    ls_vec3 *x = w->particles->x + s->first;
    if (s->stick_mode == LS_STICK_EXACT) {
        for (uint32_t k = 0; k < n; k++) {
            const ls_pcon *ck = &c[k];
            if ((ck->wa | ck->wb) != 0) {
                ls_pcon_project_(&x[ck->a], &x[ck->b], ck->rest, ck->wa, ck->wb, LS_STICK_EXACT, 0);
            }
        }
    } else {
        w->particles->stick_kernel(x, c, n);
    }
}

// Sticks and ranges weigh their two particles by effective inverse mass.
void ls_pcon_pair_weights_of_(const ls_particle_store *ps, const ls_particle_system *s, ls_pcon *c)
{
    const ls_particle *p = ps->p + s->first;
    ls_pcon_pair_weights_(p[c->a].w, p[c->b].w, c->stiffness, &c->wa, &c->wb);
    if (!ls_pcon_active_(c)) {
        c->wa = c->wb = 0;
    }
}

// A stick's weights, and the reciprocal of its rest length (stick.h).
static void stick_weights(const ls_particle_store *ps, const ls_particle_system *s, ls_pcon *c)
{
    ls_pcon_pair_weights_of_(ps, s, c);
    c->inv_rest = ls_stick_inv_rest_(c->rest, &c->ishift);
}

const ls_pcon_kind ls_pcon_stick_kind_ = {"stick", stick_init, stick_project, stick_weights};
