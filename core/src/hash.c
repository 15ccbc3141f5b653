// SPDX-License-Identifier: MIT
// The canonical hash on XXH3-64 (core/: replay, net and the physics use it).
// xxhash is compiled in (XXH_INLINE_ALL), so the simulation needs no shared
// library at run time and the hash is the same function on every target: XXH3
// defines its output independently of byte order.
#include "ls/hash.h"

#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

_Static_assert(sizeof(XXH3_state_t) <= sizeof(((ls_hasher *)0)->xxh_), "XXH3 state does not fit");
_Static_assert(_Alignof(XXH3_state_t) <= 64, "XXH3 state alignment");

static XXH3_state_t *state(ls_hasher *h)
{
    return (XXH3_state_t *)(void *)h->xxh_;
}

void ls_hasher_init(ls_hasher *h)
{
    memset(h, 0, sizeof *h);
    XXH3_64bits_reset(state(h));
}

static void flush(ls_hasher *h)
{
    if (h->len_ > 0) {
        XXH3_64bits_update(state(h), h->buf_, h->len_);
        h->len_ = 0;
    }
}

void ls_hasher_put_bytes(ls_hasher *h, const void *data, size_t n)
{
    if (h->len_ + n > LS_HASHER_BUFFER) {
        flush(h);
        if (n > LS_HASHER_BUFFER) {
            XXH3_64bits_update(state(h), data, n);
            return;
        }
    }
    memcpy(h->buf_ + h->len_, data, n);
    h->len_ += n;
}

void ls_hasher_put_u32(ls_hasher *h, uint32_t v)
{
    uint8_t b[4];
    ls_put_u32le(b, v);
    ls_hasher_put_bytes(h, b, 4);
}

void ls_hasher_put_u64(ls_hasher *h, uint64_t v)
{
    uint8_t b[8];
    ls_put_u64le(b, v);
    ls_hasher_put_bytes(h, b, 8);
}

uint64_t ls_hasher_digest(ls_hasher *h)
{
    flush(h);
    return XXH3_64bits_digest(state(h));
}

uint64_t ls_hash64(const void *data, size_t n)
{
    return XXH3_64bits(data, n);
}
