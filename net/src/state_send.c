// SPDX-License-Identifier: MIT
// The sending side of a snapshot transfer (SPEC.md §17.10): one window rule for
// the relay's transfers and the peer's uploads (see state_send.h).
#include "state_send.h"

#include <string.h>

void ls_net_state_send_(const ls_net_state_out *s, ls_net_state_progress at, uint64_t now,
                        uint64_t resend_us, void (*send)(void *user, ls_net_msg *m), void *user)
{
    if (*at.acked < *at.sent && now - *at.last >= resend_us) {
        *at.sent = *at.acked; // silent about what is in flight: again from its acknowledgement
    }
    uint32_t window = LS_NET_STATE_INFLIGHT * LS_NET_STATE_CHUNK_MAX;
    uint32_t limit = s->total - *at.acked > window ? *at.acked + window : s->total;
    while (*at.sent < limit) {
        uint32_t n = limit - *at.sent;
        n = n < LS_NET_STATE_CHUNK_MAX ? n : LS_NET_STATE_CHUNK_MAX;
        ls_net_msg m;
        memset(&m, 0, sizeof m);
        m.h.type = LS_NET_STATE_CHUNK;
        m.u.state.tick = s->tick;
        m.u.state.total = s->total;
        m.u.state.offset = *at.sent;
        m.u.state.len = (uint16_t)n;
        memcpy(m.u.state.hash, s->hash, LS_NET_STATE_HASH_SIZE);
        m.u.state.data = s->data + *at.sent;
        send(user, &m);
        *at.sent += n;
        *at.last = now;
    }
}
