// SPDX-License-Identifier: MIT
// Private: a bounded FIFO of encoded datagrams that the sans-IO cores fill and
// the transport drains. Bounded so a stalled transport cannot grow memory.
#ifndef LS_NET_OUTBOX_H
#define LS_NET_OUTBOX_H

#include "ls/net_auth.h"

typedef struct ls_net_outbox {
    ls_net_datagram *items;
    uint32_t cap, head, count, max;
    uint64_t dropped;
} ls_net_outbox;

void ls_net_outbox_init_(ls_net_outbox *o, uint32_t max);
void ls_net_outbox_free_(ls_net_outbox *o);
/// Encode m for `to`, seal it with key for direction dir (ls/net_auth.h) and queue it;
/// false (counted) when the queue is full or m invalid. Returns the datagram's length in *len.
bool ls_net_outbox_push_(ls_net_outbox *o, const ls_net_addr *to, const ls_net_msg *m,
                         const uint8_t *key, uint8_t dir, size_t *len);
/// The send preamble of every sender (peer, spectator, relay): stamp the header's role,
/// session, slot and next sequence number (++*tx_seq, SPEC.md §17.1, §17.3), then push
/// as above. Returns the datagram's length, 0 when refused (counted in the outbox).
size_t ls_net_outbox_send_(ls_net_outbox *o, const ls_net_addr *to, ls_net_msg *m, uint8_t role,
                           uint32_t session, uint32_t slot, uint64_t *tx_seq, const uint8_t *key,
                           uint8_t dir);
/// Pop the oldest datagram into *out; false when empty.
bool ls_net_outbox_pop_(ls_net_outbox *o, ls_net_datagram *out);

#endif
