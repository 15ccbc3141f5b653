// SPDX-License-Identifier: MIT
// Friction of particles against shapes (SPEC.md §25.6; seed §4 items 14-15,
// §5.10), applied once per tick after a system's relaxation.
//
// Why not Jakobsen's literal rule (shorten the tangential velocity by mu d_p
// at every projection, inside every iteration): it makes resting bodies crawl
// (a tetrahedron creeps 0.25 m a minute, in float and in fixed point, seed §4
// item 14). Instead every projection of the tick adds its depth to the
// particle's sum D (ls_particle_contact.depth_sum) and this pass works on the
// position, with mu = sqrt(mu_system * mu_shape) (the rigid pairs' rule) of
// the shape touched last and t the tangential part of x - x* relative to the
// touched body's own motion over the tick ((v + w x r) dt; 0 for a static or
// sleeping body), tangential to the last push direction n:
//   |t| <= mu D  ->  x -= t                (sticks: x_t = x*_t)
//   otherwise    ->  x -= t (mu D / |t|)   (slides: |t| shortened by mu D)
// |t| <= mu D is decided on exact Q32 squares; |t| needs a square root only
// when the particle slides. The correction is kept (fric) for the coupling,
// and the particle's static and kinematic planes are projected once more.
#include "pcollide.h"

bool ls_pcollide_friction_correction_(ls_vec3 dx, ls_vec3 n, ls_fx limit, ls_vec3 *out)
{
    ls_vec3 t = ls_vec3_sub(dx, ls_vec3_scale(n, ls_vec3_dot(dx, n)));
    uint64_t t2 = ls_vec3_len_sq_q32(t);
    if (t2 == 0) {
        return false;
    }
    *out = t;
    if (t2 > (uint64_t)limit * (uint64_t)limit) {
        // Shorten by the limit: t * limit / |t|, each component rounded to nearest.
        uint64_t root = ls_isqrt64(t2);
        int64_t len = (int64_t)(root + ((t2 - root * root) > root)); // |t| to nearest
        int64_t c[3] = {t.x, t.y, t.z};
        ls_fx r[3];
        for (int k = 0; k < 3; k++) {
            int64_t num = c[k] * limit;
            int64_t q = (num >= 0 ? num + len / 2 : num - len / 2) / len;
            r[k] = (ls_fx)q; // |q| <= |c[k]|
        }
        *out = ls_vec3_make(r[0], r[1], r[2]);
    }
    return true;
}

void ls_particles_friction_(ls_world *w, ls_particle_system *s)
{
    ls_particle_store *ps = w->particles;
    struct ls_particle_collide *pc = ps->collide;
    if (!pc || s->friction == 0) {
        return;
    }
    ls_vec3 *x = ps->x + s->first, *xo = ps->x_old + s->first;
    ls_particle_contact *pcs = ps->contact + s->first;
    ls_vec3 *fric = pc->fric + s->first;
    uint32_t cached_shape = UINT32_MAX;
    ls_fx mu = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        if (pcs[i].depth_sum <= 0 || pcs[i].shape == UINT32_MAX) {
            continue;
        }
        if (pcs[i].shape != cached_shape) {
            cached_shape = pcs[i].shape;
            mu = ls_fx_sqrt(ls_fx_mul(s->friction, w->shapes[cached_shape].friction));
        }
        ls_fx limit = ls_fx_mul(mu, pcs[i].depth_sum);
        if (limit <= 0) {
            continue;
        }
        ls_vec3 dx = ls_vec3_sub(x[i], xo[i]);
        uint32_t body = pcs[i].body;
        if (body != UINT32_MAX && w->bodies[body].type != LS_BODY_STATIC) {
            dx = ls_vec3_sub(dx, ls_pcollide_body_motion_(w, body, x[i]));
        }
        ls_vec3 corr;
        if (!ls_pcollide_friction_correction_(dx, pcs[i].normal, limit, &corr)) {
            continue;
        }
        x[i] = ls_vec3_sub(x[i], corr);
        fric[i] = corr;
        // Static and kinematic planes again: the correction is tangential to
        // one contact but may cross another (a particle pinched at a box's
        // edge on the floor), and immovable geometry has the last word.
        for (uint32_t k = 0; k < pcs[i].cand_count; k++) {
            const ls_pcontact *c = &pc->contacts[pcs[i].cand_first + k];
            if (c->fixed && !c->pending) {
                ls_fx d = ls_pcollide_violation_(c->c, x[i], c->n);
                if (d != 0) {
                    x[i] = ls_vec3_mad(x[i], c->n, d);
                }
            }
        }
    }
}
