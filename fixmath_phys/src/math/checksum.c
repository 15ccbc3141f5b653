// SPDX-License-Identifier: MIT
// The physics' values in the canonical checksum (ls/checksum.h): a Q16.16 is
// its 32-bit two's complement, little-endian, fed to the hasher of core/src/hash.c.
#include "ls/checksum.h"

void ls_hasher_put_fx(ls_hasher *h, ls_fx v)
{
    ls_hasher_put_u32(h, (uint32_t)v);
}

void ls_hasher_put_vec3(ls_hasher *h, ls_vec3 v)
{
    uint8_t b[12];
    ls_put_u32le(b, (uint32_t)v.x);
    ls_put_u32le(b + 4, (uint32_t)v.y);
    ls_put_u32le(b + 8, (uint32_t)v.z);
    ls_hasher_put_bytes(h, b, sizeof b);
}

void ls_hasher_put_quat(ls_hasher *h, ls_quat q)
{
    uint8_t b[16];
    ls_put_u32le(b, (uint32_t)q.x);
    ls_put_u32le(b + 4, (uint32_t)q.y);
    ls_put_u32le(b + 8, (uint32_t)q.z);
    ls_put_u32le(b + 12, (uint32_t)q.w);
    ls_hasher_put_bytes(h, b, sizeof b);
}
