// SPDX-License-Identifier: MIT
// Ball joint sweeps on x86 AVX2 (joint_lanes.h): eight ball joints of one
// colour at once, the same integers as the scalar reference (joint_lanes.c)
// by the arithmetic of lanes_avx2.h. K^-1 is computed per lane by the
// scalar code (it needs a division), and a lane whose bias exceeds the
// largest allowed speed is shortened per lane; a group where any value would
// leave the solver range is redone by the scalar reference before anything
// is stored.
// joint_avx512.c builds this file a second time with LS_LANES_512 defined
// (lanes_avx2.h), named "avx512".
#include "joint.h"
#include "joint_lanes.h"

#if defined(LS_LANES_512)
#define KERNELS   ls_ball_kernels_avx512_
#define PATH_NAME "avx512"
#else
#define KERNELS   ls_ball_kernels_avx2_
#define PATH_NAME "avx2"
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))

#include "lanes_avx2.h"

// v turned by dq (rotate in joint_lanes.c), checked.
AVX2 void rotate8(const V *dq, const V *v, V *out, K *chk)
{
    P u[3], pv[3], pw = prep(dq[3]);
    for (int k = 0; k < 3; k++) {
        u[k] = prep(dq[k]);
        pv[k] = prep(v[k]);
    }
    V t[3];
    t[0] = NAR(subw(mulp(u[1], pv[2]), mulp(u[2], pv[1])), 16, *chk);
    t[1] = NAR(subw(mulp(u[2], pv[0]), mulp(u[0], pv[2])), 16, *chk);
    t[2] = NAR(subw(mulp(u[0], pv[1]), mulp(u[1], pv[0])), 16, *chk);
    P pt[3];
    for (int k = 0; k < 3; k++) {
        t[k] = chk32(_mm256_add_epi32(t[k], t[k]), chk);
        pt[k] = prep(t[k]);
    }
    W c[3] = {subw(mulp(u[1], pt[2]), mulp(u[2], pt[1])),
              subw(mulp(u[2], pt[0]), mulp(u[0], pt[2])),
              subw(mulp(u[0], pt[1]), mulp(u[1], pt[0]))};
    for (int k = 0; k < 3; k++) {
        out[k] = chk32(_mm256_add_epi32(v[k], NAR(addw(mulp(pw, pt[k]), c[k]), 16, *chk)), chk);
    }
}

static const int sym_idx[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};

// K += [r]^T I [r] (add_arm_term of joint_lanes.c) in exact 64-bit lanes.
AVX2 void arm_term8(W *k, ls_lanes *im, const V *r, K *chk)
{
    const V zero = _mm256_setzero_si256();
    V s[3][3] = {{zero, _mm256_sub_epi32(zero, r[2]), r[1]},
                 {r[2], zero, _mm256_sub_epi32(zero, r[0])},
                 {_mm256_sub_epi32(zero, r[1]), r[0], zero}};
    P ps[3][3], pi[6];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            ps[i][j] = prep(s[i][j]);
        }
    }
    for (int i = 0; i < 6; i++) {
        pi[i] = prep(ld(im[i]));
    }
    P t[3][3];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            W x = addw(addw(mulp(pi[sym_idx[i][0]], ps[0][j]), mulp(pi[sym_idx[i][1]], ps[1][j])),
                       mulp(pi[sym_idx[i][2]], ps[2][j]));
            t[i][j] = prep(NAR(x, 16, *chk));
        }
    }
    for (int i = 0; i < 3; i++) {
        for (int j = i; j < 3; j++) {
            W x = addw(addw(mulp(ps[0][i], t[0][j]), mulp(ps[1][i], t[1][j])),
                       mulp(ps[2][i], t[2][j]));
            k[sym_idx[i][j]] = addw(k[sym_idx[i][j]], x);
        }
    }
}

// Apply impulse p at arms ra, rb (apply in joint_lanes.c), checked.
AVX2 void apply8(const ls_ball_lanes *g, const V *ra, const V *rb, B *a, B *b, const V *p, K *chk)
{
    P pp[3], pra[3], prb[3];
    for (int k = 0; k < 3; k++) {
        pp[k] = prep(p[k]);
        pra[k] = prep(ra[k]);
        prb[k] = prep(rb[k]);
    }
    V la[3], lb[3];
    for (int k = 0; k < 3; k++) {
        int i = (k + 1) % 3, j = (k + 2) % 3;
        la[k] = NAR(subw(mulp(pra[i], pp[j]), mulp(pra[j], pp[i])), 16, *chk);
        lb[k] = NAR(subw(mulp(prb[i], pp[j]), mulp(prb[j], pp[i])), 16, *chk);
    }
    P ima = prep(ld(g->ima)), imb = prep(ld(g->imb));
    P pla[3], plb[3], ia[6], ib[6];
    for (int k = 0; k < 3; k++) {
        pla[k] = prep(la[k]);
        plb[k] = prep(lb[k]);
    }
    for (int i = 0; i < 6; i++) {
        ia[i] = prep(ld(g->ia[i]));
        ib[i] = prep(ld(g->ib[i]));
    }
    for (int k = 0; k < 3; k++) {
        a->v[k] =
            chk32(_mm256_sub_epi32(a->v[k], NAR(mulp(pp[k], ima), LS_INV_MASS_BITS, *chk)), chk);
        b->v[k] =
            chk32(_mm256_add_epi32(b->v[k], NAR(mulp(pp[k], imb), LS_INV_MASS_BITS, *chk)), chk);
        W xa =
            dot3p(ia[sym_idx[k][0]], ia[sym_idx[k][1]], ia[sym_idx[k][2]], pla[0], pla[1], pla[2]);
        W xb =
            dot3p(ib[sym_idx[k][0]], ib[sym_idx[k][1]], ib[sym_idx[k][2]], plb[0], plb[1], plb[2]);
        a->w[k] = chk32(_mm256_sub_epi32(a->w[k], NAR(xa, 20, *chk)), chk);
        b->w[k] = chk32(_mm256_add_epi32(b->w[k], NAR(xb, 20, *chk)), chk);
    }
}

