// SPDX-License-Identifier: MIT
// The wire codec v2 (SPEC.md §17.1). One field walk per message serves both
// directions, as the snapshot code does (fixmath_phys/src/world/snapshot.c):
// io_body(c, m) writes m's fields when c->save and reads them otherwise,
// through a bounded cursor with an `ok` flag, and every validity rule is a
// want() in the same walk, so the encoder refuses exactly what the decoder
// refuses. Decoding checks every length before reading a byte.
#include "ls/net_wire.h"

#include <stdio.h>
#include <string.h>

#define MAGIC0 0x4C // 'L'
#define MAGIC1 0x53 // 'S'

// JOIN is padded so that the relay's answer to an unverified source (a CHALLENGE)
// is never larger than what it received.
#define JOIN_PADDING (LS_NET_JOIN_SIZE - LS_NET_OVERHEAD - 8)

// A bounded little-endian writer/reader. save: fields go from the message to w
// (w may be NULL to measure); load: fields come from r. The first failure is
// kept (field name and kind); every later call is a no-op.
typedef struct cursor {
    bool save;
    uint8_t *w;
    const uint8_t *r;
    size_t pos, size;
    bool ok;
    const char *bad;
    ls_result why;
} cursor;

static inline void fail_at(cursor *c, const char *what, ls_result why)
{
    if (c->ok) {
        c->ok = false;
        c->bad = what;
        c->why = why;
    }
}

static inline bool room(cursor *c, size_t n, const char *what)
{
    if (!c->ok) {
        return false;
    }
    if (n > c->size - c->pos) {
        fail_at(c, what, c->save ? LS_ERR_BUFFER_TOO_SMALL : LS_ERR_TRUNCATED);
        return false;
    }
    return true;
}

// A rule on values already walked: in save mode the message is invalid (nothing is
// encoded), in load mode the datagram is corrupt.
static inline void want(cursor *c, bool cond, const char *what)
{
    if (!cond) {
        fail_at(c, what, LS_ERR_CORRUPT);
    }
}

static inline void io_u8(cursor *c, uint8_t *v, const char *what)
{
    if (!room(c, 1, what)) {
        return;
    }
    if (!c->save) {
        *v = c->r[c->pos];
    } else if (c->w) {
        c->w[c->pos] = *v;
    }
    c->pos += 1;
}

static inline void io_u16(cursor *c, uint16_t *v, const char *what)
{
    if (!room(c, 2, what)) {
        return;
    }
    if (!c->save) {
        *v = ls_get_u16le(c->r + c->pos);
    } else if (c->w) {
        ls_put_u16le(c->w + c->pos, *v);
    }
    c->pos += 2;
}

static inline void io_u32(cursor *c, uint32_t *v, const char *what)
{
    if (!room(c, 4, what)) {
        return;
    }
    if (!c->save) {
        *v = ls_get_u32le(c->r + c->pos);
    } else if (c->w) {
        ls_put_u32le(c->w + c->pos, *v);
    }
    c->pos += 4;
}

static inline void io_u64(cursor *c, uint64_t *v, const char *what)
{
    if (!room(c, 8, what)) {
        return;
    }
    if (!c->save) {
        *v = ls_get_u64le(c->r + c->pos);
    } else if (c->w) {
        ls_put_u64le(c->w + c->pos, *v);
    }
    c->pos += 8;
}

// Reserved bytes and padding: written as zeros, and must read as zeros.
static void io_zero(cursor *c, size_t n, const char *what)
{
    if (!room(c, n, what)) {
        return;
    }
    if (!c->save) {
        for (size_t i = 0; i < n; i++) {
            if (c->r[c->pos + i]) {
                fail_at(c, what, LS_ERR_CORRUPT);
                return;
            }
        }
    } else if (c->w) {
        memset(c->w + c->pos, 0, n);
    }
    c->pos += n;
}

// A run of opaque bytes: copied from *p (save) or pointed to in place (load).
static void io_bytes(cursor *c, const uint8_t **p, size_t n, const char *what)
{
    if (!room(c, n, what)) {
        return;
    }
    if (!c->save) {
        *p = c->r + c->pos;
    } else if (c->w && n) {
        memcpy(c->w + c->pos, *p, n);
    }
    c->pos += n;
}

// The header (SPEC.md §17.1). body_len is written as given (save) or read (load).
static void io_header(cursor *c, ls_net_header *h, uint16_t *body_len)
{
    uint8_t m0 = MAGIC0, m1 = MAGIC1, version = LS_NET_VERSION;
    io_u8(c, &m0, "magic");
    io_u8(c, &m1, "magic");
    want(c, m0 == MAGIC0 && m1 == MAGIC1, "magic");
    io_u8(c, &version, "version");
    if (c->ok && version != LS_NET_VERSION) {
        fail_at(c, "version", LS_ERR_INCOMPATIBLE);
        return;
    }
    io_u8(c, &h->type, "type");
    want(c, h->type >= LS_NET_JOIN && h->type <= LS_NET_TYPE_LAST, "type");
    io_u32(c, &h->session, "session");
    io_u8(c, &h->slot, "slot");
    want(c, h->slot < LS_NET_MAX_SLOTS, "slot");
    io_u8(c, &h->role, "role");
    want(c, h->role == LS_NET_ROLE_PLAYER || h->role == LS_NET_ROLE_SPECTATOR, "role");
    io_u16(c, body_len, "body length");
    io_u64(c, &h->seq, "seq");
    want(c, h->seq != 0, "seq");
}

