// SPDX-License-Identifier: MIT
// The wire codec: fixed little-endian layouts (SPEC.md "Relay protocol").
// Decoding checks the exact body length of every type before reading a byte.
#include "ls/net_wire.h"

#include <stdio.h>
#include <string.h>

#define MAGIC0 0x4C // 'L'
#define MAGIC1 0x53 // 'S'

enum {
    JOIN_BODY = LS_NET_JOIN_SIZE - LS_NET_HEADER_SIZE,
    CHALLENGE_BODY = 8,
    WELCOME_BODY = 16,
    INPUT_FIXED = 8,
    ACK_FIXED = 8,
    CHECKSUM_FIXED = 8,
    DESYNC_BODY = 16,
    DISCONNECT_BODY = 8,
    PING_BODY = 12,
};

const char *ls_net_type_name(uint8_t type)
{
    static const char *const names[] = {"?",          "JOIN", "CHALLENGE", "WELCOME",
                                        "INPUT",      "ACK",  "CHECKSUM",  "DESYNC",
                                        "DISCONNECT", "PING", "PONG"};
    return type < sizeof names / sizeof names[0] ? names[type] : "?";
}

static size_t body_size(const ls_net_msg *m)
{
    switch (m->h.type) {
    case LS_NET_JOIN:
        return JOIN_BODY;
    case LS_NET_CHALLENGE:
        return CHALLENGE_BODY;
    case LS_NET_WELCOME:
        return WELCOME_BODY;
    case LS_NET_INPUT:
        return INPUT_FIXED + (size_t)m->u.input.count * m->u.input.input_size;
    case LS_NET_ACK:
        return ACK_FIXED + 4u * m->u.ack.count;
    case LS_NET_CHECKSUM:
        return CHECKSUM_FIXED + 8u * m->u.checksum.count;
    case LS_NET_DESYNC:
        return DESYNC_BODY;
    case LS_NET_DISCONNECT:
        return DISCONNECT_BODY;
    case LS_NET_PING:
    case LS_NET_PONG:
        return PING_BODY;
    default:
        return 0;
    }
}

static bool valid_for_encode(const ls_net_msg *m)
{
    switch (m->h.type) {
    case LS_NET_INPUT:
        return m->u.input.count >= 1 && m->u.input.count <= LS_NET_MAX_BATCH &&
               m->u.input.input_size >= 1 && m->u.input.input_size <= LS_NET_MAX_INPUT_SIZE &&
               m->u.input.data;
    case LS_NET_ACK:
        return m->u.ack.count >= 1 && m->u.ack.count <= LS_NET_MAX_SLOTS;
    case LS_NET_CHECKSUM:
        return m->u.checksum.count >= 1 && m->u.checksum.count <= LS_NET_MAX_BATCH &&
               m->u.checksum.data;
    case LS_NET_WELCOME:
        return m->u.welcome.slots >= 2 && m->u.welcome.slots <= LS_NET_MAX_SLOTS &&
               m->u.welcome.input_size >= 1 && m->u.welcome.input_size <= LS_NET_MAX_INPUT_SIZE;
    default:
        return body_size(m) > 0;
    }
}

