// SPDX-License-Identifier: MIT
// Bounded datagram FIFO (a ring that doubles up to its maximum) of sealed datagrams.
#include "outbox.h"

#include "auth.h"

#include <stdlib.h>
#include <string.h>

void ls_net_outbox_init_(ls_net_outbox *o, uint32_t max)
{
    memset(o, 0, sizeof *o);
    o->max = max ? max : 4096;
}

void ls_net_outbox_free_(ls_net_outbox *o)
{
    free(o->items);
    memset(o, 0, sizeof *o);
}

static bool grow(ls_net_outbox *o)
{
    uint32_t cap = o->cap ? o->cap * 2 : 64;
    if (cap > o->max) {
        cap = o->max;
    }
    if (cap <= o->cap) {
        return false;
    }
    ls_net_datagram *n = malloc((size_t)cap * sizeof *n);
    if (!n) {
        return false;
    }
    for (uint32_t i = 0; i < o->count; i++) {
        n[i] = o->items[(o->head + i) % o->cap];
    }
    free(o->items);
    o->items = n;
    o->cap = cap;
    o->head = 0;
    return true;
}

bool ls_net_outbox_push_(ls_net_outbox *o, const ls_net_addr *to, const ls_net_msg *m,
                         const uint8_t *key, uint8_t dir, size_t *len)
{
    if (o->count == o->cap && !grow(o)) {
        o->dropped++;
        return false;
    }
    ls_net_datagram *d = &o->items[(o->head + o->count) % o->cap];
    d->len = ls_net_encode(m, d->data, sizeof d->data);
    if (d->len == 0) {
        o->dropped++;
        return false;
    }
    ls_net_auth_seal_(d->data, d->len, key, (ls_net_dir)dir);
    d->to = *to;
    o->count++;
    if (len) {
        *len = d->len;
    }
    return true;
}

size_t ls_net_outbox_send_(ls_net_outbox *o, const ls_net_addr *to, ls_net_msg *m, uint8_t role,
                           uint32_t session, uint32_t slot, uint64_t *tx_seq, const uint8_t *key,
                           uint8_t dir)
{
    m->h.role = role;
    m->h.session = session;
    m->h.slot = (uint8_t)slot;
    m->h.seq = ++*tx_seq;
    size_t len = 0;
    return ls_net_outbox_push_(o, to, m, key, dir, &len) ? len : 0;
}

bool ls_net_outbox_pop_(ls_net_outbox *o, ls_net_datagram *out)
{
    if (o->count == 0) {
        return false;
    }
    const ls_net_datagram *d = &o->items[o->head];
    out->to = d->to;
    out->len = d->len;
    memcpy(out->data, d->data, d->len);
    o->head = (o->head + 1) % o->cap;
    o->count--;
    return true;
}