// Small components: every lane of x within [-2^17, 2^17) (ls_joint_small_q_).
AVX2 V small17(V acc, V x)
{
    return _mm256_or_si256(acc, _mm256_add_epi32(x, splat(0x20000)));
}

AVX2 bool all_small17(V acc)
{
    return all_zero(_mm256_srli_epi32(acc, 18));
}

// a * b of unit quaternions (ls_joint_quat_mul_'s short path), checked.
AVX2 void qmul8(const V *a, const V *b, V *out, K *chk)
{
    P ax = prep(a[0]), ay = prep(a[1]), az = prep(a[2]), aw = prep(a[3]);
    P bx = prep(b[0]), by = prep(b[1]), bz = prep(b[2]), bw = prep(b[3]);
    out[0] = NARF(subw(addw(addw(mulp(aw, bx), mulp(ax, bw)), mulp(ay, bz)), mulp(az, by)), *chk);
    out[1] = NARF(subw(addw(addw(mulp(aw, by), mulp(ay, bw)), mulp(az, bx)), mulp(ax, bz)), *chk);
    out[2] = NARF(subw(addw(addw(mulp(aw, bz), mulp(az, bw)), mulp(ax, by)), mulp(ay, bx)), *chk);
    out[3] = NARF(subw(subw(subw(mulp(aw, bw), mulp(ax, bx)), mulp(ay, by)), mulp(az, bz)), *chk);
}

// Column k of the rotation q (ls_joint_quat_axis_'s short path), checked:
// t = 2 (u x e_k), e_k + round(t w) + round(u x t).
AVX2 void qaxis8(const V *q, int k, V *out, K *chk)
{
    const V zero = _mm256_setzero_si256();
    V x2 = _mm256_add_epi32(q[0], q[0]), y2 = _mm256_add_epi32(q[1], q[1]);
    V z2 = _mm256_add_epi32(q[2], q[2]);
    V t[3];
    t[0] = k == 0 ? zero : k == 1 ? _mm256_sub_epi32(zero, z2) : y2;
    t[1] = k == 0 ? z2 : k == 1 ? zero : _mm256_sub_epi32(zero, x2);
    t[2] = k == 0 ? _mm256_sub_epi32(zero, y2) : k == 1 ? x2 : zero;
    P u[3] = {prep(q[0]), prep(q[1]), prep(q[2])}, w = prep(q[3]);
    P pt[3] = {prep(t[0]), prep(t[1]), prep(t[2])};
    for (int c = 0; c < 3; c++) {
        int i = (c + 1) % 3, j = (c + 2) % 3;
        V e = splat(c == k ? 65536 : 0);
        V r = _mm256_add_epi32(e, NARF(mulp(pt[c], w), *chk));
        out[c] =
            chk32(_mm256_add_epi32(r, NARF(subw(mulp(u[i], pt[j]), mulp(u[j], pt[i])), *chk)), chk);
    }
}

