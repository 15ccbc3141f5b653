// SPDX-License-Identifier: MIT
// The contact sweeps on x86 AVX2: the eight lanes of a group in one 256-bit
// register per field (contact_solver.h). Every value is the integer the
// scalar reference (contact_solver.c) computes: products are exact 64-bit
// (vpmuldq on the even lanes, then on the odd ones), sums of products are
// exact, and rounding is (x + 2^(s-1)) >> s. Where the scalar reference
// narrows a value into the solver range [-2^30, 2^30), this path only
// checks that it lies there (a sticky per-group word); if any lane of the
// group would have saturated, the group's results are thrown away before
// anything is stored and the group is redone by the scalar reference, so
// the bits are the same on every path, overflow or not. The friction circle,
// whose clamp needs a square root and a division, is done per lane by the
// scalar helper, and so is the rolling-resistance ball (ls_contact_clamp_ball_)
// for the lanes outside it.
//
// Built on x86 only, with the AVX2 target attribute on each function; the
// solver picks it at run time when the CPU has AVX2 (solver.c).
// contact_avx512.c builds this file a second time with LS_LANES_512 defined:
// the same sweeps with the exact 64-bit domain in 512-bit registers
// (lanes_avx2.h), named "avx512".
#include "contact_solver.h"

#if defined(LS_LANES_512)
#define KERNELS   ls_contact_kernels_avx512_
#define SUPPORTED ls_contact_avx512_supported_
#define PATH_NAME "avx512"
#else
#define KERNELS   ls_contact_kernels_avx2_
#define SUPPORTED ls_contact_avx2_supported_
#define PATH_NAME "avx2"
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))

#include "lanes_avx2.h"

// ---- rows --------------------------------------------------------------------

typedef struct N {
    V n[3];
    P pn[3];
} N;

AVX2 void load_normal(const ls_contact_lanes *g, N *n)
{
    for (int k = 0; k < 3; k++) {
        n->n[k] = ld(g->n[k]);
        n->pn[k] = prep(n->n[k]);
    }
}

// n . (vb - va) + wb . ang_b - wa . ang_a, rounded and checked.
AVX2 V normal_speed(const N *n, const ls_contact_point_lanes *p, const B *a, const B *b, K *chk)
{
    P dv[3], wa[3], wb[3];
    for (int k = 0; k < 3; k++) {
        dv[k] = prep(_mm256_sub_epi32(b->v[k], a->v[k]));
        wa[k] = prep(a->w[k]);
        wb[k] = prep(b->w[k]);
    }
    W s = dot3p(n->pn[0], n->pn[1], n->pn[2], dv[0], dv[1], dv[2]);
    s = addw(s, dot3p(wb[0], wb[1], wb[2], prep(ld(p->ang_b[0])), prep(ld(p->ang_b[1])),
                      prep(ld(p->ang_b[2]))));
    s = subw(s, dot3p(wa[0], wa[1], wa[2], prep(ld(p->ang_a[0])), prep(ld(p->ang_a[1])),
                      prep(ld(p->ang_a[2]))));
    return NAR(s, 16, *chk);
}

AVX2 void apply_normal(const ls_contact_lanes *g, const ls_contact_point_lanes *p, B *a, B *b, V d,
                       K *chk)
{
    P pd = prep(d);
    for (int k = 0; k < 3; k++) {
        a->v[k] = upd(a->v[k], pd, ld(g->nm_a[k]), LS_INV_MASS_BITS, -1, chk);
        a->w[k] = upd(a->w[k], pd, ld(p->iang_a[k]), 20, -1, chk);
        b->v[k] = upd(b->v[k], pd, ld(g->nm_b[k]), LS_INV_MASS_BITS, +1, chk);
        b->w[k] = upd(b->w[k], pd, ld(p->iang_b[k]), 20, +1, chk);
    }
}