size_t ls_net_encode(const ls_net_msg *m, uint8_t *buf, size_t cap)
{
    if (!valid_for_encode(m)) {
        return 0;
    }
    size_t body = body_size(m), total = LS_NET_HEADER_SIZE + body;
    if (total > cap || total > LS_NET_MAX_DATAGRAM) {
        return 0;
    }
    memset(buf, 0, total);
    buf[0] = MAGIC0;
    buf[1] = MAGIC1;
    buf[2] = LS_NET_VERSION;
    buf[3] = m->h.type;
    ls_put_u32le(buf + 4, m->h.session);
    buf[8] = m->h.slot;
    ls_put_u16le(buf + 10, (uint16_t)body);
    memcpy(buf + 12, m->h.token, LS_NET_TOKEN_SIZE);
    uint8_t *b = buf + LS_NET_HEADER_SIZE;
    switch (m->h.type) {
    case LS_NET_JOIN:
    case LS_NET_CHALLENGE:
        ls_put_u64le(b, m->u.cookie);
        break;
    case LS_NET_WELCOME:
        b[0] = m->u.welcome.slots;
        b[1] = m->u.welcome.input_size;
        b[2] = m->u.welcome.delay;
        ls_put_u16le(b + 4, m->u.welcome.tick_rate);
        ls_put_u32le(b + 8, m->u.welcome.ticks);
        ls_put_u32le(b + 12, m->u.welcome.timeout_ms);
        break;
    case LS_NET_INPUT:
        ls_put_u32le(b, m->u.input.first_tick);
        ls_put_u16le(b + 4, m->u.input.count);
        b[6] = m->u.input.input_size;
        memcpy(b + INPUT_FIXED, m->u.input.data, body - INPUT_FIXED);
        break;
    case LS_NET_ACK:
        ls_put_u32le(b, m->u.ack.checksum_next);
        ls_put_u16le(b + 4, m->u.ack.disconnected);
        b[6] = m->u.ack.count;
        for (uint32_t s = 0; s < m->u.ack.count; s++) {
            ls_put_u32le(b + ACK_FIXED + 4 * s, m->u.ack.input_next[s]);
        }
        break;
    case LS_NET_CHECKSUM:
        ls_put_u32le(b, m->u.checksum.first_tick);
        ls_put_u16le(b + 4, m->u.checksum.count);
        memcpy(b + CHECKSUM_FIXED, m->u.checksum.data, body - CHECKSUM_FIXED);
        break;
    case LS_NET_DESYNC:
        ls_put_u32le(b, m->u.desync.tick);
        ls_put_u16le(b + 4, m->u.desync.slots);
        ls_put_u64le(b + 8, m->u.desync.expected);
        break;
    case LS_NET_DISCONNECT:
        ls_put_u32le(b, m->u.disconnect.tick);
        b[4] = m->u.disconnect.reason;
        break;
    case LS_NET_PING:
    case LS_NET_PONG:
        ls_put_u64le(b, m->u.ping.time);
        ls_put_u32le(b + 8, m->u.ping.seq);
        break;
    default:
        return 0;
    }
    return total;
}

// Names the offending field; err is NULL on the relay's and peer's hot path,
// so hostile datagrams cost no formatting.
static ls_result fail(ls_error *err, const char *what, ls_result r)
{
    if (err) {
        ls_error_set(err, r, "bad datagram: %s", what);
        snprintf(err->field, sizeof err->field, "%s", what);
    }
    return r;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i]) {
            return false;
        }
    }
    return true;
}

