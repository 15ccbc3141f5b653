// SPDX-License-Identifier: MIT
// The canonical checksum: XXH3-64 of the little-endian field encoding.
#include "ls/checksum.h"

#include <criterion/criterion.h>

Test(checksum, empty_input_is_the_xxh3_64_reference_value)
{
    ls_hasher h;
    ls_hasher_init(&h);
    cr_assert_eq(ls_hasher_digest(&h), UINT64_C(0x2D06800538D394C2));
    cr_assert_eq(ls_hash64("", 0), UINT64_C(0x2D06800538D394C2));
}

Test(checksum, fields_hash_as_their_little_endian_bytes)
{
    ls_hasher h;
    ls_hasher_init(&h);
    ls_hasher_put_u32(&h, 0x04030201u);
    ls_hasher_put_fx(&h, -LS_FX_ONE); // 0xFFFF0000 -> 00 00 FF FF
    ls_hasher_put_u64(&h, UINT64_C(0x0C0B0A0908070605));
    ls_hasher_put_vec3(&h, ls_vec3_make(1, 2, 3));
    ls_hasher_put_quat(&h, ls_quat_make(4, 5, 6, 7));
    const uint8_t bytes[] = {1,  2, 3, 4, 0, 0, 0xFF, 0xFF, 5, 6, 7, 8, 9, 10, 11,
                             12, 1, 0, 0, 0, 2, 0,    0,    0, 3, 0, 0, 0, 4,  0,
                             0,  0, 5, 0, 0, 0, 6,    0,    0, 0, 7, 0, 0, 0};
    cr_assert_eq(ls_hasher_digest(&h), ls_hash64(bytes, sizeof bytes));
}

Test(checksum, golden_value_of_a_fixed_field_sequence)
{
    // Changing this value changes every recorded checksum: CHANGELOG entry needed.
    ls_hasher h;
    ls_hasher_init(&h);
    for (uint32_t i = 0; i < 1000; i++) {
        ls_hasher_put_u32(&h, i);
        ls_hasher_put_fx(&h, (ls_fx)(i * 65536u - 12345u));
    }
    cr_assert_eq(ls_hasher_digest(&h), UINT64_C(0xb52866e46ec3597d), "got %016llx",
                 (unsigned long long)ls_hasher_digest(&h));
}

Test(checksum, streaming_in_any_split_equals_one_shot)
{
    uint8_t data[3000];
    for (int i = 0; i < 3000; i++) {
        data[i] = (uint8_t)(i * 31 + 7);
    }
    uint64_t one = ls_hash64(data, sizeof data);
    for (size_t step = 1; step < 700; step += 97) {
        ls_hasher h;
        ls_hasher_init(&h);
        for (size_t at = 0; at < sizeof data; at += step) {
            size_t n = sizeof data - at < step ? sizeof data - at : step;
            ls_hasher_put_bytes(&h, data + at, n);
        }
        cr_assert_eq(ls_hasher_digest(&h), one, "split %zu", step);
    }
}

Test(checksum, one_bit_changes_the_checksum)
{
    ls_hasher a, b;
    ls_hasher_init(&a);
    ls_hasher_init(&b);
    ls_hasher_put_vec3(&a, ls_vec3_make(100, 200, 300));
    ls_hasher_put_vec3(&b, ls_vec3_make(100, 201, 300));
    cr_assert_neq(ls_hasher_digest(&a), ls_hasher_digest(&b));
}