AVX2 void apply_friction(const ls_contact_lanes *g, B *a, B *b, V d1, V d2, K *chk)
{
    P p1 = prep(d1), p2 = prep(d2);
    P ma = prep(ld(g->inv_mass_a)), mb = prep(ld(g->inv_mass_b));
    for (int k = 0; k < 3; k++) {
        V pk = NAR(addw(mulp(p1, prep(ld(g->t1[k]))), mulp(p2, prep(ld(g->t2[k])))), 16, *chk);
        P pp = prep(pk);
        a->v[k] = chk32(_mm256_sub_epi32(a->v[k], NAR(mulp(pp, ma), LS_INV_MASS_BITS, *chk)), chk);
        b->v[k] = chk32(_mm256_add_epi32(b->v[k], NAR(mulp(pp, mb), LS_INV_MASS_BITS, *chk)), chk);
    }
    for (int k = 0; k < 3; k++) {
        a->w[k] = upd2(a->w[k], p1, ld(g->ict1_a[k]), p2, ld(g->ict2_a[k]), 20, -1, chk);
        b->w[k] = upd2(b->w[k], p1, ld(g->ict1_b[k]), p2, ld(g->ict2_b[k]), 20, +1, chk);
    }
}

// Rolling resistance (ls_rolling_lanes): wa -= Ia^-1 d, wb += Ib^-1 d. Lanes
// without it hold zeros, so every lane takes the same steps.
AVX2 void apply_rolling(const ls_rolling_lanes *ro, B *a, B *b, const V *d, K *chk)
{
    static const int idx[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};
    P pd[3] = {prep(d[0]), prep(d[1]), prep(d[2])};
    for (int k = 0; k < 3; k++) {
        W xa = dot3p(prep(ld(ro->ia[idx[k][0]])), prep(ld(ro->ia[idx[k][1]])),
                     prep(ld(ro->ia[idx[k][2]])), pd[0], pd[1], pd[2]);
        W xb = dot3p(prep(ld(ro->ib[idx[k][0]])), prep(ld(ro->ib[idx[k][1]])),
                     prep(ld(ro->ib[idx[k][2]])), pd[0], pd[1], pd[2]);
        a->w[k] = chk32(_mm256_sub_epi32(a->w[k], NAR(xa, 20, *chk)), chk);
        b->w[k] = chk32(_mm256_add_epi32(b->w[k], NAR(xb, 20, *chk)), chk);
    }
}

// The rolling block of the relax pass (solve_surface's first part): r' =
// clamp(r + rnd(M (wa - wb), 16), limit * total), applied; the new r in *out.
// rtotal = sum of limit * lambda_i, exact.
AVX2 void solve_rolling(const ls_rolling_lanes *ro, B *a, B *b, W rtotal, V *out, K *chk)
{
    static const int idx[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};
    P dw[3];
    for (int k = 0; k < 3; k++) {
        dw[k] = prep(_mm256_sub_epi32(a->w[k], b->w[k]));
    }
    V lim = w_cap_rnd16(rtotal);
    V old[3];
    W nw[3];
    bool far = false;
    for (int k = 0; k < 3; k++) {
        old[k] = ld(ro->r[k]);
        W x = dot3p(prep(ld(ro->mass[idx[k][0]])), prep(ld(ro->mass[idx[k][1]])),
                    prep(ld(ro->mass[idx[k][2]])), dw[0], dw[1], dw[2]);
        nw[k] = addw(w_of(old[k]), w_rnd16(x));
        // |now| >= 2^30 somewhere: that lane takes the scalar clamp.
        far = far || w_any_far(nw[k]);
    }
    V now[3];
    for (int k = 0; k < 3; k++) {
        now[k] = w_low32(nw[k]);
    }
    // Within 2^30 each square is below 2^60: the sums compare exactly.
    P pn[3] = {prep(now[0]), prep(now[1]), prep(now[2])}, pl = prep(lim);
    W len2 = dot3p(pn[0], pn[1], pn[2], pn[0], pn[1], pn[2]), lim2 = mulp(pl, pl);
    if ((far || w_any_gt(len2, lim2)) && !k_bad(chk)) {
        int64_t e[3][8];
        int32_t xl[8], r[3][8];
        for (int k = 0; k < 3; k++) {
            w_st64(e[k], nw[k]);
        }
        st(xl, lim);
        for (int l = 0; l < 8; l++) {
            int64_t c[3];
            for (int k = 0; k < 3; k++) {
                c[k] = e[k][l];
            }
            ls_contact_clamp_ball_(c, 3, xl[l]);
            for (int k = 0; k < 3; k++) {
                r[k][l] = (int32_t)c[k];
            }
        }
        for (int k = 0; k < 3; k++) {
            now[k] = ld(r[k]);
        }
    }
    V d[3];
    for (int k = 0; k < 3; k++) {
        d[k] = _mm256_sub_epi32(now[k], old[k]);
        out[k] = now[k];
    }
    apply_rolling(ro, a, b, d, chk);
}