// The alignment block of the align_only hinges (hinge warm start, joint.h):
// the frames at the bodies' poses, the directions u x a and v x a, the
// errors, the inverse-inertia products, K^-1 (per lane, by the scalar
// function) and the warm start's impulses applied; the block written to
// the lanes that have it (the others keep zeros). False when a value is
// not of the short paths the scalar code then takes.
AVX2 bool align_warm8(const ls_ball_sweep *sw, ls_ball_lanes *g, B *a, B *b, K *chk)
{
    const ls_body *bodies = sw->world->bodies;
    int32_t qa[4][8], qb[4][8];
    for (int l = 0; l < 8; l++) {
        ls_quat x = bodies[g->al_body_a[l]].q, y = bodies[g->al_body_b[l]].q;
        qa[0][l] = x.x, qa[1][l] = x.y, qa[2][l] = x.z, qa[3][l] = x.w;
        qb[0][l] = y.x, qb[1][l] = y.y, qb[2][l] = y.z, qb[3][l] = y.w;
    }
    V on = _mm256_cmpgt_epi32(ld(g->al_warm), _mm256_setzero_si256());
    V vqa[4], vqb[4], fa_[4], fb_[4], small = _mm256_setzero_si256();
    for (int k = 0; k < 4; k++) {
        vqa[k] = _mm256_and_si256(ld(qa[k]), on);
        vqb[k] = _mm256_and_si256(ld(qb[k]), on);
        fa_[k] = ld(g->al_fa[k]);
        fb_[k] = ld(g->al_fb[k]);
        small = small17(small17(small17(small17(small, vqa[k]), vqb[k]), fa_[k]), fb_[k]);
    }
    V fa[4], fb[4];
    qmul8(vqa, fa_, fa, chk);
    qmul8(vqb, fb_, fb, chk);
    for (int k = 0; k < 4; k++) {
        small = small17(small17(small, fa[k]), fb[k]);
    }
    if (!all_small17(small)) {
        return false;
    }
    V ax[3], u[3], v[3];
    qaxis8(fa, 0, ax, chk);
    qaxis8(fb, 1, u, chk);
    qaxis8(fb, 2, v, chk);
    // ls_joint_small_dir_ of the three axes and of the two directions.
    V big = _mm256_setzero_si256();
    for (int c = 0; c < 3; c++) {
        big = _mm256_or_si256(big, _mm256_xor_si256(ax[c], _mm256_srai_epi32(ax[c], 31)));
        big = _mm256_or_si256(big, _mm256_xor_si256(u[c], _mm256_srai_epi32(u[c], 31)));
        big = _mm256_or_si256(big, _mm256_xor_si256(v[c], _mm256_srai_epi32(v[c], 31)));
    }
    P pa[3] = {prep(ax[0]), prep(ax[1]), prep(ax[2])};
    P pu[3] = {prep(u[0]), prep(u[1]), prep(u[2])}, pv[3] = {prep(v[0]), prep(v[1]), prep(v[2])};
    V d[2][3];
    for (int c = 0; c < 3; c++) {
        int i = (c + 1) % 3, j = (c + 2) % 3;
        d[0][c] = NARF(subw(mulp(pu[i], pa[j]), mulp(pu[j], pa[i])), *chk);
        d[1][c] = NARF(subw(mulp(pv[i], pa[j]), mulp(pv[j], pa[i])), *chk);
        big = _mm256_or_si256(big, _mm256_xor_si256(d[0][c], _mm256_srai_epi32(d[0][c], 31)));
        big = _mm256_or_si256(big, _mm256_xor_si256(d[1][c], _mm256_srai_epi32(d[1][c], 31)));
    }
    if (!all_zero(_mm256_srli_epi32(big, 17))) {
        return false;
    }
    V c0 = NARF(dot3p(pu[0], pu[1], pu[2], pa[0], pa[1], pa[2]), *chk);
    V c1 = NARF(dot3p(pv[0], pv[1], pv[2], pa[0], pa[1], pa[2]), *chk);
    // The products I^-1 d (ls_joint_cache_dirs_from_, rows of the matrices).
    P pd[2][3], ma[9], mb[9];
    for (int c = 0; c < 3; c++) {
        pd[0][c] = prep(d[0][c]);
        pd[1][c] = prep(d[1][c]);
    }
    for (int e = 0; e < 9; e++) {
        ma[e] = prep(ld(g->al_ma[e]));
        mb[e] = prep(ld(g->al_mb[e]));
    }
    V ia[2][3], ib[2][3];
    for (int r = 0; r < 2; r++) {
        for (int c = 0; c < 3; c++) {
            ia[r][c] = NARF(
                dot3p(ma[3 * c], ma[3 * c + 1], ma[3 * c + 2], pd[r][0], pd[r][1], pd[r][2]), *chk);
            ib[r][c] = NARF(
                dot3p(mb[3 * c], mb[3 * c + 1], mb[3 * c + 2], pd[r][0], pd[r][1], pd[r][2]), *chk);
        }
    }
    // K (ls_joint_cached_k_): d_r . (I_a^-1 d_s + I_b^-1 d_s), exact sums.
    P pia[2][3], pib[2][3];
    for (int r = 0; r < 2; r++) {
        for (int c = 0; c < 3; c++) {
            pia[r][c] = prep(ia[r][c]);
            pib[r][c] = prep(ib[r][c]);
        }
    }
    const int rs[3][2] = {{0, 0}, {0, 1}, {1, 1}};
    int32_t kk[3][8];
    for (int e = 0; e < 3; e++) {
        int r = rs[e][0], q = rs[e][1];
        W x = addw(dot3p(pd[r][0], pd[r][1], pd[r][2], pia[q][0], pia[q][1], pia[q][2]),
                   dot3p(pd[r][0], pd[r][1], pd[r][2], pib[q][0], pib[q][1], pib[q][2]));
        st(kk[e], NARF(x, *chk));
    }
    if (k_bad(chk)) {
        return false;
    }
    int32_t inv[2][2][8];
    int32_t warm[8];
    st(warm, ld(g->al_warm));
    for (int l = 0; l < 8; l++) {
        ls_fx m[2][2] = {{0, 0}, {0, 0}};
        if (warm[l]) {
            ls_joint_align2_inverse_(kk[0][l], kk[1][l], kk[2][l], m);
        }
        inv[0][0][l] = m[0][0], inv[0][1][l] = m[0][1];
        inv[1][0][l] = m[1][0], inv[1][1][l] = m[1][1];
    }
    // The warm start's impulses (ls_joint_apply_dirs_).
    P i0 = prep(ld(g->al_imp[0])), i1 = prep(ld(g->al_imp[1]));
    for (int c = 0; c < 3; c++) {
        W da = addw(mulp(pia[0][c], i0), mulp(pia[1][c], i1));
        W db = addw(mulp(pib[0][c], i0), mulp(pib[1][c], i1));
        a->w[c] = chk32(_mm256_sub_epi32(a->w[c], NARF(da, *chk)), chk);
        b->w[c] = chk32(_mm256_add_epi32(b->w[c], NARF(db, *chk)), chk);
    }
    if (k_bad(chk)) {
        return false;
    }
    for (int r = 0; r < 2; r++) {
        for (int c = 0; c < 3; c++) {
            st(g->al_dir[r][c], _mm256_and_si256(d[r][c], on));
            st(g->al_ia[r][c], _mm256_and_si256(ia[r][c], on));
            st(g->al_ib[r][c], _mm256_and_si256(ib[r][c], on));
        }
        st(g->al_inv[r][0], ld(inv[r][0]));
        st(g->al_inv[r][1], ld(inv[r][1]));
    }
    st(g->al_c[0], _mm256_and_si256(c0, on));
    st(g->al_c[1], _mm256_and_si256(c1, on));
    return true;
}

