// SPDX-License-Identifier: MIT
// The wire codec v2 (SPEC.md §17.1). One field walk per message serves both
// directions, as the snapshot code does (fixmath_phys/src/world/state.h):
// io_body(c, m) writes m's fields when c->save and reads them otherwise,
// through the bounded cursor of core/src/cursor.h (an `ok` flag and the
// first failing field), and every validity rule is a
// ls_cursor_want_() in the same walk, so the encoder refuses exactly what the decoder
// refuses. Decoding checks every length before reading a byte.
#include "ls/net_wire.h"

#include "../../core/src/cursor.h"

#include <stdio.h>
#include <string.h>

#define MAGIC0 0x4C // 'L'
#define MAGIC1 0x53 // 'S'

// JOIN is padded so that the relay's answer to an unverified source (a CHALLENGE)
// is never larger than what it received.
#define JOIN_PADDING (LS_NET_JOIN_SIZE - LS_NET_OVERHEAD - 8)

// The header (SPEC.md §17.1). body_len is written as given (save) or read (load).
static void io_header(ls_cursor *c, ls_net_header *h, uint16_t *body_len)
{
    uint8_t m0 = MAGIC0, m1 = MAGIC1, version = LS_NET_VERSION;
    ls_io_u8_(c, &m0, "magic");
    ls_io_u8_(c, &m1, "magic");
    ls_cursor_want_(c, m0 == MAGIC0 && m1 == MAGIC1, "magic");
    ls_io_u8_(c, &version, "version");
    if (c->ok && version != LS_NET_VERSION) {
        ls_cursor_fail_(c, "version", LS_ERR_INCOMPATIBLE);
        return;
    }
    ls_io_u8_(c, &h->type, "type");
    ls_cursor_want_(c, h->type >= LS_NET_JOIN && h->type <= LS_NET_TYPE_LAST, "type");
    ls_io_u32_(c, &h->session, "session");
    ls_io_u8_(c, &h->slot, "slot");
    ls_cursor_want_(c, h->slot < LS_NET_MAX_SLOTS, "slot");
    ls_io_u8_(c, &h->role, "role");
    ls_cursor_want_(c, h->role == LS_NET_ROLE_PLAYER || h->role == LS_NET_ROLE_SPECTATOR, "role");
    ls_io_u16_(c, body_len, "body length");
    ls_io_u64_(c, &h->seq, "seq");
    ls_cursor_want_(c, h->seq != 0, "seq");
}