// ---- sweeps ------------------------------------------------------------------

AVX2_FN uint32_t warm_start(const ls_contact_sweep *sw, ls_contact_lanes *g)
{
    K chk = k_zero();
    B a, b;
    gather(sw->states, g->a, &a, false);
    gather(sw->states, g->b, &b, false);
    for (int i = 0; i < g->points; i++) {
        apply_normal(g, &g->p[i], &a, &b, ld(g->p[i].impulse), &chk);
    }
    apply_friction(g, &a, &b, ld(g->f1), ld(g->f2), &chk);
    P tw = prep(ld(g->twist));
    for (int k = 0; k < 3; k++) {
        a.w[k] = upd(a.w[k], tw, ld(g->in_a[k]), 20, -1, &chk);
        b.w[k] = upd(b.w[k], tw, ld(g->in_b[k]), 20, +1, &chk);
    }
    if (g->rolling >= 0) {
        const ls_rolling_lanes *ro = &sw->rolling[g->rolling];
        const V r[3] = {ld(ro->r[0]), ld(ro->r[1]), ld(ro->r[2])};
        apply_rolling(ro, &a, &b, r, &chk);
    }
    if (k_bad(&chk)) {
        return ls_contact_warm_start_scalar_(sw, g);
    }
    scatter(sw->states, g->a, &a);
    scatter(sw->states, g->b, &b);
    return 0;
}

// n' = conj(dq) n dq (rotate_conj of the scalar reference), checked.
AVX2 void rotate_conj(const V *dq, const N *n, V *out, K *chk)
{
    P u[3], pw = prep(dq[3]);
    for (int k = 0; k < 3; k++) {
        u[k] = prep(_mm256_sub_epi32(_mm256_setzero_si256(), dq[k]));
    }
    V t[3];
    t[0] = NAR(subw(mulp(u[1], n->pn[2]), mulp(u[2], n->pn[1])), 16, *chk);
    t[1] = NAR(subw(mulp(u[2], n->pn[0]), mulp(u[0], n->pn[2])), 16, *chk);
    t[2] = NAR(subw(mulp(u[0], n->pn[1]), mulp(u[1], n->pn[0])), 16, *chk);
    P pt[3];
    for (int k = 0; k < 3; k++) {
        t[k] = chk32(_mm256_add_epi32(t[k], t[k]), chk);
        pt[k] = prep(t[k]);
    }
    W c[3] = {subw(mulp(u[1], pt[2]), mulp(u[2], pt[1])),
              subw(mulp(u[2], pt[0]), mulp(u[0], pt[2])),
              subw(mulp(u[0], pt[1]), mulp(u[1], pt[0]))};
    for (int k = 0; k < 3; k++) {
        V x = NAR(addw(mulp(pw, pt[k]), c[k]), 16, *chk);
        out[k] = chk32(_mm256_add_epi32(n->n[k], x), chk);
    }
}