AVX2_FN uint32_t warm_start(const ls_ball_sweep *sw, ls_ball_lanes *g)
{
    K chk = k_zero();
    B a, b;
    gather(sw->states, g->a, &a, true);
    gather(sw->states, g->b, &b, true);
    if (!all_zero(ld(g->al_warm)) && !align_warm8(sw, g, &a, &b, &chk)) {
        return ls_ball_warm_start_scalar_(sw, g);
    }
    V ra0[3], rb0[3], ra[3], rb[3];
    for (int k = 0; k < 3; k++) {
        ra0[k] = ld(g->ra0[k]);
        rb0[k] = ld(g->rb0[k]);
    }
    rotate8(a.dq, ra0, ra, &chk);
    rotate8(b.dq, rb0, rb, &chk);
    // K = (ma + mb) E + arm terms, exact 64-bit (ma, mb >= 0: zero-extended).
    V m = _mm256_add_epi32(ld(g->ima), ld(g->imb)); // < 2^32 as unsigned
    W md = w_zext_shl(m, 36 - LS_INV_MASS_BITS);
    W zero = w_of(_mm256_setzero_si256());
    W k[6] = {md, zero, zero, md, zero, md};
    arm_term8(k, g->ia, ra, &chk);
    arm_term8(k, g->ib, rb, &chk);
    // K^-1 per lane (one division each): the scalar code.
    int64_t kk[6][8];
    for (int i = 0; i < 6; i++) {
        w_st64(kk[i], k[i]);
    }
    int32_t kinv[6][8];
    uint32_t lane_ovf = 0;
    for (int l = 0; l < 8; l++) {
        const int64_t kl[6] = {kk[0][l], kk[1][l], kk[2][l], kk[3][l], kk[4][l], kk[5][l]};
        int32_t out[6];
        uint32_t o = 0;
        ls_ball_inverse_k_(kl, out, &o);
        lane_ovf |= o;
        for (int i = 0; i < 6; i++) {
            kinv[i][l] = out[i];
        }
    }
    V p[3];
    for (int q = 0; q < 3; q++) {
        p[q] = ld(g->impulse[q]);
    }
    apply8(g, ra, rb, &a, &b, p, &chk);
    if (k_bad(&chk) || lane_ovf) {
        return ls_ball_warm_start_scalar_(sw, g);
    }
    for (int q = 0; q < 3; q++) {
        st(g->ra[q], ra[q]);
        st(g->rb[q], rb[q]);
    }
    for (int i = 0; i < 6; i++) {
        st(g->kinv[i], ld(kinv[i]));
    }
    scatter(sw->states, g->a, &a);
    scatter(sw->states, g->b, &b);
    return 0;
}

// The lanes' alignment blocks (ls_joint_align2_solve_ in joint.h, with the
// rounding of the ls_fx functions): false when some lane needs what the
// scalar code does beyond these integers (a direction that is not short, a
// bias to shorten); an overflow raises chk. Lanes without the block hold
// zeros and change nothing. The new impulses go to imp.
AVX2 bool align8(const ls_ball_sweep *sw, const ls_ball_lanes *g, B *a, B *b, V *imp, K *chk)
{
    P d[2][3], pwa[3], pwb[3];
    V big = _mm256_setzero_si256();
    for (int r = 0; r < 2; r++) {
        for (int c = 0; c < 3; c++) {
            V x = ld(g->al_dir[r][c]);
            big = _mm256_or_si256(big, _mm256_xor_si256(x, _mm256_srai_epi32(x, 31)));
            d[r][c] = prep(x);
        }
    }
    if (!all_zero(_mm256_srli_epi32(big, 17))) {
        return false; // ls_joint_small_dir_ fails: the saturating dot products
    }
    for (int c = 0; c < 3; c++) {
        pwa[c] = prep(a->w[c]);
        pwb[c] = prep(b->w[c]);
    }
    V rhs[2];
    for (int r = 0; r < 2; r++) {
        W s = subw(dot3p(pwb[0], pwb[1], pwb[2], d[r][0], d[r][1], d[r][2]),
                   dot3p(pwa[0], pwa[1], pwa[2], d[r][0], d[r][1], d[r][2]));
        rhs[r] = NARF(s, *chk);
    }
    V old[2] = {ld(g->al_imp[0]), ld(g->al_imp[1])};
    if (sw->use_bias) {
        P rate = prep(splat(sw->bias_rate));
        V bv[2];
        for (int r = 0; r < 2; r++) {
            bv[r] = NARF(mulp(prep(ld(g->al_c[r])), rate), *chk);
        }
        P b0 = prep(bv[0]), b1 = prep(bv[1]), mx = prep(splat(sw->max_bias));
        if (w_any_gt(addw(mulp(b0, b0), mulp(b1, b1)), mulp(mx, mx))) {
            return false; // the bias is shortened (ls_joint_bias3_)
        }
        for (int r = 0; r < 2; r++) {
            rhs[r] = chk32(_mm256_add_epi32(rhs[r], bv[r]), chk);
        }
    }
    P pr0 = prep(rhs[0]), pr1 = prep(rhs[1]);
    P ms = prep(splat(sw->mass_scale)), is = prep(splat(sw->impulse_scale));
    const V zero = _mm256_setzero_si256();
    P pinc[2];
    for (int r = 0; r < 2; r++) {
        V x = NARF(addw(mulp(prep(ld(g->al_inv[r][0])), pr0), mulp(prep(ld(g->al_inv[r][1])), pr1)),
                   *chk);
        V y = x;
        if (sw->use_bias) {
            y = chk32(
                _mm256_add_epi32(NARF(mulp(prep(x), ms), *chk), NARF(mulp(prep(old[r]), is), *chk)),
                chk);
        }
        V inc = chk32(_mm256_sub_epi32(zero, y), chk);
        imp[r] = chk32(_mm256_add_epi32(old[r], inc), chk);
        pinc[r] = prep(inc);
    }
    for (int c = 0; c < 3; c++) {
        W da =
            addw(mulp(prep(ld(g->al_ia[0][c])), pinc[0]), mulp(prep(ld(g->al_ia[1][c])), pinc[1]));
        W db =
            addw(mulp(prep(ld(g->al_ib[0][c])), pinc[0]), mulp(prep(ld(g->al_ib[1][c])), pinc[1]));
        a->w[c] = chk32(_mm256_sub_epi32(a->w[c], NARF(da, *chk)), chk);
        b->w[c] = chk32(_mm256_add_epi32(b->w[c], NARF(db, *chk)), chk);
    }
    return true;
}

