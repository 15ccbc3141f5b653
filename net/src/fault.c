// SPDX-License-Identifier: MIT
// Seeded network impairment (GGPO/GameNetworkingSockets-style fake lag and loss).
#include "ls/net_fault.h"

#include <string.h>

void ls_net_fault_init(ls_net_fault *f, const ls_net_fault_def *def)
{
    memset(f, 0, sizeof *f);
    f->def = *def;
    f->rng = ls_rng_make(def->seed, 0x6e6574u); // "net"
}

bool ls_net_fault_active(const ls_net_fault *f)
{
    const ls_net_fault_def *d = &f->def;
    return d->loss_ppm || d->dup_ppm || d->reorder_ppm || d->delay_us || d->jitter_us ||
           d->corrupt_ppm;
}

static bool chance(ls_net_fault *f, uint32_t ppm)
{
    return ppm > 0 && ls_rng_below(&f->rng, 1000000u) < ppm;
}

static uint64_t delivery(ls_net_fault *f, uint64_t now)
{
    uint64_t t = now + f->def.delay_us;
    if (f->def.jitter_us) {
        t += ls_rng_below(&f->rng, f->def.jitter_us + 1);
    }
    if (chance(f, f->def.reorder_ppm)) {
        // Held back long enough that datagrams sent after it overtake it.
        uint32_t extra = f->def.jitter_us > 1000 ? f->def.jitter_us : 1000;
        t += 3u * (uint64_t)extra;
        f->reordered++;
    }
    return t;
}

uint32_t ls_net_fault_apply(ls_net_fault *f, uint64_t now, uint64_t when[2])
{
    if (chance(f, f->def.loss_ppm)) {
        f->dropped++;
        return 0;
    }
    when[0] = delivery(f, now);
    if (chance(f, f->def.dup_ppm)) {
        f->duplicated++;
        when[1] = delivery(f, now);
        return 2;
    }
    return 1;
}

bool ls_net_fault_corrupt(ls_net_fault *f, uint8_t *data, size_t len)
{
    if (len == 0 || !chance(f, f->def.corrupt_ppm)) {
        return false;
    }
    uint32_t bit = ls_rng_below(&f->rng, (uint32_t)(len * 8 < UINT32_MAX ? len * 8 : UINT32_MAX));
    data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    f->corrupted++;
    return true;
}