AVX2_FN uint32_t solve(const ls_contact_sweep *sw, ls_contact_lanes *g)
{
    ls_rolling_lanes *ro = g->rolling >= 0 ? &sw->rolling[g->rolling] : NULL;
    K chk = k_zero();
    B a, b;
    gather(sw->states, g->a, &a, true);
    gather(sw->states, g->b, &b, true);
    N n;
    load_normal(g, &n);
    V na[3], nb[3];
    rotate_conj(a.dq, &n, na, &chk);
    rotate_conj(b.dq, &n, nb, &chk);
    P pna[3], pnb[3], ddp[3];
    for (int k = 0; k < 3; k++) {
        pna[k] = prep(na[k]);
        pnb[k] = prep(nb[k]);
        ddp[k] = prep(_mm256_sub_epi32(b.dp[k], a.dp[k]));
    }
    V d0 = NAR(dot3p(n.pn[0], n.pn[1], n.pn[2], ddp[0], ddp[1], ddp[2]), 16, chk);
    const V zero = _mm256_setzero_si256();
    const P inv_h = prep(splat(sw->inv_h));
    const V max_push = splat(sw->max_push);
    const P bias_rate = prep(ld(g->bias_rate));
    const V iscale_soft = ld(g->impulse_scale);
    V imp[LS_MANIFOLD_MAX], maxi[LS_MANIFOLD_MAX];
    W total = w_of(zero), twist_arm = total, rtotal = total;
    const P mu = prep(ld(g->friction));
    const P rlimit = prep(ro ? ld(ro->limit) : zero);
    // Gauss-Seidel over the slots in the scalar reference's order (empty
    // slots are zero rows: no impulse). Impact lanes (jacobi) read the
    // velocities from before the loop and apply their impulses after it.
    const uint32_t np = (uint32_t)g->points, first = np ? sw->first % np : 0;
    const bool bounce = ((g->impact >> LS_IMPACT_MAY) & 0xffu) != 0; // a lane has restitution
    const V jac = ld((const int32_t *)g->jacobi);
    const bool mixed = !all_zero(jac);
    V a0v[3], a0w[3], b0v[3], b0w[3]; // velocities before the loop (impact lanes)
    for (int c = 0; c < 3; c++) {
        a0v[c] = a.v[c];
        a0w[c] = a.w[c];
        b0v[c] = b.v[c];
        b0w[c] = b.w[c];
    }
    V jdelta[LS_MANIFOLD_MAX];
    for (uint32_t k = 0; k < np; k++) {
        // (first + k) or (first + np - k), modulo np: both below 2 np.
        uint32_t i = sw->reverse ? first + np - k : first + k;
        i = i >= np ? i - np : i;
        const ls_contact_point_lanes *p = &g->p[i];
        W sep = subw(dot3p(pnb[0], pnb[1], pnb[2], prep(ld(p->sb[0])), prep(ld(p->sb[1])),
                           prep(ld(p->sb[2]))),
                     dot3p(pna[0], pna[1], pna[2], prep(ld(p->sa[0])), prep(ld(p->sa[1])),
                           prep(ld(p->sa[2]))));
        V s = chk32(_mm256_add_epi32(_mm256_add_epi32(ld(p->base), d0), NAR(sep, 16, chk)), &chk);
        V vn;
        if (mixed) {
            B ra = a, rb = b;
            for (int c = 0; c < 3; c++) {
                ra.v[c] = _mm256_blendv_epi8(a.v[c], a0v[c], jac);
                ra.w[c] = _mm256_blendv_epi8(a.w[c], a0w[c], jac);
                rb.v[c] = _mm256_blendv_epi8(b.v[c], b0v[c], jac);
                rb.w[c] = _mm256_blendv_epi8(b.w[c], b0w[c], jac);
            }
            vn = normal_speed(&n, p, &ra, &rb, &chk);
        } else {
            vn = normal_speed(&n, p, &a, &b, &chk);
        }
        P ps = prep(s);
        V spec = _mm256_cmpgt_epi32(s, zero); // s > 0: speculative
        V bias_spec = NAR(mulp(ps, inv_h), 16, chk);
        V mass, iscale, bias;
        if (sw->use_bias) {
            V bias_soft = _mm256_max_epi32(NAR(mulp(ps, bias_rate), 16, chk), max_push);
            bias = _mm256_blendv_epi8(bias_soft, bias_spec, spec);
            mass = _mm256_blendv_epi8(ld(p->soft_mass), ld(p->mass), spec);
            iscale = _mm256_andnot_si256(spec, iscale_soft);
        } else {
            bias = _mm256_and_si256(bias_spec, spec);
            mass = ld(p->mass);
            iscale = zero;
        }
        V old = ld(p->impulse);
        W x =
            addw(mulp(prep(mass), prep(_mm256_add_epi32(vn, bias))), mulp(prep(iscale), prep(old)));
        // now = max(old - rnd(x, 16), 0), checked below 2^31 (ls_nar_pos).
        V now = w_clamp_impulse(old, x, &chk);
        imp[i] = now;
        if (bounce) { // the largest impulse is read only by the restitution of such lanes
            maxi[i] = _mm256_max_epi32(ld(p->max_impulse), now);
        }
        if (sw->surface) { // the limits of friction, twist and rolling (read only then)
            P pnow = prep(now);
            total = addw(total, mulp(mu, pnow));
            twist_arm = addw(twist_arm, mulp(prep(ld(p->twist_lever)), pnow));
            if (ro) {
                rtotal = addw(rtotal, mulp(rlimit, pnow));
            }
        }
        V d = _mm256_sub_epi32(now, old);
        jdelta[i] = _mm256_and_si256(jac, d);
        apply_normal(g, p, &a, &b, _mm256_andnot_si256(jac, d), &chk);
    }
    for (uint32_t i = 0; i < np && mixed; i++) {
        apply_normal(g, &g->p[i], &a, &b, jdelta[i], &chk);
    }
    V f1 = zero, f2 = zero, tw = zero, rn[3] = {zero, zero, zero};
    bool surface = sw->surface;
    if (surface && ro) {
        solve_rolling(ro, &a, &b, rtotal, rn, &chk); // rolling first, as the scalar reference
    }
    if (surface) {
        // Twist: clamp(old - rnd(mass * speed), +-lim), lim = cap(rnd(twist_arm, 16)).
        V tlim = w_cap_rnd16(twist_arm);
        P dw[3];
        for (int k = 0; k < 3; k++) {
            dw[k] = prep(_mm256_sub_epi32(b.w[k], a.w[k]));
        }
        V speed = NAR(dot3p(n.pn[0], n.pn[1], n.pn[2], dw[0], dw[1], dw[2]), 16, chk);
        V told = ld(g->twist);
        V tnew = chk32(
            _mm256_sub_epi32(told, NAR(mulp(prep(ld(g->twist_mass)), prep(speed)), 16, chk)), &chk);
        tnew = _mm256_min_epi32(_mm256_max_epi32(tnew, _mm256_sub_epi32(zero, tlim)), tlim);
        tw = tnew;
        P td = prep(_mm256_sub_epi32(tnew, told));
        for (int k = 0; k < 3; k++) {
            a.w[k] = upd(a.w[k], td, ld(g->in_a[k]), 20, -1, &chk);
            b.w[k] = upd(b.w[k], td, ld(g->in_b[k]), 20, +1, &chk);
        }
        // Friction at the centre: two decoupled rows, then the circle.
        P dv[3], wa[3], wb[3];
        for (int k = 0; k < 3; k++) {
            dv[k] = prep(_mm256_sub_epi32(b.v[k], a.v[k]));
            wa[k] = prep(a.w[k]);
            wb[k] = prep(b.w[k]);
        }
        W s1 =
            dot3p(prep(ld(g->t1[0])), prep(ld(g->t1[1])), prep(ld(g->t1[2])), dv[0], dv[1], dv[2]);
        s1 = addw(s1, dot3p(wb[0], wb[1], wb[2], prep(ld(g->ct1_b[0])), prep(ld(g->ct1_b[1])),
                            prep(ld(g->ct1_b[2]))));
        s1 = subw(s1, dot3p(wa[0], wa[1], wa[2], prep(ld(g->ct1_a[0])), prep(ld(g->ct1_a[1])),
                            prep(ld(g->ct1_a[2]))));
        W s2 =
            dot3p(prep(ld(g->t2[0])), prep(ld(g->t2[1])), prep(ld(g->t2[2])), dv[0], dv[1], dv[2]);
        s2 = addw(s2, dot3p(wb[0], wb[1], wb[2], prep(ld(g->ct2_b[0])), prep(ld(g->ct2_b[1])),
                            prep(ld(g->ct2_b[2]))));
        s2 = subw(s2, dot3p(wa[0], wa[1], wa[2], prep(ld(g->ct2_a[0])), prep(ld(g->ct2_a[1])),
                            prep(ld(g->ct2_a[2]))));
        V vt1 = NAR(s1, 16, chk), vt2 = NAR(s2, 16, chk);
        V o1 = ld(g->f1), o2 = ld(g->f2);
        V n1 =
            chk32(_mm256_sub_epi32(o1, NAR(mulp(prep(ld(g->tmass[0])), prep(vt1)), 16, chk)), &chk);
        V n2 =
            chk32(_mm256_sub_epi32(o2, NAR(mulp(prep(ld(g->tmass[2])), prep(vt2)), 16, chk)), &chk);
        V lim = w_cap_rnd16(total);
        // Outside the circle: the scalar clamp, lane by lane (sliding is rare).
        P p1 = prep(n1), p2 = prep(n2), pl = prep(lim);
        W len2 = addw(mulp(p1, p1), mulp(p2, p2)), lim2 = mulp(pl, pl);
        if (w_any_gt(len2, lim2) && !k_bad(&chk)) {
            int32_t x1[8], x2[8], xl[8];
            st(x1, n1);
            st(x2, n2);
            st(xl, lim);
            for (int l = 0; l < 8; l++) {
                uint64_t q =
                    (uint64_t)((int64_t)x1[l] * x1[l]) + (uint64_t)((int64_t)x2[l] * x2[l]);
                if (q <= (uint64_t)((int64_t)xl[l] * xl[l])) {
                    continue;
                }
                if (xl[l] == 0) { // a zero limit (a point without load): 0, as x 0 / len
                    x1[l] = x2[l] = 0;
                    continue;
                }
                int64_t len = (int64_t)ls_isqrt64(q);
                x1[l] = (int32_t)(((int64_t)x1[l] * xl[l]) / len);
                x2[l] = (int32_t)(((int64_t)x2[l] * xl[l]) / len);
            }
            n1 = ld(x1);
            n2 = ld(x2);
        }
        f1 = n1;
        f2 = n2;
        apply_friction(g, &a, &b, _mm256_sub_epi32(n1, o1), _mm256_sub_epi32(n2, o2), &chk);
    }
    if (k_bad(&chk)) {
        return ls_contact_solve_scalar_(sw, g);
    }
    for (int i = 0; i < g->points; i++) {
        st(g->p[i].impulse, imp[i]);
        if (bounce) {
            st(g->p[i].max_impulse, maxi[i]);
        }
    }
    if (surface) {
        st(g->f1, f1);
        st(g->f2, f2);
        st(g->twist, tw);
        if (ro) {
            for (int k = 0; k < 3; k++) {
                st(ro->r[k], rn[k]);
            }
        }
    }
    scatter(sw->states, g->a, &a);
    scatter(sw->states, g->b, &b);
    return 0;
}

