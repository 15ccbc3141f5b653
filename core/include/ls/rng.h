// SPDX-License-Identifier: MIT
/// @file
/// Deterministic pseudo-random numbers: PCG32 (XSH-RR, O'Neill 2014). The state
/// is two plain integers, so it can be copied into snapshots and compared.
#ifndef LS_RNG_H
#define LS_RNG_H

#include "ls/base.h"

LS_EXTERN_C_BEGIN

/// PCG32 generator state: plain data, copy freely.
typedef struct ls_rng {
    uint64_t state; ///< LCG state.
    uint64_t inc;   ///< Stream selector; always odd.
} ls_rng;

/// Next 32 random bits.
static inline uint32_t ls_rng_next_u32(ls_rng *r)
{
    uint64_t old = r->state;
    r->state = old * UINT64_C(6364136223846793005) + r->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18) ^ old) >> 27);
    uint32_t rot = (uint32_t)(old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((0u - rot) & 31u));
}

/// Seed a generator (pcg32_srandom_r): `seed` picks the start, `stream` the sequence.
static inline ls_rng ls_rng_make(uint64_t seed, uint64_t stream)
{
    ls_rng r = {0, (stream << 1) | 1u};
    ls_rng_next_u32(&r);
    r.state += seed;
    ls_rng_next_u32(&r);
    return r;
}

/// Uniform integer in [0, bound), bound > 0, without modulo bias (rejection).
static inline uint32_t ls_rng_below(ls_rng *r, uint32_t bound)
{
    uint32_t threshold = (0u - bound) % bound;
    for (;;) {
        uint32_t v = ls_rng_next_u32(r);
        if (v >= threshold) {
            return v % bound;
        }
    }
}

// The two Q16.16 draws below are written with int32_t, the type that ls_fx
// (ls/fx.h) names: this header is part of core/, which net/ and replay/ build
// on without libfixmath, so it cannot include ls/fx.h. The types are the same.

/// Uniform Q16.16 (an ls_fx) in [0, 1): the top 16 bits of the next output.
static inline int32_t ls_rng_unit(ls_rng *r)
{
    return (int32_t)(ls_rng_next_u32(r) >> 16);
}

/// Uniform Q16.16 (ls_fx) in [lo, hi) (lo < hi; hi - lo must not overflow).
static inline int32_t ls_rng_range(ls_rng *r, int32_t lo, int32_t hi)
{
    return lo + (int32_t)ls_rng_below(r, (uint32_t)(hi - lo));
}

LS_EXTERN_C_END

#endif