static ls_result decode_body(const uint8_t *b, size_t n, ls_net_msg *m, ls_error *err)
{
    switch (m->h.type) {
    case LS_NET_JOIN:
    case LS_NET_CHALLENGE:
        if (n != (m->h.type == LS_NET_JOIN ? (size_t)JOIN_BODY : (size_t)CHALLENGE_BODY)) {
            return fail(err, "join/challenge length", LS_ERR_CORRUPT);
        }
        if (m->h.type == LS_NET_JOIN && !all_zero(b + 8, n - 8)) {
            return fail(err, "join padding", LS_ERR_CORRUPT);
        }
        m->u.cookie = ls_get_u64le(b);
        return LS_OK;
    case LS_NET_WELCOME:
        if (n != WELCOME_BODY) {
            return fail(err, "welcome length", LS_ERR_CORRUPT);
        }
        if (b[3] || b[6] || b[7]) {
            return fail(err, "welcome reserved bytes", LS_ERR_CORRUPT);
        }
        m->u.welcome.slots = b[0];
        m->u.welcome.input_size = b[1];
        m->u.welcome.delay = b[2];
        m->u.welcome.tick_rate = ls_get_u16le(b + 4);
        m->u.welcome.ticks = ls_get_u32le(b + 8);
        m->u.welcome.timeout_ms = ls_get_u32le(b + 12);
        if (m->u.welcome.slots < 2 || m->u.welcome.slots > LS_NET_MAX_SLOTS ||
            m->u.welcome.input_size < 1 || m->u.welcome.input_size > LS_NET_MAX_INPUT_SIZE ||
            m->u.welcome.tick_rate < 1 || m->u.welcome.tick_rate > 1000) {
            return fail(err, "welcome parameters", LS_ERR_CORRUPT);
        }
        return LS_OK;
    case LS_NET_INPUT:
        if (n < INPUT_FIXED) {
            return fail(err, "input fixed part", LS_ERR_TRUNCATED);
        }
        if (b[7]) {
            return fail(err, "input reserved byte", LS_ERR_CORRUPT);
        }
        m->u.input.first_tick = ls_get_u32le(b);
        m->u.input.count = ls_get_u16le(b + 4);
        m->u.input.input_size = b[6];
        if (m->u.input.count < 1 || m->u.input.count > LS_NET_MAX_BATCH ||
            m->u.input.input_size < 1 || m->u.input.input_size > LS_NET_MAX_INPUT_SIZE) {
            return fail(err, "input count/size", LS_ERR_CORRUPT);
        }
        if (n != INPUT_FIXED + (size_t)m->u.input.count * m->u.input.input_size) {
            return fail(err, "input payload length", LS_ERR_CORRUPT);
        }
        if ((uint64_t)m->u.input.first_tick + m->u.input.count > UINT32_MAX) {
            return fail(err, "input tick range", LS_ERR_CORRUPT);
        }
        m->u.input.data = b + INPUT_FIXED;
        return LS_OK;
    case LS_NET_ACK:
        if (n < ACK_FIXED) {
            return fail(err, "ack fixed part", LS_ERR_TRUNCATED);
        }
        if (b[7]) {
            return fail(err, "ack reserved byte", LS_ERR_CORRUPT);
        }
        m->u.ack.checksum_next = ls_get_u32le(b);
        m->u.ack.disconnected = ls_get_u16le(b + 4);
        m->u.ack.count = b[6];
        if (m->u.ack.count < 1 || m->u.ack.count > LS_NET_MAX_SLOTS ||
            n != ACK_FIXED + 4u * m->u.ack.count) {
            return fail(err, "ack count/length", LS_ERR_CORRUPT);
        }
        for (uint32_t s = 0; s < m->u.ack.count; s++) {
            m->u.ack.input_next[s] = ls_get_u32le(b + ACK_FIXED + 4 * s);
        }
        return LS_OK;
    case LS_NET_CHECKSUM:
        if (n < CHECKSUM_FIXED) {
            return fail(err, "checksum fixed part", LS_ERR_TRUNCATED);
        }
        if (b[6] || b[7]) {
            return fail(err, "checksum reserved bytes", LS_ERR_CORRUPT);
        }
        m->u.checksum.first_tick = ls_get_u32le(b);
        m->u.checksum.count = ls_get_u16le(b + 4);
        if (m->u.checksum.count < 1 || m->u.checksum.count > LS_NET_MAX_BATCH ||
            n != CHECKSUM_FIXED + 8u * m->u.checksum.count) {
            return fail(err, "checksum count/length", LS_ERR_CORRUPT);
        }
        if ((uint64_t)m->u.checksum.first_tick + m->u.checksum.count > UINT32_MAX) {
            return fail(err, "checksum tick range", LS_ERR_CORRUPT);
        }
        m->u.checksum.data = b + CHECKSUM_FIXED;
        return LS_OK;
    case LS_NET_DESYNC:
        if (n != DESYNC_BODY) {
            return fail(err, "desync length", LS_ERR_CORRUPT);
        }
        if (b[6] || b[7]) {
            return fail(err, "desync reserved bytes", LS_ERR_CORRUPT);
        }
        m->u.desync.tick = ls_get_u32le(b);
        m->u.desync.slots = ls_get_u16le(b + 4);
        m->u.desync.expected = ls_get_u64le(b + 8);
        return LS_OK;
    case LS_NET_DISCONNECT:
        if (n != DISCONNECT_BODY) {
            return fail(err, "disconnect length", LS_ERR_CORRUPT);
        }
        if (b[5] || b[6] || b[7]) {
            return fail(err, "disconnect reserved bytes", LS_ERR_CORRUPT);
        }
        m->u.disconnect.tick = ls_get_u32le(b);
        m->u.disconnect.reason = b[4];
        if (m->u.disconnect.reason < LS_NET_LEFT || m->u.disconnect.reason > LS_NET_KICKED) {
            return fail(err, "disconnect reason", LS_ERR_CORRUPT);
        }
        return LS_OK;
    case LS_NET_PING:
    case LS_NET_PONG:
        if (n != PING_BODY) {
            return fail(err, "ping length", LS_ERR_CORRUPT);
        }
        m->u.ping.time = ls_get_u64le(b);
        m->u.ping.seq = ls_get_u32le(b + 8);
        return LS_OK;
    default:
        return fail(err, "type", LS_ERR_CORRUPT);
    }
}