// Every message's body, field by field, both directions (SPEC.md §17.1 table).
static void io_body(cursor *c, ls_net_msg *m)
{
    switch (m->h.type) {
    case LS_NET_JOIN:
    case LS_NET_REJOIN:
    case LS_NET_SPECTATE:
        io_u64(c, &m->u.cookie, "cookie");
        io_zero(c, JOIN_PADDING, "join padding");
        break;
    case LS_NET_CHALLENGE:
        io_u64(c, &m->u.cookie, "cookie");
        break;
    case LS_NET_WELCOME:
        io_u8(c, &m->u.welcome.slots, "welcome slots");
        io_u8(c, &m->u.welcome.input_size, "welcome input_size");
        io_u8(c, &m->u.welcome.delay, "welcome delay");
        io_zero(c, 1, "welcome reserved bytes");
        io_u16(c, &m->u.welcome.tick_rate, "welcome tick_rate");
        io_zero(c, 2, "welcome reserved bytes");
        io_u32(c, &m->u.welcome.ticks, "welcome ticks");
        io_u32(c, &m->u.welcome.timeout_ms, "welcome timeout_ms");
        want(c,
             m->u.welcome.slots >= 2 && m->u.welcome.slots <= LS_NET_MAX_SLOTS &&
                 m->u.welcome.input_size >= 1 && m->u.welcome.input_size <= LS_NET_MAX_INPUT_SIZE &&
                 m->u.welcome.delay <= LS_NET_MAX_DELAY && m->u.welcome.tick_rate >= 1 &&
                 m->u.welcome.tick_rate <= 1000,
             "welcome parameters");
        break;
    case LS_NET_INPUT:
        io_u32(c, &m->u.input.first_tick, "input first_tick");
        io_u16(c, &m->u.input.count, "input count");
        io_u8(c, &m->u.input.input_size, "input input_size");
        io_u8(c, &m->u.input.slot, "input slot");
        want(c,
             m->u.input.count >= 1 && m->u.input.count <= LS_NET_MAX_BATCH &&
                 m->u.input.input_size >= 1 && m->u.input.input_size <= LS_NET_MAX_INPUT_SIZE,
             "input count/size");
        want(c, m->u.input.slot < LS_NET_MAX_SLOTS, "input slot");
        want(c, (uint64_t)m->u.input.first_tick + m->u.input.count <= UINT32_MAX,
             "input tick range");
        want(c, !c->save || m->u.input.data, "input data");
        io_bytes(c, &m->u.input.data, (size_t)m->u.input.count * m->u.input.input_size,
                 "input payload");
        break;
    case LS_NET_ACK:
        io_u32(c, &m->u.ack.checksum_next, "ack checksum_next");
        io_u16(c, &m->u.ack.disconnected, "ack disconnected");
        io_u8(c, &m->u.ack.count, "ack count");
        io_zero(c, 1, "ack reserved byte");
        want(c, m->u.ack.count >= 1 && m->u.ack.count <= LS_NET_MAX_SLOTS, "ack count");
        for (uint32_t s = 0; c->ok && s < m->u.ack.count; s++) {
            io_u32(c, &m->u.ack.input_next[s], "ack input_next");
        }
        break;
    case LS_NET_CHECKSUM:
        io_u32(c, &m->u.checksum.first_tick, "checksum first_tick");
        io_u16(c, &m->u.checksum.count, "checksum count");
        io_zero(c, 2, "checksum reserved bytes");
        want(c, m->u.checksum.count >= 1 && m->u.checksum.count <= LS_NET_MAX_BATCH,
             "checksum count");
        want(c, (uint64_t)m->u.checksum.first_tick + m->u.checksum.count <= UINT32_MAX,
             "checksum tick range");
        want(c, !c->save || m->u.checksum.data, "checksum data");
        io_bytes(c, &m->u.checksum.data, 8u * m->u.checksum.count, "checksum payload");
        break;
    case LS_NET_DESYNC:
        io_u32(c, &m->u.desync.tick, "desync tick");
        io_u16(c, &m->u.desync.slots, "desync slots");
        io_u16(c, &m->u.desync.flags, "desync flags");
        want(c, m->u.desync.flags <= LS_NET_DESYNC_DISPUTED, "desync flags");
        io_u64(c, &m->u.desync.expected, "desync expected");
        break;
    case LS_NET_DISCONNECT:
        io_u32(c, &m->u.disconnect.tick, "disconnect tick");
        io_u8(c, &m->u.disconnect.reason, "disconnect reason");
        io_u8(c, &m->u.disconnect.slot, "disconnect slot");
        io_zero(c, 2, "disconnect reserved bytes");
        want(c, m->u.disconnect.reason >= LS_NET_LEFT && m->u.disconnect.reason <= LS_NET_REJOINED,
             "disconnect reason");
        want(c, m->u.disconnect.slot < LS_NET_MAX_SLOTS, "disconnect slot");
        break;
    case LS_NET_PING:
    case LS_NET_PONG:
        io_u64(c, &m->u.ping.time, "ping time");
        io_u32(c, &m->u.ping.seq, "ping seq");
        break;
    case LS_NET_STATE_CHUNK:
        io_u32(c, &m->u.state.tick, "state tick");
        io_u32(c, &m->u.state.total, "state total");
        io_u32(c, &m->u.state.offset, "state offset");
        io_u16(c, &m->u.state.len, "state len");
        io_zero(c, 2, "state reserved bytes");
        for (uint32_t i = 0; i < LS_NET_STATE_HASH_SIZE; i++) {
            io_u8(c, &m->u.state.hash[i], "state hash");
        }
        want(c, m->u.state.total >= 1 && m->u.state.total <= LS_NET_STATE_MAX, "state total");
        want(c, m->u.state.len >= 1 && m->u.state.len <= LS_NET_STATE_CHUNK_MAX, "state len");
        want(c, (uint64_t)m->u.state.offset + m->u.state.len <= m->u.state.total, "state range");
        want(c, !c->save || m->u.state.data, "state data");
        io_bytes(c, &m->u.state.data, m->u.state.len, "state payload");
        break;
    case LS_NET_STATE_ACK:
        io_u32(c, &m->u.state_ack.tick, "state_ack tick");
        io_u32(c, &m->u.state_ack.total, "state_ack total");
        io_u32(c, &m->u.state_ack.next, "state_ack next");
        want(c,
             m->u.state_ack.total <= LS_NET_STATE_MAX &&
                 m->u.state_ack.next <= m->u.state_ack.total,
             "state_ack range");
        break;
    case LS_NET_STATE_PROOF:
        io_u32(c, &m->u.proof.tick, "proof tick");
        io_u8(c, &m->u.proof.source, "proof source");
        io_u8(c, &m->u.proof.kind, "proof kind");
        io_zero(c, 2, "proof reserved bytes");
        io_u64(c, &m->u.proof.checksum, "proof checksum");
        want(c, m->u.proof.source < LS_NET_MAX_SLOTS || m->u.proof.source == LS_NET_SOURCE_HOST,
             "proof source");
        want(c, m->u.proof.kind <= LS_NET_PROOF_NONE, "proof kind");
        break;
    case LS_NET_CONFIRMED:
        io_u32(c, &m->u.confirmed.first_tick, "confirmed first_tick");
        io_u16(c, &m->u.confirmed.count, "confirmed count");
        io_u8(c, &m->u.confirmed.slots, "confirmed slots");
        io_u8(c, &m->u.confirmed.input_size, "confirmed input_size");
        want(c,
             m->u.confirmed.count >= 1 && m->u.confirmed.count <= LS_NET_MAX_BATCH &&
                 m->u.confirmed.slots >= 2 && m->u.confirmed.slots <= LS_NET_MAX_SLOTS &&
                 m->u.confirmed.input_size >= 1 &&
                 m->u.confirmed.input_size <= LS_NET_MAX_INPUT_SIZE,
             "confirmed count/slots/size");
        want(c, (uint64_t)m->u.confirmed.first_tick + m->u.confirmed.count <= UINT32_MAX,
             "confirmed tick range");
        want(c, !c->save || m->u.confirmed.rows, "confirmed rows");
        io_bytes(c, &m->u.confirmed.rows,
                 (size_t)m->u.confirmed.count *
                     LS_NET_CONFIRMED_ROW(m->u.confirmed.slots, m->u.confirmed.input_size),
                 "confirmed payload");
        break;
    default:
        fail_at(c, "type", LS_ERR_CORRUPT);
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
    cursor measure = {true, NULL, NULL, 0, LS_NET_MAX_DATAGRAM - LS_NET_OVERHEAD,
                      true, NULL, LS_OK};
    io_body(&measure, &m);
    size_t total = LS_NET_OVERHEAD + measure.pos;
    if (!measure.ok || !buf || total > cap) {
        return 0;
    }
    uint16_t body_len = (uint16_t)measure.pos;
    cursor head = {true, buf, NULL, 0, LS_NET_HEADER_SIZE, true, NULL, LS_OK};
    io_header(&head, &m.h, &body_len);
    cursor body = {true, buf + LS_NET_HEADER_SIZE, NULL, 0, body_len, true, NULL, LS_OK};
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
    cursor c = {false, NULL, buf, 0, LS_NET_HEADER_SIZE, true, NULL, LS_OK};
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
    cursor c = {false, NULL, buf + LS_NET_HEADER_SIZE, 0, body_len, true, NULL, LS_OK};
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