// ---- prepare -----------------------------------------------------------------

// a x b, each component rounded and checked (cross16).
AVX2 void cross_p(const P *a, const P *b, V *out, K *chk)
{
    out[0] = NAR(subw(mulp(a[1], b[2]), mulp(a[2], b[1])), 16, *chk);
    out[1] = NAR(subw(mulp(a[2], b[0]), mulp(a[0], b[2])), 16, *chk);
    out[2] = NAR(subw(mulp(a[0], b[1]), mulp(a[1], b[0])), 16, *chk);
}

// m v for a symmetric Q12.20 m (xx, xy, xz, yy, yz, zz), rounded and checked
// (sym_mul_q20).
AVX2 void sym_p(const P *m, const P *v, V *out, K *chk)
{
    out[0] = NAR(dot3p(m[0], m[1], m[2], v[0], v[1], v[2]), 16, *chk);
    out[1] = NAR(dot3p(m[1], m[3], m[4], v[0], v[1], v[2]), 16, *chk);
    out[2] = NAR(dot3p(m[2], m[4], m[5], v[0], v[1], v[2]), 16, *chk);
}

AVX2 void prep3(const V *v, P *out)
{
    for (int k = 0; k < 3; k++) {
        out[k] = prep(v[k]);
    }
}

AVX2 void ld3(ls_lanes *src, V *out)
{
    for (int k = 0; k < 3; k++) {
        out[k] = ld(src[k]);
    }
}

