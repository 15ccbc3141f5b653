// SPDX-License-Identifier: MIT
// libFuzzer harness for the part of `lockstep relay --ws` the project owns
// (tools/relay_ws_frame.c, SPEC.md §17.16): WebSocket fragments as libwebsockets
// hands them over, to datagrams for the relay core. Each input is a sequence of
// fragments: a flags byte (bit 0 binary, bit 1 final, bit 2 a new connection),
// a 2-byte little-endian length (up to 4095) and the bytes. Checks: the state
// never holds more than one datagram; a text fragment closes with 1003 and a
// message over LS_NET_MAX_DATAGRAM with 1009, whatever came before; a delivered
// datagram is exactly the concatenation of its message's fragments. Every
// delivered datagram goes to a relay core with one session from the connection's
// synthetic address, which never answers a stranger with more bytes than it got.
// The synthetic addresses round-trip and are never an IPv4 address.
#include "relay_ws_frame.h"
#include "ls/net_relay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "relay_ws_frame: %s\n", what);
    abort();
}

static void drain(ls_relay *r, const ls_net_addr *from, size_t in_len)
{
    ls_net_datagram d;
    size_t back = 0;
    while (ls_relay_next_datagram(r, &d)) {
        if (ls_net_addr_equal(&d.to, from)) {
            back += d.len;
        }
    }
    if (back > in_len) {
        fail("a stranger was answered with more bytes than it sent");
    }
}

static void check_addr(uint8_t worker, uint16_t slot, uint32_t serial)
{
    ls_net_addr a = relay_ws_addr(worker, slot, serial), v4 = ls_net_addr_ipv4(1, 0, 0, 0, 0);
    uint8_t w;
    uint16_t s;
    uint32_t n;
    if (!relay_ws_addr_split(&a, &w, &s, &n) || w != worker || s != slot || n != serial) {
        fail("a synthetic address does not split back");
    }
    if (relay_ws_addr_is(&v4)) {
        fail("an IPv4 address taken for a WebSocket connection");
    }
    a.port = 1; // a real IPv6 UDP source has a port
    if (relay_ws_addr_is(&a)) {
        fail("a UDP source with a port taken for a WebSocket connection");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static relay_ws_frame f;
    static uint8_t shadow[LS_NET_MAX_DATAGRAM + 4096];
    size_t shadow_len = 0;
    bool in_message = false;
    memset(&f, 0, sizeof f);
    ls_relay_def rd = ls_default_relay_def();
    rd.max_sessions = 1;
    ls_relay *r = ls_relay_create(&rd, NULL);
    ls_session_def sd = ls_default_session_def();
    sd.slots = 2;
    uint32_t id;
    if (!r || ls_relay_session_create(r, &sd, 0, &id) != LS_OK) {
        abort();
    }
    uint32_t serial = 1;
    uint64_t now = 1000;
    size_t i = 0;
    while (i + 3 <= size) {
        uint8_t flags = data[i];
        size_t n = (size_t)(data[i + 1] | data[i + 2] << 8) & 4095;
        i += 3;
        if (n > size - i) {
            n = size - i;
        }
        const uint8_t *p = data + i;
        i += n;
        if (flags & 4) { // a new connection: a fresh state and address
            memset(&f, 0, sizeof f);
            in_message = false;
            shadow_len = 0;
            serial++;
        }
        bool binary = flags & 1, final = flags & 2;
        if (!in_message) {
            shadow_len = 0;
        }
        relay_ws_action a = relay_ws_frame_take(&f, p, n, binary, final, LS_NET_MAX_DATAGRAM);
        if (f.len > LS_NET_MAX_DATAGRAM) {
            fail("more than one datagram held");
        }
        if (!binary) {
            if (a != RELAY_WS_CLOSE_TEXT) {
                fail("a text fragment not refused");
            }
            in_message = false;
            continue;
        }
        bool too_big = shadow_len + n > LS_NET_MAX_DATAGRAM;
        if (too_big != (a == RELAY_WS_CLOSE_BIG)) {
            fail("a message over one datagram not refused, or one within refused");
        }
        if (too_big) {
            in_message = false;
            continue;
        }
        memcpy(shadow + shadow_len, p, n);
        shadow_len += n;
        in_message = !final;
        if ((a == RELAY_WS_DELIVER) != final || (a == RELAY_WS_WAIT) != !final) {
            fail("the final fragment did not deliver, or another did");
        }
        if (a == RELAY_WS_DELIVER) {
            if (f.len != shadow_len || memcmp(f.buf, shadow, shadow_len) != 0) {
                fail("the datagram is not its message's fragments");
            }
            ls_net_addr from = relay_ws_addr(0, (uint16_t)(serial % 256), serial);
            ls_relay_receive(r, &from, f.buf, f.len, now);
            drain(r, &from, f.len);
            now += 1000;
            check_addr((uint8_t)flags, (uint16_t)n, serial * 2654435761u);
        }
    }
    ls_relay_destroy(r);
    return 0;
}
