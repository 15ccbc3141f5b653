// SPDX-License-Identifier: MIT
// PCG32: the reference sequence, plain-data state, bounded draws.
#include "ls/fx.h"
#include "ls/rng.h"

#include <criterion/criterion.h>
#include <string.h>

Test(rng, matches_the_pcg32_reference_sequence_for_seed_42_stream_54)
{
    // pcg32-demo from the PCG reference implementation (pcg-c-basic), round 1.
    static const uint32_t expected[6] = {0xa15c02b7, 0x7b47f409, 0xba1d3330,
                                         0x83d2f293, 0xbfa4784b, 0xcbed606e};
    ls_rng r = ls_rng_make(42, 54);
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(ls_rng_next_u32(&r), expected[i], "output %d", i);
    }
}

Test(rng, state_is_plain_data_that_resumes_exactly_when_copied)
{
    ls_rng a = ls_rng_make(7, 1);
    for (int i = 0; i < 100; i++) {
        ls_rng_next_u32(&a);
    }
    ls_rng saved;
    memcpy(&saved, &a, sizeof a);
    uint32_t first[50], second[50];
    for (int i = 0; i < 50; i++) {
        first[i] = ls_rng_next_u32(&a);
    }
    for (int i = 0; i < 50; i++) {
        second[i] = ls_rng_next_u32(&saved);
    }
    cr_assert_arr_eq(first, second, sizeof first);
}

Test(rng, below_stays_in_bounds_and_is_roughly_uniform)
{
    ls_rng r = ls_rng_make(1, 2);
    int counts[6] = {0};
    for (int i = 0; i < 60000; i++) {
        uint32_t v = ls_rng_below(&r, 6);
        cr_assert_lt(v, 6u);
        counts[v]++;
    }
    for (int i = 0; i < 6; i++) {
        cr_assert(counts[i] > 9500 && counts[i] < 10500, "bucket %d has %d of 60000", i, counts[i]);
    }
}

Test(rng, unit_and_range_stay_in_half_open_intervals)
{
    ls_rng r = ls_rng_make(3, 4);
    for (int i = 0; i < 100000; i++) {
        ls_fx u = ls_rng_unit(&r);
        cr_assert(u >= 0 && u < LS_FX_ONE);
        ls_fx v = ls_rng_range(&r, -LS_FX_ONE * 3, LS_FX_ONE * 2);
        cr_assert(v >= -LS_FX_ONE * 3 && v < LS_FX_ONE * 2);
    }
}

Test(rng, different_streams_give_different_sequences)
{
    ls_rng a = ls_rng_make(42, 1), b = ls_rng_make(42, 2);
    int same = 0;
    for (int i = 0; i < 100; i++) {
        same += ls_rng_next_u32(&a) == ls_rng_next_u32(&b);
    }
    cr_assert_lt(same, 3);
}
