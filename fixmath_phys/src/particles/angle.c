// SPDX-License-Identifier: MIT
// Angle limits (SPEC.md §25.4; Jakobsen §6, seed §2.6 and §5.11). The angle
// at vertex a between the arms a->b and a->c stays within [min, max]. With
// the arms at their creation lengths L1 = |b - a|, L2 = |c - a|, the law of
// cosines turns the dot-product constraint (b - a).(c - a) <= L1 L2 cos(min)
// into a one-sided stick between b and c:
//   |c - b|^2 >= L1^2 + L2^2 - 2 L1 L2 cos(min),
// and the upper limit into |c - b|^2 <= L1^2 + L2^2 - 2 L1 L2 cos(max). So an
// angle is a range on (b, c) whose bounds are computed once at creation,
// with the engine's integer cosine (no trigonometry in the step); the vertex
// is not moved. Bounds below 0.001 m (min = 0, or equal arms and max = 0)
// mean "no bound" and "0.001 m"; max = pi needs no upper bound.
#include "particles_internal.h"

#include "ls/trig.h"

// Length of the third side for an angle: sqrt(L1^2 + L2^2 - 2 L1 L2 cos),
// in Q32.32 (2 L1 L2 cos = floor(L1 L2 cos / 2^15)), rounded to nearest.
// A 0..pi angle limits nothing: both bounds 0, the constraint is never projected.
static ls_fx third_side(ls_fx l1, ls_fx l2, ls_fx angle)
{
    int64_t p = (int64_t)l1 * l2; // Q32.32, < 2^46
    int64_t q = (int64_t)l1 * l1 + (int64_t)l2 * l2 - ((p * ls_fx_cos(angle)) >> 15);
    if (q <= 0) {
        return 0;
    }
    uint64_t s = (uint64_t)q, r = ls_isqrt64(s);
    r += (s - r * r) > r;
    return (ls_fx)r;
}

static ls_result angle_init(const ls_world *w, const ls_particle_system *s,
                            const ls_particle_constraint_def *d, ls_pcon *c, ls_error *err)
{
    if (ls_pcon_check_index_(s, d->a, "a", err) != LS_OK ||
        ls_pcon_check_index_(s, d->b, "b", err) != LS_OK ||
        ls_pcon_check_index_(s, d->c, "c", err) != LS_OK ||
        ls_pcon_check_common_(d, false, err) != LS_OK) {
        return err ? err->code : LS_ERR_INVALID_ARGUMENT;
    }
    if (d->a == d->b || d->a == d->c || d->b == d->c) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ARGUMENT, "c",
                                  "an angle needs three different particles");
    }
    if (d->min_angle < 0 || d->min_angle > LS_FX_PI || d->max_angle < d->min_angle ||
        d->max_angle > LS_FX_PI) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE,
                                  d->min_angle < 0 || d->min_angle > LS_FX_PI ? "min_angle"
                                                                              : "max_angle",
                                  "angles must satisfy 0 <= min_angle <= max_angle <= pi");
    }
    ls_fx l1 = ls_pcon_distance_(w, s, d->a, d->b), l2 = ls_pcon_distance_(w, s, d->a, d->c);
    if (l1 < LS_PARTICLE_LEN_MIN || l1 > LS_PARTICLE_LEN_MAX || l2 < LS_PARTICLE_LEN_MIN ||
        l2 > LS_PARTICLE_LEN_MAX) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE,
                                  l1 < LS_PARTICLE_LEN_MIN || l1 > LS_PARTICLE_LEN_MAX ? "b" : "c",
                                  "each arm of an angle must be 0.001..128 m long at creation");
    }
    c->a = d->a;
    c->b = d->b;
    c->c = d->c;
    ls_fx lo = d->min_angle > 0 ? third_side(l1, l2, d->min_angle) : 0;
    c->rest = lo >= LS_PARTICLE_LEN_MIN ? lo : 0;
    if (d->max_angle < LS_FX_PI) {
        ls_fx hi = third_side(l1, l2, d->max_angle);
        c->rest_max = hi >= LS_PARTICLE_LEN_MIN ? hi : LS_PARTICLE_LEN_MIN;
    }
    return LS_OK;
}

static void angle_project(ls_world *w, ls_particle_system *s, ls_pcon *c, uint32_t n)
{
    ls_vec3 *x = w->particles->x + s->first;
    for (uint32_t k = 0; k < n; k++) {
        const ls_pcon *ck = &c[k];
        if ((ck->wa | ck->wb) != 0) { // 0, 0: inactive, immovable or 0..pi
            ls_pcon_project_range_(&x[ck->b], &x[ck->c], ck, s->stick_mode);
        }
    }
}

static void angle_weights(const ls_particle_store *ps, const ls_particle_system *s, ls_pcon *c)
{
    const ls_particle *p = ps->p + s->first;
    ls_pcon_pair_weights_(p[c->b].w, p[c->c].w, c->stiffness, &c->wa, &c->wb);
    if (!ls_pcon_active_(c) || (c->rest | c->rest_max) == 0) {
        c->wa = c->wb = 0;
    }
}

const ls_pcon_kind ls_pcon_angle_kind_ = {"angle", angle_init, angle_project, angle_weights};