// ls_joint_limit_row_at_ in the lanes `on` (elsewhere the impulse is 0 and
// *acc is kept): returns the impulse to add, *acc the new accumulated one.
AVX2 V limit8(V c, V cdot, V mass, V *acc, V on, const ls_ball_sweep *sw, K *chk)
{
    const V zero = _mm256_setzero_si256(), one = splat(65536);
    V pos = _mm256_cmpgt_epi32(c, zero);
    V bias = NARF(mulp(prep(c), prep(splat(sw->inv_h))), *chk); // speculative
    V ms = one, is = zero;
    if (sw->use_bias) {
        V soft = NARF(mulp(prep(c), prep(splat(sw->joint.bias_rate))), *chk);
        soft = _mm256_min_epi32(_mm256_max_epi32(soft, splat(-LS_JOINT_MAX_BIAS)),
                                splat(LS_JOINT_MAX_BIAS));
        bias = _mm256_blendv_epi8(soft, bias, pos);
        ms = _mm256_blendv_epi8(splat(sw->joint.mass_scale), one, pos);
        is = _mm256_andnot_si256(pos, splat(sw->joint.impulse_scale));
    } else {
        bias = _mm256_and_si256(bias, pos);
    }
    // mass * 1 and 0 * acc are exact: the rigid row's shortcuts give these bits.
    V m = NARF(mulp(prep(mass), prep(ms)), *chk);
    V t = NARF(mulp(prep(m), prep(chk32(_mm256_add_epi32(cdot, bias), chk))), *chk);
    V y = chk32(_mm256_add_epi32(t, NARF(mulp(prep(is), prep(*acc)), *chk)), chk);
    V now = chk32(_mm256_sub_epi32(*acc, y), chk);
    now = _mm256_blendv_epi8(*acc, _mm256_max_epi32(now, zero), on);
    V imp = _mm256_sub_epi32(now, *acc);
    *acc = now;
    return imp;
}

// k * x (ls_fx_mul), checked.
AVX2 V fmul8(V k, V x, K *chk)
{
    return NARF(mulp(prep(k), prep(x)), *chk);
}

// The bodies' w_step (the spins of the position update; ls_joint_relax_angle_).
AVX2 void step_spins8(const ls_ball_sweep *sw, const uint32_t *idx, V *w)
{
    int32_t t[3][8];
    for (int l = 0; l < 8; l++) {
        const ls_vec3 s = sw->masses[idx[l]].w_step;
        t[0][l] = s.x, t[1][l] = s.y, t[2][l] = s.z;
    }
    for (int k = 0; k < 3; k++) {
        w[k] = ld(t[k]);
    }
}

// (w_b - w_a) . d of the steps' spins (ls_joint_relative_speed_), checked.
AVX2 V step_speed8(const V *wa, const V *wb, const V *d, K *chk)
{
    W s = subw(dot3p(prep(wb[0]), prep(wb[1]), prep(wb[2]), prep(d[0]), prep(d[1]), prep(d[2])),
               dot3p(prep(wa[0]), prep(wa[1]), prep(wa[2]), prep(d[0]), prep(d[1]), prep(d[2])));
    return NARF(s, *chk);
}

// The relax pass's angle (ls_joint_relax_angle_): angle + h speed, checked.
AVX2 V relax_angle8(V angle, V speed, const ls_ball_sweep *sw, K *chk)
{
    return chk32(_mm256_add_epi32(angle, fmul8(splat(sw->h), speed, chk)), chk);
}

// (w_b - w_a) . d for short directions d (ls_joint_relative_speed_), checked.
AVX2 V speed8(const B *a, const B *b, const V *d, K *chk)
{
    W s = subw(
        dot3p(prep(b->w[0]), prep(b->w[1]), prep(b->w[2]), prep(d[0]), prep(d[1]), prep(d[2])),
        dot3p(prep(a->w[0]), prep(a->w[1]), prep(a->w[2]), prep(d[0]), prep(d[1]), prep(d[2])));
    return NARF(s, *chk);
}

// w_a -= rnd(p I_a^-1 d), w_b += rnd(p I_b^-1 d) (ls_joint_dirs_times_ of one row), checked.
AVX2 void turn8(B *a, B *b, const ls_lanes *da, const ls_lanes *db, V p, K *chk)
{
    P pp = prep(p);
    for (int c = 0; c < 3; c++) {
        a->w[c] = chk32(_mm256_sub_epi32(a->w[c], NARF(mulp(prep(ld(da[c])), pp), *chk)), chk);
        b->w[c] = chk32(_mm256_add_epi32(b->w[c], NARF(mulp(prep(ld(db[c])), pp), *chk)), chk);
    }
}