// Every message's body, field by field, both directions (SPEC.md §17.1 table).
static void io_body(ls_cursor *c, ls_net_msg *m)
{
    switch (m->h.type) {
    case LS_NET_JOIN:
    case LS_NET_REJOIN:
    case LS_NET_SPECTATE:
        ls_io_u64_(c, &m->u.cookie, "cookie");
        ls_io_zero_(c, JOIN_PADDING, "join padding");
        break;
    case LS_NET_CHALLENGE:
        ls_io_u64_(c, &m->u.cookie, "cookie");
        break;
    case LS_NET_WELCOME:
        ls_io_u8_(c, &m->u.welcome.slots, "welcome slots");
        ls_io_u8_(c, &m->u.welcome.input_size, "welcome input_size");
        ls_io_u8_(c, &m->u.welcome.delay, "welcome delay");
        ls_io_zero_(c, 1, "welcome reserved bytes");
        ls_io_u16_(c, &m->u.welcome.tick_rate, "welcome tick_rate");
        ls_io_zero_(c, 2, "welcome reserved bytes");
        ls_io_u32_(c, &m->u.welcome.ticks, "welcome ticks");
        ls_io_u32_(c, &m->u.welcome.timeout_ms, "welcome timeout_ms");
        ls_cursor_want_(c,
                        m->u.welcome.slots >= 2 && m->u.welcome.slots <= LS_NET_MAX_SLOTS &&
                            m->u.welcome.input_size >= 1 &&
                            m->u.welcome.input_size <= LS_NET_MAX_INPUT_SIZE &&
                            m->u.welcome.delay <= LS_NET_MAX_DELAY && m->u.welcome.tick_rate >= 1 &&
                            m->u.welcome.tick_rate <= 1000,
                        "welcome parameters");
        break;
    case LS_NET_INPUT:
        ls_io_u32_(c, &m->u.input.first_tick, "input first_tick");
        ls_io_u16_(c, &m->u.input.count, "input count");
        ls_io_u8_(c, &m->u.input.input_size, "input input_size");
        ls_io_u8_(c, &m->u.input.slot, "input slot");
        ls_cursor_want_(c,
                        m->u.input.count >= 1 && m->u.input.count <= LS_NET_MAX_BATCH &&
                            m->u.input.input_size >= 1 &&
                            m->u.input.input_size <= LS_NET_MAX_INPUT_SIZE,
                        "input count/size");
        ls_cursor_want_(c, m->u.input.slot < LS_NET_MAX_SLOTS, "input slot");
        ls_cursor_want_(c, (uint64_t)m->u.input.first_tick + m->u.input.count <= UINT32_MAX,
                        "input tick range");
        ls_cursor_want_(c, !c->save || m->u.input.data, "input data");
        ls_io_bytes_(c, &m->u.input.data, (size_t)m->u.input.count * m->u.input.input_size,
                     "input payload");
        break;
    case LS_NET_ACK:
        ls_io_u32_(c, &m->u.ack.checksum_next, "ack checksum_next");
        ls_io_u16_(c, &m->u.ack.disconnected, "ack disconnected");
        ls_io_u8_(c, &m->u.ack.count, "ack count");
        ls_io_zero_(c, 1, "ack reserved byte");
        ls_cursor_want_(c, m->u.ack.count >= 1 && m->u.ack.count <= LS_NET_MAX_SLOTS, "ack count");
        for (uint32_t s = 0; c->ok && s < m->u.ack.count; s++) {
            ls_io_u32_(c, &m->u.ack.input_next[s], "ack input_next");
        }
        break;
    case LS_NET_CHECKSUM:
        ls_io_u32_(c, &m->u.checksum.first_tick, "checksum first_tick");
        ls_io_u16_(c, &m->u.checksum.count, "checksum count");
        ls_io_zero_(c, 2, "checksum reserved bytes");
        ls_cursor_want_(c, m->u.checksum.count >= 1 && m->u.checksum.count <= LS_NET_MAX_BATCH,
                        "checksum count");
        ls_cursor_want_(c, (uint64_t)m->u.checksum.first_tick + m->u.checksum.count <= UINT32_MAX,
                        "checksum tick range");
        ls_cursor_want_(c, !c->save || m->u.checksum.data, "checksum data");
        ls_io_bytes_(c, &m->u.checksum.data, 8u * m->u.checksum.count, "checksum payload");
        break;
    case LS_NET_DESYNC:
        ls_io_u32_(c, &m->u.desync.tick, "desync tick");
        ls_io_u16_(c, &m->u.desync.slots, "desync slots");
        ls_io_u16_(c, &m->u.desync.flags, "desync flags");
        ls_cursor_want_(c, m->u.desync.flags <= LS_NET_DESYNC_DISPUTED, "desync flags");
        ls_io_u64_(c, &m->u.desync.expected, "desync expected");
        break;
    case LS_NET_DISCONNECT:
        ls_io_u32_(c, &m->u.disconnect.tick, "disconnect tick");
        ls_io_u8_(c, &m->u.disconnect.reason, "disconnect reason");
        ls_io_u8_(c, &m->u.disconnect.slot, "disconnect slot");
        ls_io_zero_(c, 2, "disconnect reserved bytes");
        ls_cursor_want_(
            c, m->u.disconnect.reason >= LS_NET_LEFT && m->u.disconnect.reason <= LS_NET_REJOINED,
            "disconnect reason");
        ls_cursor_want_(c, m->u.disconnect.slot < LS_NET_MAX_SLOTS, "disconnect slot");
        break;
    case LS_NET_PING:
    case LS_NET_PONG:
        ls_io_u64_(c, &m->u.ping.time, "ping time");
        ls_io_u32_(c, &m->u.ping.seq, "ping seq");
        break;
    case LS_NET_STATE_CHUNK:
        ls_io_u32_(c, &m->u.state.tick, "state tick");
        ls_io_u32_(c, &m->u.state.total, "state total");
        ls_io_u32_(c, &m->u.state.offset, "state offset");
        ls_io_u16_(c, &m->u.state.len, "state len");
        ls_io_zero_(c, 2, "state reserved bytes");
        for (uint32_t i = 0; i < LS_NET_STATE_HASH_SIZE; i++) {
            ls_io_u8_(c, &m->u.state.hash[i], "state hash");
        }
        ls_cursor_want_(c, m->u.state.total >= 1 && m->u.state.total <= LS_NET_STATE_MAX,
                        "state total");
        ls_cursor_want_(c, m->u.state.len >= 1 && m->u.state.len <= LS_NET_STATE_CHUNK_MAX,
                        "state len");
        ls_cursor_want_(c, (uint64_t)m->u.state.offset + m->u.state.len <= m->u.state.total,
                        "state range");
        ls_cursor_want_(c, !c->save || m->u.state.data, "state data");
        ls_io_bytes_(c, &m->u.state.data, m->u.state.len, "state payload");
        break;
    case LS_NET_STATE_ACK:
        ls_io_u32_(c, &m->u.state_ack.tick, "state_ack tick");
        ls_io_u32_(c, &m->u.state_ack.total, "state_ack total");
        ls_io_u32_(c, &m->u.state_ack.next, "state_ack next");
        ls_cursor_want_(c,
                        m->u.state_ack.total <= LS_NET_STATE_MAX &&
                            m->u.state_ack.next <= m->u.state_ack.total,
                        "state_ack range");
        break;
    case LS_NET_STATE_PROOF:
        ls_io_u32_(c, &m->u.proof.tick, "proof tick");
        ls_io_u8_(c, &m->u.proof.source, "proof source");
        ls_io_u8_(c, &m->u.proof.kind, "proof kind");
        ls_io_zero_(c, 2, "proof reserved bytes");
        ls_io_u64_(c, &m->u.proof.checksum, "proof checksum");
        ls_cursor_want_(
            c, m->u.proof.source < LS_NET_MAX_SLOTS || m->u.proof.source == LS_NET_SOURCE_HOST,
            "proof source");
        ls_cursor_want_(c, m->u.proof.kind <= LS_NET_PROOF_NONE, "proof kind");
        break;
    case LS_NET_CONFIRMED:
        ls_io_u32_(c, &m->u.confirmed.first_tick, "confirmed first_tick");
        ls_io_u16_(c, &m->u.confirmed.count, "confirmed count");
        ls_io_u8_(c, &m->u.confirmed.slots, "confirmed slots");
        ls_io_u8_(c, &m->u.confirmed.input_size, "confirmed input_size");
        ls_cursor_want_(c,
                        m->u.confirmed.count >= 1 && m->u.confirmed.count <= LS_NET_MAX_BATCH &&
                            m->u.confirmed.slots >= 2 && m->u.confirmed.slots <= LS_NET_MAX_SLOTS &&
                            m->u.confirmed.input_size >= 1 &&
                            m->u.confirmed.input_size <= LS_NET_MAX_INPUT_SIZE,
                        "confirmed count/slots/size");
        ls_cursor_want_(c, (uint64_t)m->u.confirmed.first_tick + m->u.confirmed.count <= UINT32_MAX,
                        "confirmed tick range");
        ls_cursor_want_(c, !c->save || m->u.confirmed.rows, "confirmed rows");
        ls_io_bytes_(c, &m->u.confirmed.rows,
                     (size_t)m->u.confirmed.count *
                         LS_NET_CONFIRMED_ROW(m->u.confirmed.slots, m->u.confirmed.input_size),
                     "confirmed payload");
        break;
    default:
        ls_cursor_fail_(c, "type", LS_ERR_CORRUPT);
        break;
    }
}

