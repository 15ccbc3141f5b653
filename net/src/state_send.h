// SPDX-License-Identifier: MIT
// Private: the sending side of a snapshot transfer (SPEC.md §17.10), shared by
// the relay (to a rejoiner or a late spectator) and the peer (an upload for a
// rejoiner). STATE_CHUNKs of up to LS_NET_STATE_CHUNK_MAX bytes, at most 16
// beyond what the receiver acknowledged, re-sent from its acknowledgement once
// it has been silent about them for resend_us.
#ifndef LS_NET_STATE_SEND_H
#define LS_NET_STATE_SEND_H

#include "ls/net_wire.h"

/// Chunks in flight beyond the receiver's acknowledgement.
#define LS_NET_STATE_INFLIGHT 16u

/// The snapshot being sent: tick, bytes and their BLAKE2b-256 hash (SPEC.md §17.10).
typedef struct ls_net_state_out {
    uint32_t tick, total;
    const uint8_t *data;
    const uint8_t *hash; // LS_NET_STATE_HASH_SIZE bytes
} ls_net_state_out;

/// Where a transfer stands: bytes acknowledged, bytes sent, when a chunk was last sent.
typedef struct ls_net_state_progress {
    uint32_t *acked, *sent;
    uint64_t *last;
} ls_net_state_progress;

/// Send the chunks due at `now` through send(user, m) (m: the STATE_CHUNK body, the
/// header zero but its type; the sender stamps the rest).
void ls_net_state_send_(const ls_net_state_out *s, ls_net_state_progress at, uint64_t now,
                        uint64_t resend_us, void (*send)(void *user, ls_net_msg *m), void *user);

#endif