// The lanes' cone friction (ls_joint_friction_solve_ in joint.h): the
// products of a row summed exactly in 64 bits (the spins and impulses are
// checked to lie in the solver range, so three products stay below 2^63), a
// lane whose impulse is longer than its bound shortened with the scalar
// code's own functions; an overflow raises chk. The new accumulated
// impulses go to acc.
AVX2 void friction8(const ls_ball_lanes *g, B *a, B *b, V *acc, K *chk)
{
    const V zero = _mm256_setzero_si256();
    V on = _mm256_cmpgt_epi32(ld(g->fr_on), zero);
    P cd[3];
    for (int k = 0; k < 3; k++) {
        cd[k] = prep(chk32(_mm256_and_si256(on, _mm256_sub_epi32(b->w[k], a->w[k])), chk));
        acc[k] = ld(g->fr_acc[k]);
    }
    V now[3];
    for (int r = 0; r < 3; r++) {
        V mc = NARF(dot3p(prep(ld(g->fr_m[3 * r])), prep(ld(g->fr_m[3 * r + 1])),
                          prep(ld(g->fr_m[3 * r + 2])), cd[0], cd[1], cd[2]),
                    *chk);
        now[r] = chk32(_mm256_sub_epi32(acc[r], mc), chk);
    }
    P pn[3] = {prep(now[0]), prep(now[1]), prep(now[2])};
    P top = prep(ld(g->fr_top));
    if (w_any_gt(dot3p(pn[0], pn[1], pn[2], pn[0], pn[1], pn[2]), mulp(top, top)) && !k_bad(chk)) {
        int32_t x[3][8], t[8];
        for (int k = 0; k < 3; k++) {
            st(x[k], now[k]);
        }
        st(t, ld(g->fr_top));
        for (int l = 0; l < 8; l++) {
            ls_vec3 v = ls_vec3_make(x[0][l], x[1][l], x[2][l]);
            if (ls_vec3_len_sq_q32(v) > (uint64_t)t[l] * (uint64_t)t[l]) {
                v = ls_vec3_scale(v, ls_fx_div(t[l], ls_vec3_len(v)));
                x[0][l] = v.x, x[1][l] = v.y, x[2][l] = v.z;
            }
        }
        for (int k = 0; k < 3; k++) {
            now[k] = ld(x[k]);
        }
    }
    P pd[3];
    for (int k = 0; k < 3; k++) {
        now[k] = _mm256_blendv_epi8(acc[k], now[k], on);
        pd[k] = prep(chk32(_mm256_sub_epi32(now[k], acc[k]), chk));
        acc[k] = now[k];
    }
    for (int r = 0; r < 3; r++) {
        V ta = NARF(dot3p(prep(ld(g->al_ma[3 * r])), prep(ld(g->al_ma[3 * r + 1])),
                          prep(ld(g->al_ma[3 * r + 2])), pd[0], pd[1], pd[2]),
                    *chk);
        V tb = NARF(dot3p(prep(ld(g->al_mb[3 * r])), prep(ld(g->al_mb[3 * r + 1])),
                          prep(ld(g->al_mb[3 * r + 2])), pd[0], pd[1], pd[2]),
                    *chk);
        a->w[r] = chk32(_mm256_sub_epi32(a->w[r], _mm256_and_si256(on, ta)), chk);
        b->w[r] = chk32(_mm256_add_epi32(b->w[r], _mm256_and_si256(on, tb)), chk);
    }
}

// The lanes' cone rows (ls_joint_cone_rows_solve_ in joint.h): false when a
// direction is not short (the scalar code's saturating products); an
// overflow raises chk. The new accumulated impulses go to acc.
AVX2 bool cone8(const ls_ball_sweep *sw, const ls_ball_lanes *g, B *a, B *b, V *acc, K *chk)
{
    const V zero = _mm256_setzero_si256();
    V on = _mm256_cmpgt_epi32(ld(g->cn_on), zero);
    V n[3], t[3], nz = zero, big = zero;
    for (int c = 0; c < 3; c++) {
        n[c] = ld(g->cn_n[c]);
        t[c] = ld(g->cn_t[c]);
        nz = _mm256_or_si256(nz, n[c]);
        big = _mm256_or_si256(big, _mm256_xor_si256(n[c], _mm256_srai_epi32(n[c], 31)));
        big = _mm256_or_si256(big, _mm256_xor_si256(t[c], _mm256_srai_epi32(t[c], 31)));
    }
    if (!all_zero(_mm256_srli_epi32(big, 17))) {
        return false;
    }
    for (int k = 0; k < 3; k++) {
        acc[k] = ld(g->cn_acc[k]);
    }
    // The angles (in the relax pass stepped by the speeds the rows start
    // with; in lanes without the row the value is unused).
    V swing_speed = speed8(a, b, n, chk), swing = ld(g->cn_swing), twist = ld(g->cn_twist);
    if (!sw->use_bias) {
        V sa[3], sb[3];
        step_spins8(sw, g->a, sa);
        step_spins8(sw, g->b, sb);
        swing = relax_angle8(swing, step_speed8(sa, sb, n, chk), sw, chk);
        twist = relax_angle8(twist, step_speed8(sa, sb, t, chk), sw, chk);
    }
    // Swing, where the warm start found a direction.
    V swing_on = _mm256_andnot_si256(_mm256_cmpeq_epi32(nz, zero), on);
    V cdot = chk32(_mm256_sub_epi32(zero, swing_speed), chk);
    V c = chk32(_mm256_sub_epi32(ld(g->cn_cone), swing), chk);
    V imp = limit8(c, cdot, ld(g->cn_m[0]), &acc[0], swing_on, sw, chk);
    turn8(a, b, g->cn_na, g->cn_nb, chk32(_mm256_sub_epi32(zero, imp), chk), chk);
    // Twist, where limited: the upper row sees the speed the lower left.
    V twist_on = _mm256_and_si256(_mm256_cmpgt_epi32(ld(g->cn_tl), zero), on);
    cdot = speed8(a, b, t, chk);
    V lo = limit8(chk32(_mm256_sub_epi32(twist, ld(g->cn_lower)), chk), cdot, ld(g->cn_m[1]),
                  &acc[1], twist_on, sw, chk);
    cdot = chk32(_mm256_add_epi32(cdot, NARF(mulp(prep(ld(g->cn_k)), prep(lo)), *chk)), chk);
    V hi = limit8(chk32(_mm256_sub_epi32(ld(g->cn_upper), twist), chk),
                  chk32(_mm256_sub_epi32(zero, cdot), chk), ld(g->cn_m[1]), &acc[2], twist_on, sw,
                  chk);
    turn8(a, b, g->cn_ta, g->cn_tb, chk32(_mm256_sub_epi32(lo, hi), chk), chk);
    return true;
}