AVX2 void st3(ls_lanes *dst, const V *v)
{
    for (int k = 0; k < 3; k++) {
        st(dst[k], v[k]);
    }
}

// ls_contact_prep_math_ on the eight lanes at once: the same integers, with
// every narrowing checked instead of saturated (the caller redoes the group
// with the scalar reference when a check fails). Lanes and points that are
// empty have zero inputs and give the zeros the scalar reference leaves;
// only the normal speed of an empty point is masked.
AVX2 void prep_math(ls_contact_lanes *g, ls_contact_prep *t, K *chk)
{
    V nv[3];
    P n[3], ia[6], ib[6];
    ld3(g->n, nv);
    prep3(nv, n);
    for (int k = 0; k < 6; k++) {
        ia[k] = prep(ld(t->ia[k]));
        ib[k] = prep(ld(t->ib[k]));
    }
    const P ima = prep(ld(g->inv_mass_a)), imb = prep(ld(g->inv_mass_b));
    const P shift = prep(splat(1 << (36 - LS_INV_MASS_BITS)));
    const W kmass = addw(mulp(ima, shift), mulp(imb, shift));
    w_st64(t->kmass, kmass);
    for (int k = 0; k < 3; k++) {
        st(g->nm_a[k], NAR(mulp(n[k], ima), 16, *chk));
        st(g->nm_b[k], NAR(mulp(n[k], imb), 16, *chk));
    }
    V tmp[3];
    P dv[3], wa[3], wb[3];
    ld3(t->dv, tmp);
    prep3(tmp, dv);
    ld3(t->wa, tmp);
    prep3(tmp, wa);
    ld3(t->wb, tmp);
    prep3(tmp, wb);
    const W vlin = dot3p(n[0], n[1], n[2], dv[0], dv[1], dv[2]);
    const V count = ld((const int32_t *)g->count);
    uint32_t points = 0;
    for (uint32_t l = 0; l < LS_LANES; l++) {
        points = g->count[l] > points ? g->count[l] : points;
    }
    for (uint32_t i = 0; i < points; i++) {
        ls_contact_point_lanes *p = &g->p[i];
        V sa[3], sb[3], d[3], ra[3], rb[3];
        ld3(p->sa, sa);
        ld3(p->sb, sb);
        for (int k = 0; k < 3; k++) {
            d[k] = _mm256_sub_epi32(sb[k], sa[k]);
        }
        P pd[3];
        prep3(d, pd);
        V rel = NAR(dot3p(pd[0], pd[1], pd[2], n[0], n[1], n[2]), 16, *chk);
        V depth = chk32(ld(t->depth[i]), chk);
        st(p->base,
           chk32(_mm256_sub_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), depth), rel), chk));
        ld3(t->ra[i], ra);
        ld3(t->rb[i], rb);
        P pra[3], prb[3];
        prep3(ra, pra);
        prep3(rb, prb);
        V anga[3], angb[3], ianga[3], iangb[3];
        cross_p(pra, n, anga, chk);
        cross_p(prb, n, angb, chk);
        P pa[3], pb[3];
        prep3(anga, pa);
        prep3(angb, pb);
        sym_p(ia, pa, ianga, chk);
        sym_p(ib, pb, iangb, chk);
        st3(p->ang_a, anga);
        st3(p->ang_b, angb);
        st3(p->iang_a, ianga);
        st3(p->iang_b, iangb);
        W vn = addw(vlin, dot3p(wb[0], wb[1], wb[2], pb[0], pb[1], pb[2]));
        vn = subw(vn, dot3p(wa[0], wa[1], wa[2], pa[0], pa[1], pa[2]));
        V live = _mm256_cmpgt_epi32(count, splat((int32_t)i));
        st(p->vn0, _mm256_and_si256(live, NAR(vn, 16, *chk)));
        P pia[3], pib[3];
        prep3(ianga, pia);
        prep3(iangb, pib);
        W kii = addw(kmass, addw(dot3p(pa[0], pa[1], pa[2], pia[0], pia[1], pia[2]),
                                 dot3p(pb[0], pb[1], pb[2], pib[0], pib[1], pib[2])));
        w_st64(t->kii[i], kii);
    }
    // Friction at the centre and the twist.
    V ca[3], cb[3], t1[3], t2[3];
    ld3(t->ca, ca);
    ld3(t->cb, cb);
    ld3(g->t1, t1);
    ld3(g->t2, t2);
    P pca[3], pcb[3], pt1[3], pt2[3];
    prep3(ca, pca);
    prep3(cb, pcb);
    prep3(t1, pt1);
    prep3(t2, pt2);
    V c1a[3], c2a[3], c1b[3], c2b[3], i1a[3], i2a[3], i1b[3], i2b[3];
    cross_p(pca, pt1, c1a, chk);
    cross_p(pca, pt2, c2a, chk);
    cross_p(pcb, pt1, c1b, chk);
    cross_p(pcb, pt2, c2b, chk);
    P p1a[3], p2a[3], p1b[3], p2b[3];
    prep3(c1a, p1a);
    prep3(c2a, p2a);
    prep3(c1b, p1b);
    prep3(c2b, p2b);
    sym_p(ia, p1a, i1a, chk);
    sym_p(ia, p2a, i2a, chk);
    sym_p(ib, p1b, i1b, chk);
    sym_p(ib, p2b, i2b, chk);
    st3(g->ct1_a, c1a);
    st3(g->ct2_a, c2a);
    st3(g->ct1_b, c1b);
    st3(g->ct2_b, c2b);
    st3(g->ict1_a, i1a);
    st3(g->ict2_a, i2a);
    st3(g->ict1_b, i1b);
    st3(g->ict2_b, i2b);
    P q1a[3], q2a[3], q1b[3], q2b[3];
    prep3(i1a, q1a);
    prep3(i2a, q2a);
    prep3(i1b, q1b);
    prep3(i2b, q2b);
    w_st64(t->kt[0], addw(kmass, addw(dot3p(p1a[0], p1a[1], p1a[2], q1a[0], q1a[1], q1a[2]),
                                      dot3p(p1b[0], p1b[1], p1b[2], q1b[0], q1b[1], q1b[2]))));
    w_st64(t->kt[1], addw(kmass, addw(dot3p(p2a[0], p2a[1], p2a[2], q2a[0], q2a[1], q2a[2]),
                                      dot3p(p2b[0], p2b[1], p2b[2], q2b[0], q2b[1], q2b[2]))));
    V ina[3], inb[3];
    sym_p(ia, n, ina, chk);
    sym_p(ib, n, inb, chk);
    st3(g->in_a, ina);
    st3(g->in_b, inb);
    P pina[3], pinb[3];
    prep3(ina, pina);
    prep3(inb, pinb);
    w_st64(t->ktw, addw(dot3p(n[0], n[1], n[2], pina[0], pina[1], pina[2]),
                        dot3p(n[0], n[1], n[2], pinb[0], pinb[1], pinb[2])));
}

