// SPDX-License-Identifier: MIT
// Private: exact shortcuts of the saturating point transforms for rotation
// matrices. Why: the narrow phase moves every vertex of both hulls into a
// common frame for each pair (GJK, SAT) and recycling moves every manifold
// point each tick; the saturating helpers (ls_mat3_mul_vec with ls_vec3_add,
// ls_mat3_mul_tvec with ls_vec3_sub) check every partial sum for overflow.
// With every matrix entry below 2^17 in magnitude (any rotation matrix: its
// entries are at most 1 = 2^16), each product with a 32-bit value is below
// 2^48 and each sum of three below 2^50, so no 64-bit sum saturates and
// ls_fx_from_q32 is ls_fx_round_q32. ls_place_small also needs the rotated
// vector below 2^27 per component: its rotated value is then below 2^30 and
// the Q16.16 clamp before the add never acts. Only the final clamps can act,
// and they are kept, so both return the same bits as the saturating helpers.
#ifndef LS_PLACE_H
#define LS_PLACE_H

#include "ls/fx.h"
#include "ls/mat3.h"
#include "ls/vec3.h"

#include <stdbool.h>
#include <stdint.h>

/// Bits that any component of v sets in |v| (v ^ sign): below 2^k iff every
/// component lies in (-2^k, 2^k).
static inline uint32_t ls_vec3_magnitude_bits(ls_vec3 v)
{
    return (uint32_t)(v.x ^ (v.x >> 31)) | (uint32_t)(v.y ^ (v.y >> 31)) |
           (uint32_t)(v.z ^ (v.z >> 31));
}

/// Every entry of r is below 2^17 in magnitude (the shortcuts' condition).
static inline bool ls_mat3_is_small(const ls_mat3 *r)
{
    return (ls_vec3_magnitude_bits(r->row[0]) | ls_vec3_magnitude_bits(r->row[1]) |
            ls_vec3_magnitude_bits(r->row[2])) < (1u << 17);
}

/// The OR of ls_vec3_magnitude_bits over p[0..n).
static inline uint32_t ls_points_magnitude_bits(const ls_vec3 *p, uint32_t n)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        m |= ls_vec3_magnitude_bits(p[i]);
    }
    return m;
}

/// ls_vec3_add(p, ls_mat3_mul_vec(*r, x)) for ls_mat3_is_small(r) and
/// ls_vec3_magnitude_bits(x) < 2^27.
static inline ls_vec3 ls_place_small(ls_vec3 p, const ls_mat3 *r, ls_vec3 x)
{
    int64_t dx =
        (int64_t)r->row[0].x * x.x + (int64_t)r->row[0].y * x.y + (int64_t)r->row[0].z * x.z;
    int64_t dy =
        (int64_t)r->row[1].x * x.x + (int64_t)r->row[1].y * x.y + (int64_t)r->row[1].z * x.z;
    int64_t dz =
        (int64_t)r->row[2].x * x.x + (int64_t)r->row[2].y * x.y + (int64_t)r->row[2].z * x.z;
    return ls_vec3_make(ls_fx_clamp64_((int64_t)p.x + ls_fx_round_q32(dx)),
                        ls_fx_clamp64_((int64_t)p.y + ls_fx_round_q32(dy)),
                        ls_fx_clamp64_((int64_t)p.z + ls_fx_round_q32(dz)));
}

/// ls_mat3_mul_tvec(*r, ls_vec3_sub(x, p)) for ls_mat3_is_small(r).
static inline ls_vec3 ls_unplace_small(const ls_mat3 *r, ls_vec3 p, ls_vec3 x)
{
    int64_t ux = ls_fx_clamp64_((int64_t)x.x - p.x);
    int64_t uy = ls_fx_clamp64_((int64_t)x.y - p.y);
    int64_t uz = ls_fx_clamp64_((int64_t)x.z - p.z);
    int64_t dx = r->row[0].x * ux + r->row[1].x * uy + r->row[2].x * uz;
    int64_t dy = r->row[0].y * ux + r->row[1].y * uy + r->row[2].y * uz;
    int64_t dz = r->row[0].z * ux + r->row[1].z * uy + r->row[2].z * uz;
    return ls_vec3_make(ls_fx_clamp64_(ls_fx_round_q32(dx)), ls_fx_clamp64_(ls_fx_round_q32(dy)),
                        ls_fx_clamp64_(ls_fx_round_q32(dz)));
}

#endif