const char *ls_net_type_name(uint8_t type)
{
    static const char *const names[] = {
        "?",        "JOIN",        "CHALLENGE",  "WELCOME",   "INPUT",      "ACK",
        "CHECKSUM", "DESYNC",      "DISCONNECT", "PING",      "PONG",       "REJOIN",
        "SPECTATE", "STATE_CHUNK", "STATE_ACK",  "CONFIRMED", "STATE_PROOF"};
    return type < sizeof names / sizeof names[0] ? names[type] : "?";
}

size_t ls_net_encode(const ls_net_msg *msg, uint8_t *buf, size_t cap)
{
    ls_net_msg m = *msg; // the walk takes field pointers; the caller's message stays const
    ls_cursor measure = ls_cursor_saver_(NULL, LS_NET_MAX_DATAGRAM - LS_NET_OVERHEAD);
    io_body(&measure, &m);
    size_t total = LS_NET_OVERHEAD + measure.pos;
    if (!measure.ok || !buf || total > cap) {
        return 0;
    }
    uint16_t body_len = (uint16_t)measure.pos;
    ls_cursor head = ls_cursor_saver_(buf, LS_NET_HEADER_SIZE);
    io_header(&head, &m.h, &body_len);
    ls_cursor body = ls_cursor_saver_(buf + LS_NET_HEADER_SIZE, body_len);
    io_body(&body, &m);
    if (!head.ok || !body.ok) {
        return 0;
    }
    memset(buf + LS_NET_HEADER_SIZE + body_len, 0, LS_NET_TAG_SIZE); // ls_net_seal fills it
    return total;
}