// The lanes' hinge rows about the axis (ls_joint_axial_rows_solve_ in
// joint.h): spring, motor and limits where the lane's flags have them, each
// seeing the speed the ones before it left, their sum applied once. False
// when the axis is not short (the scalar code's saturating products); an
// overflow raises chk. The new accumulated impulses go to acc, the explicit
// springs' stiffness impulses to push.
AVX2 bool axial8(const ls_ball_sweep *sw, const ls_ball_lanes *g, B *a, B *b, V *acc, V *push,
                 K *chk)
{
    const V zero = _mm256_setzero_si256();
    V on = _mm256_cmpgt_epi32(ld(g->ax_on), zero);
    V d[3], big = zero;
    for (int c = 0; c < 3; c++) {
        d[c] = ld(g->ax_d[c]);
        big = _mm256_or_si256(big, _mm256_xor_si256(d[c], _mm256_srai_epi32(d[c], 31)));
    }
    if (!all_zero(_mm256_srli_epi32(big, 17))) {
        return false;
    }
    V flags = ld(g->ax_flags);
    V spring_on = _mm256_and_si256(
        on, _mm256_cmpgt_epi32(_mm256_and_si256(flags, splat(LS_AXIAL_SPRING)), zero));
    V motor_on = _mm256_and_si256(
        on, _mm256_cmpgt_epi32(_mm256_and_si256(flags, splat(LS_AXIAL_MOTOR)), zero));
    V limit_on = _mm256_and_si256(
        on, _mm256_cmpgt_epi32(_mm256_and_si256(flags, splat(LS_AXIAL_LIMIT)), zero));
    for (int k = 0; k < 4; k++) {
        acc[k] = ld(g->ax_acc[k]);
    }
    V m = ld(g->ax_m), kk = ld(g->ax_k), angle = ld(g->ax_angle);
    V cdot = speed8(a, b, d, chk), total = zero;
    V expl = _mm256_and_si256(
        spring_on, _mm256_cmpgt_epi32(_mm256_and_si256(flags, splat(LS_AXIAL_EXPLICIT)), zero));
    if (!sw->use_bias) {
        // Stepped, but measured for an explicit spring (ls_joint_axial_steps_).
        V sa[3], sb[3];
        step_spins8(sw, g->a, sa);
        step_spins8(sw, g->b, sb);
        angle = _mm256_blendv_epi8(relax_angle8(angle, step_speed8(sa, sb, d, chk), sw, chk), angle,
                                   expl);
    }
    *push = ld(g->ax_push);
    if (!all_zero(spring_on)) {
        // Implicit: -(m s_m (cdot + rate angle) + s_i acc); explicit: the
        // stiffness push -m (rate angle) (the biased pass's, plus the relax
        // pass's) and the damping -(m s_m cdot + s_i acc), which alone
        // accumulates.
        V stiff = fmul8(ld(g->ax_rate), angle, chk);
        V mm = fmul8(m, ld(g->ax_ms), chk), damp_acc = fmul8(ld(g->ax_is), acc[0], chk);
        V rhs = chk32(_mm256_add_epi32(cdot, stiff), chk);
        V soft = chk32(
            _mm256_sub_epi32(zero, chk32(_mm256_add_epi32(fmul8(mm, rhs, chk), damp_acc), chk)),
            chk);
        V damp = chk32(
            _mm256_sub_epi32(zero, chk32(_mm256_add_epi32(fmul8(mm, cdot, chk), damp_acc), chk)),
            chk);
        V p = chk32(_mm256_sub_epi32(zero, fmul8(m, stiff, chk)), chk);
        V new_push = sw->use_bias ? p : chk32(_mm256_add_epi32(*push, p), chk);
        *push = _mm256_blendv_epi8(*push, new_push, expl);
        V add = _mm256_and_si256(_mm256_blendv_epi8(soft, damp, expl), spring_on);
        V imp = _mm256_and_si256(
            _mm256_blendv_epi8(soft, chk32(_mm256_add_epi32(p, damp), chk), expl), spring_on);
        acc[0] = chk32(_mm256_add_epi32(acc[0], add), chk);
        total = chk32(_mm256_add_epi32(total, imp), chk);
        cdot = chk32(_mm256_add_epi32(cdot, fmul8(kk, imp, chk)), chk);
    }
    if (!all_zero(motor_on)) {
        V rel = chk32(_mm256_sub_epi32(cdot, ld(g->ax_speed)), chk);
        V imp = chk32(_mm256_sub_epi32(zero, fmul8(m, rel, chk)), chk);
        V top = ld(g->ax_top);
        V now = chk32(_mm256_add_epi32(acc[1], imp), chk);
        now = _mm256_min_epi32(_mm256_max_epi32(now, _mm256_sub_epi32(zero, top)), top);
        now = _mm256_blendv_epi8(acc[1], now, motor_on);
        imp = _mm256_sub_epi32(now, acc[1]);
        acc[1] = now;
        total = chk32(_mm256_add_epi32(total, imp), chk);
        cdot = chk32(_mm256_add_epi32(cdot, fmul8(kk, imp, chk)), chk);
    }
    if (!all_zero(limit_on)) {
        V lo = limit8(chk32(_mm256_sub_epi32(angle, ld(g->ax_lower)), chk), cdot, m, &acc[2],
                      limit_on, sw, chk);
        total = chk32(_mm256_add_epi32(total, lo), chk);
        cdot = chk32(_mm256_add_epi32(cdot, fmul8(kk, lo, chk)), chk);
        V hi = limit8(chk32(_mm256_sub_epi32(ld(g->ax_upper), angle), chk),
                      chk32(_mm256_sub_epi32(zero, cdot), chk), m, &acc[3], limit_on, sw, chk);
        total = chk32(_mm256_sub_epi32(total, hi), chk);
    }
    turn8(a, b, g->ax_ia, g->ax_ib, total, chk);
    return true;
}