AVX2_FN uint32_t prep_math_avx2(ls_contact_lanes *g, ls_contact_prep *t)
{
    K chk = k_zero();
    prep_math(g, t, &chk);
    return k_bad(&chk);
}

static uint32_t prepare(const ls_world *w, const ls_step_ctx *ctx, ls_contact_lanes *g,
                        ls_rolling_lanes *roll, ls_contact_prep *t)
{
    for (uint32_t l = 0; l < LS_LANES; l++) {
        ls_contact_prep_begin_(w, ctx, g, roll, t, l, g->contact[l]);
    }
    if (prep_math_avx2(g, t)) {
        // A value would have left the solver range: the scalar reference
        // (which saturates and reports it) from the start.
        return ls_contact_prepare_scalar_(w, ctx, g, roll, t);
    }
    uint32_t mask = 0;
    for (uint32_t l = 0; l < LS_LANES; l++) {
        mask |= (uint32_t)(ls_contact_prep_end_(w, g, roll, t, l) != 0) << l;
    }
    return mask;
}

const ls_contact_kernels KERNELS = {
    .name = PATH_NAME,
    .warm_start = warm_start,
    .solve = solve,
    .restitution = ls_contact_restitution_scalar_,
    .prep_math = prep_math_avx2,
    .prepare = prepare,
};

bool SUPPORTED(void)
{
#if defined(LS_LANES_512)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
#else
    return __builtin_cpu_supports("avx2");
#endif
}

#else

const ls_contact_kernels KERNELS = {
    .name = PATH_NAME,
    .warm_start = ls_contact_warm_start_scalar_,
    .solve = ls_contact_solve_scalar_,
    .restitution = ls_contact_restitution_scalar_,
    .prep_math = ls_contact_prep_math_scalar_,
    .prepare = ls_contact_prepare_scalar_,
};

bool SUPPORTED(void)
{
    return false;
}

#endif