// Names the offending field; err is NULL on the relay's and peer's hot path,
// so hostile datagrams cost no formatting.
static ls_result fail(ls_error *err, const char *what, ls_result r)
{
    if (err) {
        if (r == LS_ERR_INCOMPATIBLE && strcmp(what, "version 1") == 0) {
            ls_error_set(err, r, "wire version 1 is no longer supported; both sides need v2");
            what = "version";
        } else if (r == LS_ERR_INCOMPATIBLE && strcmp(what, "version") == 0) {
            ls_error_set(err, r, "unknown wire version (this build speaks v%d)", LS_NET_VERSION);
        } else {
            ls_error_set(err, r, "bad datagram: %s", what);
        }
        snprintf(err->field, sizeof err->field, "%s", what);
    }
    return r;
}

// Header and body length checks shared by both decoders.
static ls_result header_of(const uint8_t *buf, size_t len, ls_net_header *h, uint16_t *body_len,
                           ls_error *err)
{
    if (buf && len >= 3 && buf[0] == MAGIC0 && buf[1] == MAGIC1 && buf[2] == 1) {
        return fail(err, "version 1", LS_ERR_INCOMPATIBLE);
    }
    if (!buf || len < LS_NET_OVERHEAD) {
        return fail(err, "header", LS_ERR_TRUNCATED);
    }
    if (len > LS_NET_MAX_DATAGRAM) {
        return fail(err, "datagram length", LS_ERR_CORRUPT);
    }
    ls_cursor c = ls_cursor_loader_(buf, LS_NET_HEADER_SIZE);
    io_header(&c, h, body_len);
    if (!c.ok) {
        return fail(err, c.bad, c.why);
    }
    if ((size_t)*body_len + LS_NET_OVERHEAD > len) {
        return fail(err, "body length", LS_ERR_TRUNCATED);
    }
    if ((size_t)*body_len + LS_NET_OVERHEAD < len) {
        return fail(err, "body length", LS_ERR_CORRUPT);
    }
    return LS_OK;
}

ls_result ls_net_decode_header(const uint8_t *buf, size_t len, ls_net_header *out, ls_error *err)
{
    ls_error_clear(err);
    memset(out, 0, sizeof *out);
    uint16_t body_len = 0;
    return header_of(buf, len, out, &body_len, err);
}

ls_result ls_net_decode(const uint8_t *buf, size_t len, ls_net_msg *out, ls_error *err)
{
    ls_error_clear(err);
    memset(out, 0, sizeof *out);
    uint16_t body_len = 0;
    ls_result r = header_of(buf, len, &out->h, &body_len, err);
    if (r != LS_OK) {
        return r;
    }
    ls_cursor c = ls_cursor_loader_(buf + LS_NET_HEADER_SIZE, body_len);
    io_body(&c, out);
    if (!c.ok) {
        return fail(err, c.bad, c.why);
    }
    if (c.pos != body_len) {
        return fail(err, "trailing bytes", LS_ERR_CORRUPT);
    }
    return LS_OK;
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
        char h[48];
        size_t n = 0;
        for (int g = 0; g < 8; g++) { // full form, no "::" compression (still parses back)
            n += (size_t)snprintf(h + n, sizeof h - n, g ? ":%x" : "%x",
                                  (unsigned)(a->ip[2 * g] << 8 | a->ip[2 * g + 1]));
        }
        snprintf(buf, size, "[%s]:%u", h, a->port);
    }
    return buf;
}