AVX2_FN uint32_t solve(const ls_ball_sweep *sw, ls_ball_lanes *g)
{
    K chk = k_zero();
    bool bias = sw->bias_rate != 0;
    B a, b;
    gather(sw->states, g->a, &a, bias);
    gather(sw->states, g->b, &b, bias);
    bool friction = !all_zero(ld(g->fr_on));
    V fr_acc[3];
    if (friction) {
        friction8(g, &a, &b, fr_acc, &chk); // a cone's friction before its rows
    }
    bool axial = !all_zero(ld(g->ax_on));
    V ax_acc[4], ax_push = _mm256_setzero_si256();
    if (axial && !axial8(sw, g, &a, &b, ax_acc, &ax_push, &chk)) {
        return ls_ball_solve_scalar_(sw, g);
    }
    bool cone = !all_zero(ld(g->cn_on));
    V cn_acc[3] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    if (cone && !cone8(sw, g, &a, &b, cn_acc, &chk)) {
        return ls_ball_solve_scalar_(sw, g);
    }
    bool align = !all_zero(ld(g->al_on));
    V al_imp[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    if (align && !align8(sw, g, &a, &b, al_imp, &chk)) {
        return ls_ball_solve_scalar_(sw, g);
    }
    V ra[3], rb[3];
    P pra[3], prb[3], pwa[3], pwb[3];
    for (int k = 0; k < 3; k++) {
        ra[k] = ld(g->ra[k]);
        rb[k] = ld(g->rb[k]);
        pra[k] = prep(ra[k]);
        prb[k] = prep(rb[k]);
        pwa[k] = prep(a.w[k]);
        pwb[k] = prep(b.w[k]);
    }
    V rhs[3];
    for (int k = 0; k < 3; k++) {
        int i = (k + 1) % 3, j = (k + 2) % 3;
        W x = subw(subw(mulp(pwb[i], prb[j]), mulp(pwb[j], prb[i])),
                   subw(mulp(pwa[i], pra[j]), mulp(pwa[j], pra[i])));
        rhs[k] = chk32(_mm256_add_epi32(_mm256_sub_epi32(b.v[k], a.v[k]), NAR(x, 16, chk)), &chk);
    }
    if (bias) {
        P rate = prep(splat(sw->bias_rate));
        V bv[3];
        for (int k = 0; k < 3; k++) {
            V c = chk32(_mm256_add_epi32(ld(g->c0[k]), b.dp[k]), &chk);
            c = chk32(_mm256_sub_epi32(c, a.dp[k]), &chk);
            c = chk32(_mm256_add_epi32(c, rb[k]), &chk);
            c = chk32(_mm256_sub_epi32(c, ra[k]), &chk);
            bv[k] = NAR(mulp(rate, prep(c)), 16, chk);
        }
        // |bias| above max_bias: shortened per lane (isqrt and a division).
        P b0 = prep(bv[0]), b1 = prep(bv[1]), b2 = prep(bv[2]), mx = prep(splat(sw->max_bias));
        W len2 = dot3p(b0, b1, b2, b0, b1, b2), lim = mulp(mx, mx);
        if (w_any_gt(len2, lim) && !k_bad(&chk)) {
            int32_t x[3][8];
            for (int k = 0; k < 3; k++) {
                st(x[k], bv[k]);
            }
            for (int l = 0; l < 8; l++) {
                uint64_t q = 0;
                for (int k = 0; k < 3; k++) {
                    q += (uint64_t)((int64_t)x[k][l] * x[k][l]);
                }
                if (q > (uint64_t)((int64_t)sw->max_bias * sw->max_bias)) {
                    int64_t len = (int64_t)ls_isqrt64(q);
                    for (int k = 0; k < 3; k++) {
                        x[k][l] = (int32_t)(((int64_t)x[k][l] * sw->max_bias) / len);
                    }
                }
            }
            for (int k = 0; k < 3; k++) {
                bv[k] = ld(x[k]);
            }
        }
        for (int k = 0; k < 3; k++) {
            rhs[k] = chk32(_mm256_add_epi32(rhs[k], bv[k]), &chk);
        }
    }
    P pr[3], ki[6];
    for (int k = 0; k < 3; k++) {
        pr[k] = prep(rhs[k]);
    }
    for (int i = 0; i < 6; i++) {
        ki[i] = prep(ld(g->kinv[i]));
    }
    P ms = prep(splat(sw->mass_scale)), is = prep(splat(sw->impulse_scale));
    V inc[3], imp[3];
    for (int k = 0; k < 3; k++) {
        V xk =
            NAR(dot3p(ki[sym_idx[k][0]], ki[sym_idx[k][1]], ki[sym_idx[k][2]], pr[0], pr[1], pr[2]),
                16, chk);
        V old = ld(g->impulse[k]);
        V y = NAR(addw(mulp(ms, prep(xk)), mulp(is, prep(old))), 16, chk);
        inc[k] = chk32(_mm256_sub_epi32(_mm256_setzero_si256(), y), &chk);
        imp[k] = chk32(_mm256_add_epi32(old, inc[k]), &chk);
    }
    apply8(g, ra, rb, &a, &b, inc, &chk);
    if (k_bad(&chk)) {
        return ls_ball_solve_scalar_(sw, g);
    }
    for (int k = 0; k < 3; k++) {
        st(g->impulse[k], imp[k]);
    }
    if (align) {
        st(g->al_imp[0], al_imp[0]);
        st(g->al_imp[1], al_imp[1]);
    }
    if (axial) {
        for (int k = 0; k < 4; k++) {
            st(g->ax_acc[k], ax_acc[k]);
        }
        st(g->ax_push, ax_push);
    }
    if (cone) {
        for (int k = 0; k < 3; k++) {
            st(g->cn_acc[k], cn_acc[k]);
        }
    }
    if (friction) {
        for (int k = 0; k < 3; k++) {
            st(g->fr_acc[k], fr_acc[k]);
        }
    }
    scatter(sw->states, g->a, &a);
    scatter(sw->states, g->b, &b);
    return 0;
}

const ls_ball_kernels KERNELS = {
    .name = PATH_NAME,
    .warm_start = warm_start,
    .solve = solve,
};

#else

const ls_ball_kernels KERNELS = {
    .name = PATH_NAME,
    .warm_start = ls_ball_warm_start_scalar_,
    .solve = ls_ball_solve_scalar_,
};

#endif
