// SPDX-License-Identifier: MIT
// WebSocket fragments to datagrams, and the synthetic addresses of WebSocket
// connections (relay_ws_frame.h, SPEC.md §17.16).
#include "relay_ws_frame.h"

#include <string.h>

relay_ws_action relay_ws_frame_take(relay_ws_frame *f, const uint8_t *data, size_t n, bool binary,
                                    bool final, size_t max)
{
    if (max > LS_NET_MAX_DATAGRAM) {
        max = LS_NET_MAX_DATAGRAM;
    }
    if (!f->in_message) { // a new message
        f->len = 0;
        f->in_message = true;
    }
    if (!binary) {
        f->in_message = false, f->len = 0;
        return RELAY_WS_CLOSE_TEXT;
    }
    if (n > max - f->len) {
        f->in_message = false, f->len = 0;
        return RELAY_WS_CLOSE_BIG;
    }
    if (n) {
        memcpy(f->buf + f->len, data, n);
    }
    f->len += n;
    if (!final) {
        return RELAY_WS_WAIT;
    }
    f->in_message = false;
    return RELAY_WS_DELIVER;
}

ls_net_addr relay_ws_addr(uint8_t worker, uint16_t slot, uint32_t serial)
{
    ls_net_addr a;
    memset(&a, 0, sizeof a);
    a.family = 6;
    a.ip[0] = 0x01; // 100::/64
    a.ip[8] = worker;
    a.ip[10] = (uint8_t)(slot >> 8);
    a.ip[11] = (uint8_t)slot;
    a.ip[12] = (uint8_t)(serial >> 24);
    a.ip[13] = (uint8_t)(serial >> 16);
    a.ip[14] = (uint8_t)(serial >> 8);
    a.ip[15] = (uint8_t)serial;
    a.port = 0;
    return a;
}

bool relay_ws_addr_is(const ls_net_addr *a)
{
    static const uint8_t prefix[8] = {0x01, 0, 0, 0, 0, 0, 0, 0};
    return a->family == 6 && a->port == 0 && memcmp(a->ip, prefix, sizeof prefix) == 0;
}

bool relay_ws_addr_split(const ls_net_addr *a, uint8_t *worker, uint16_t *slot, uint32_t *serial)
{
    if (!relay_ws_addr_is(a)) {
        return false;
    }
    *worker = a->ip[8];
    *slot = (uint16_t)(a->ip[10] << 8 | a->ip[11]);
    *serial = (uint32_t)a->ip[12] << 24 | (uint32_t)a->ip[13] << 16 | (uint32_t)a->ip[14] << 8 |
              a->ip[15];
    return true;
}