ls_result ls_net_decode(const uint8_t *buf, size_t len, ls_net_msg *out, ls_error *err)
{
    ls_error_clear(err);
    memset(out, 0, sizeof *out);
    if (!buf || len < LS_NET_HEADER_SIZE) {
        return fail(err, "header", LS_ERR_TRUNCATED);
    }
    if (len > LS_NET_MAX_DATAGRAM) {
        return fail(err, "datagram length", LS_ERR_CORRUPT);
    }
    if (buf[0] != MAGIC0 || buf[1] != MAGIC1) {
        return fail(err, "magic", LS_ERR_CORRUPT);
    }
    if (buf[2] != LS_NET_VERSION) {
        return fail(err, "version", LS_ERR_INCOMPATIBLE);
    }
    if (buf[9] != 0) {
        return fail(err, "reserved header byte", LS_ERR_CORRUPT);
    }
    if (ls_get_u16le(buf + 10) != len - LS_NET_HEADER_SIZE) {
        return fail(err, "body length", LS_ERR_CORRUPT);
    }
    out->h.type = buf[3];
    out->h.session = ls_get_u32le(buf + 4);
    out->h.slot = buf[8];
    memcpy(out->h.token, buf + 12, LS_NET_TOKEN_SIZE);
    if (out->h.slot >= LS_NET_MAX_SLOTS) {
        return fail(err, "slot", LS_ERR_CORRUPT);
    }
    return decode_body(buf + LS_NET_HEADER_SIZE, len - LS_NET_HEADER_SIZE, out, err);
}

bool ls_net_addr_equal(const ls_net_addr *a, const ls_net_addr *b)
{
    if (a->family != b->family || a->port != b->port) {
        return false;
    }
    return memcmp(a->ip, b->ip, a->family == 4 ? 4 : 16) == 0;
}

ls_net_addr ls_net_addr_ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port)
{
    ls_net_addr r;
    memset(&r, 0, sizeof r);
    r.family = 4;
    r.ip[0] = a, r.ip[1] = b, r.ip[2] = c, r.ip[3] = d;
    r.port = port;
    return r;
}

const char *ls_net_addr_format(const ls_net_addr *a, char *buf, size_t size)
{
    if (a->family == 4) {
        snprintf(buf, size, "%u.%u.%u.%u:%u", a->ip[0], a->ip[1], a->ip[2], a->ip[3], a->port);
    } else {
        snprintf(buf, size, "[v6]:%u", a->port);
    }
    return buf;
}
