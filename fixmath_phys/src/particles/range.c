// SPDX-License-Identifier: MIT
// Range constraints (SPEC.md §25.4): min <= |x_b - x_a| <= max. A rope
// segment (0..length: slack allowed), a one-sided stick (min only: Jakobsen's
// self-collision trick, e.g. knee to knee), or both. Inactive inside the
// range; outside it the bound is restored exactly like a stick of that length
// (stick.c). The test is on squared lengths (exact Q32.32), so an inactive
// range costs no division and no square root.
#include "distance.h"

static ls_result range_init(const ls_world *w, const ls_particle_system *s,
                            const ls_particle_constraint_def *d, ls_pcon *c, ls_error *err)
{
    (void)w;
    if (ls_pcon_check_index_(s, d->a, "a", err) != LS_OK ||
        ls_pcon_check_index_(s, d->b, "b", err) != LS_OK ||
        ls_pcon_check_common_(d, true, err) != LS_OK) {
        return err ? err->code : LS_ERR_INVALID_ARGUMENT;
    }
    if (d->a == d->b) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ARGUMENT, "b",
                                  "a range joins two different particles");
    }
    if (d->min_length != 0 &&
        (d->min_length < LS_PARTICLE_LEN_MIN || d->min_length > LS_PARTICLE_LEN_MAX)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "min_length",
                                  "min_length must be 0 (none) or 0.001..128 m");
    }
    if (d->max_length != 0 &&
        (d->max_length < LS_PARTICLE_LEN_MIN || d->max_length > LS_PARTICLE_LEN_MAX)) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "max_length",
                                  "max_length must be 0 (none) or 0.001..128 m");
    }
    if (d->min_length == 0 && d->max_length == 0) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ARGUMENT, "max_length",
                                  "a range needs min_length or max_length");
    }
    if (d->max_length != 0 && d->min_length > d->max_length) {
        return ls_particles_fail_(err, LS_ERR_OUT_OF_RANGE, "min_length",
                                  "min_length exceeds max_length");
    }
    if (d->tear_ratio != 0 && d->max_length == 0) {
        return ls_particles_fail_(err, LS_ERR_INVALID_ARGUMENT, "tear_ratio",
                                  "only a range with a max_length can tear");
    }
    c->a = d->a;
    c->b = d->b;
    c->rest = d->min_length;
    c->rest_max = d->max_length;
    return LS_OK;
}

// Restore the bound the pair violates, if any (shared with angle.c).
void ls_pcon_project_range_(ls_vec3 *xa, ls_vec3 *xb, const ls_pcon *c, uint8_t mode)
{
    bool moved = c->rest != 0 && ls_pcon_project_(xa, xb, c->rest, c->wa, c->wb, mode, -1);
    if (!moved && c->rest_max != 0) {
        ls_pcon_project_(xa, xb, c->rest_max, c->wa, c->wb, mode, 1);
    }
}

static void range_project(ls_world *w, ls_particle_system *s, ls_pcon *c, uint32_t n)
{
    ls_vec3 *x = w->particles->x + s->first;
    for (uint32_t k = 0; k < n; k++) {
        const ls_pcon *ck = &c[k];
        if ((ck->wa | ck->wb) != 0) { // 0, 0: inactive or both immovable
            ls_pcon_project_range_(&x[ck->a], &x[ck->b], ck, s->stick_mode);
        }
    }
}

const ls_pcon_kind ls_pcon_range_kind_ = {"range", range_init, range_project,
                                          ls_pcon_pair_weights_of_};
