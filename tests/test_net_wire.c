// SPDX-License-Identifier: MIT
// The wire codec v2: exact round trips of every message, the header layout,
// rejection (never a crash) of truncated, oversized, mislabelled or
// inconsistent datagrams, v1 refused with a clear error, unknown types and roles.
#include "ls/net_auth.h"

#include <criterion/criterion.h>
#include <string.h>

static ls_net_msg base(uint8_t type)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.h.type = type;
    m.h.session = 0x01020304;
    m.h.slot = 3;
    m.h.seq = 0x1112131415161718u;
    return m;
}

static ls_net_msg round_trip(const ls_net_msg *m, size_t expect_len, uint8_t *buf)
{
    size_t n = ls_net_encode(m, buf, LS_NET_MAX_DATAGRAM);
    cr_assert_eq(n, expect_len, "%s encodes to %zu bytes, want %zu", ls_net_type_name(m->h.type), n,
                 expect_len);
    ls_net_msg d;
    ls_error where;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_OK, "%s: %s", ls_net_type_name(m->h.type),
                 where.message);
    cr_assert_eq(d.h.type, m->h.type);
    cr_assert_eq(d.h.session, m->h.session);
    cr_assert_eq(d.h.slot, m->h.slot);
    cr_assert_eq(d.h.role, m->h.role);
    cr_assert_eq(d.h.seq, m->h.seq);
    // And re-encoding the decoded message gives the same bytes.
    uint8_t again[LS_NET_MAX_DATAGRAM];
    cr_assert_eq(ls_net_encode(&d, again, sizeof again), n);
    cr_assert_eq(memcmp(again, buf, n), 0, "%s re-encodes identically",
                 ls_net_type_name(m->h.type));
    return d;
}

#define BODY(n) (LS_NET_OVERHEAD + (n))

Test(net_wire, header_layout_is_little_endian_and_fixed)
{
    ls_net_msg m = base(LS_NET_PING);
    m.u.ping.time = 0x2122232425262728u;
    m.u.ping.seq = 7;
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    cr_assert_eq(n, 48u, "20 header + 12 body + 16 tag");
    static const uint8_t head[LS_NET_HEADER_SIZE] = {
        'L', 'S', 2,    LS_NET_PING, 4,    3,    2,    1,    3,    0,
        12,  0,   0x18, 0x17,        0x16, 0x15, 0x14, 0x13, 0x12, 0x11};
    cr_assert_arr_eq(buf, head, sizeof head);
    cr_assert_eq(buf[20], 0x28);
    cr_assert_eq(buf[27], 0x21);
    cr_assert_eq(buf[28], 7);
    for (size_t i = 32; i < 48; i++) {
        cr_assert_eq(buf[i], 0, "the tag is zero until sealed");
    }
}

Test(net_wire, every_message_round_trips_exactly)
{
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    ls_net_msg m = base(LS_NET_JOIN), d;
    m.u.cookie = 0xDEADBEEFCAFEF00Du;
    d = round_trip(&m, LS_NET_JOIN_SIZE, buf);
    cr_assert_eq(d.u.cookie, m.u.cookie);

    m = base(LS_NET_CHALLENGE);
    m.u.cookie = 42;
    d = round_trip(&m, BODY(8), buf);
    cr_assert_eq(d.u.cookie, 42u);

    m = base(LS_NET_WELCOME);
    m.u.welcome.slots = 16;
    m.u.welcome.input_size = 64;
    m.u.welcome.delay = 5;
    m.u.welcome.tick_rate = 120;
    m.u.welcome.ticks = 1200;
    m.u.welcome.timeout_ms = 3000;
    d = round_trip(&m, BODY(16), buf);
    cr_assert_eq(memcmp(&d.u.welcome, &m.u.welcome, sizeof d.u.welcome), 0);

    uint8_t payload[LS_NET_MAX_BATCH * 8];
    for (size_t i = 0; i < sizeof payload; i++) {
        payload[i] = (uint8_t)(i * 37);
    }
    m = base(LS_NET_INPUT);
    m.u.input.first_tick = 100000;
    m.u.input.count = 64;
    m.u.input.input_size = 8;
    m.u.input.slot = 9;
    m.u.input.data = payload;
    d = round_trip(&m, BODY(8 + 512), buf);
    cr_assert_eq(d.u.input.first_tick, 100000u);
    cr_assert_eq(d.u.input.count, 64);
    cr_assert_eq(d.u.input.slot, 9);
    cr_assert_eq(memcmp(d.u.input.data, payload, 512), 0);

    m = base(LS_NET_ACK);
    m.u.ack.checksum_next = 77;
    m.u.ack.disconnected = 0x8001;
    m.u.ack.count = 16;
    for (uint32_t s = 0; s < 16; s++) {
        m.u.ack.input_next[s] = 1000 + s;
    }
    d = round_trip(&m, BODY(8 + 64), buf);
    cr_assert_eq(memcmp(&d.u.ack, &m.u.ack, sizeof d.u.ack), 0);

    m = base(LS_NET_CHECKSUM);
    m.u.checksum.first_tick = 5;
    m.u.checksum.count = 3;
    m.u.checksum.data = payload;
    d = round_trip(&m, BODY(8 + 24), buf);
    cr_assert_eq(memcmp(d.u.checksum.data, payload, 24), 0);

    m = base(LS_NET_DESYNC);
    m.u.desync.tick = 37;
    m.u.desync.slots = 4;
    m.u.desync.expected = 0x0102030405060708u;
    d = round_trip(&m, BODY(16), buf);
    cr_assert_eq(memcmp(&d.u.desync, &m.u.desync, sizeof d.u.desync), 0);
    m.u.desync.flags = LS_NET_DESYNC_DISPUTED; // no majority (SPEC.md §17.7)
    d = round_trip(&m, BODY(16), buf);
    cr_assert_eq(d.u.desync.flags, LS_NET_DESYNC_DISPUTED);
    m.u.desync.flags = 2;
    cr_assert_eq(ls_net_encode(&m, buf, sizeof buf), 0u, "unknown desync flags");
    m.u.desync.flags = 0;

    m = base(LS_NET_DISCONNECT);
    m.u.disconnect.tick = 99;
    m.u.disconnect.reason = LS_NET_TIMEOUT;
    m.u.disconnect.slot = 15;
    d = round_trip(&m, BODY(8), buf);
    cr_assert_eq(d.u.disconnect.tick, 99u);
    cr_assert_eq(d.u.disconnect.reason, LS_NET_TIMEOUT);
    cr_assert_eq(d.u.disconnect.slot, 15);

    for (uint8_t t = LS_NET_PING; t <= LS_NET_PONG; t++) {
        m = base(t);
        m.u.ping.time = 123456789;
        m.u.ping.seq = 5;
        d = round_trip(&m, BODY(12), buf);
        cr_assert_eq(d.u.ping.time, 123456789u);
        cr_assert_eq(d.u.ping.seq, 5u);
    }
}

Test(net_wire, every_truncation_and_extension_is_rejected)
{
    uint8_t payload[16] = {1, 2, 3, 4};
    ls_net_msg m = base(LS_NET_INPUT);
    m.u.input.first_tick = 9;
    m.u.input.count = 4;
    m.u.input.input_size = 4;
    m.u.input.data = payload;
    uint8_t buf[LS_NET_MAX_DATAGRAM + 8];
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    ls_net_msg d;
    ls_error where;
    for (size_t len = 0; len < n; len++) {
        cr_assert_eq(ls_net_decode(buf, len, &d, &where), LS_ERR_TRUNCATED,
                     "prefix of %zu bytes: %s", len, where.message);
    }
    buf[n] = 0;
    cr_assert_eq(ls_net_decode(buf, n + 1, &d, &where), LS_ERR_CORRUPT, "trailing byte accepted");
    cr_assert_str_eq(where.field, "body length");
    cr_assert_eq(ls_net_encode(&m, buf, n - 1), 0u, "a buffer one byte short is refused");
}

Test(net_wire, bad_fields_are_named)
{
    ls_net_msg m = base(LS_NET_PING);
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    ls_net_msg d;
    ls_error where;
    buf[0] = 'X';
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT);
    cr_assert_str_eq(where.field, "magic");
    buf[0] = 'L';
    buf[2] = 3;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_INCOMPATIBLE);
    cr_assert_str_eq(where.field, "version");
    buf[2] = 2;
    buf[3] = 200;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT);
    cr_assert_str_eq(where.field, "type");
    buf[3] = 0;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT);
    buf[3] = LS_NET_PING;
    buf[8] = LS_NET_MAX_SLOTS;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT);
    cr_assert_str_eq(where.field, "slot");
    buf[8] = 0;
    buf[9] = 7;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT);
    cr_assert_str_eq(where.field, "role");
    buf[9] = 0;
    buf[10] = 13;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_TRUNCATED);
    cr_assert_str_eq(where.field, "body length");
    buf[10] = 11;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT);
    cr_assert_str_eq(where.field, "body length");
    buf[10] = 12;
    memset(buf + 12, 0, 8);
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT, "sequence number 0");
    cr_assert_str_eq(where.field, "seq");
    m.h.seq = 0;
    cr_assert_eq(ls_net_encode(&m, buf, sizeof buf), 0u, "nor is it encoded");
}

Test(net_wire, version_1_is_refused_with_a_clear_error)
{
    // A v1 PING as a v1 peer sends it: 28-byte header with a token, 12-byte body.
    uint8_t v1[40] = {'L', 'S', 1, LS_NET_PING, 1, 0, 0, 0, 0, 0, 12, 0};
    ls_net_msg d;
    ls_error where;
    cr_assert_eq(ls_net_decode(v1, sizeof v1, &d, &where), LS_ERR_INCOMPATIBLE);
    cr_assert_str_eq(where.field, "version");
    cr_assert_str_eq(where.message, "wire version 1 is no longer supported; both sides need v2");
    ls_net_header h;
    cr_assert_eq(ls_net_decode_header(v1, sizeof v1, &h, &where), LS_ERR_INCOMPATIBLE);
    cr_assert_str_eq(where.message, "wire version 1 is no longer supported; both sides need v2");
    // A v1 JOIN (128 bytes) too, even though it has a v2 JOIN's size.
    uint8_t join[LS_NET_JOIN_SIZE] = {'L', 'S', 1, LS_NET_JOIN, 1, 0, 0, 0, 0, 0, 100, 0};
    cr_assert_eq(ls_net_decode(join, sizeof join, &d, &where), LS_ERR_INCOMPATIBLE);
}

Test(net_wire, spectator_join_and_state_messages_round_trip)
{
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    ls_net_msg m = base(LS_NET_SPECTATE), d;
    m.h.role = LS_NET_ROLE_SPECTATOR;
    m.u.cookie = 77;
    d = round_trip(&m, LS_NET_JOIN_SIZE, buf);
    cr_assert_eq(d.h.role, LS_NET_ROLE_SPECTATOR);
    cr_assert_eq(d.u.cookie, 77u);
    m = base(LS_NET_REJOIN);
    m.u.cookie = 78;
    d = round_trip(&m, LS_NET_JOIN_SIZE, buf);
    cr_assert_eq(d.u.cookie, 78u);

    uint8_t payload[LS_NET_STATE_CHUNK_MAX];
    for (size_t i = 0; i < sizeof payload; i++) {
        payload[i] = (uint8_t)(i * 13u);
    }
    m = base(LS_NET_STATE_CHUNK);
    m.u.state.tick = 600;
    m.u.state.total = 5000;
    m.u.state.offset = 4000;
    m.u.state.len = 1000;
    memset(m.u.state.hash, 0xA5, sizeof m.u.state.hash);
    m.u.state.data = payload;
    d = round_trip(&m, BODY(16 + LS_NET_STATE_HASH_SIZE + 1000), buf);
    cr_assert_eq(d.u.state.tick, 600u);
    cr_assert_eq(d.u.state.offset, 4000u);
    cr_assert_arr_eq(d.u.state.hash, m.u.state.hash, LS_NET_STATE_HASH_SIZE);
    cr_assert_arr_eq(d.u.state.data, payload, 1000);
    m.u.state.len = LS_NET_STATE_CHUNK_MAX;
    m.u.state.offset = 0;
    cr_assert_eq(ls_net_encode(&m, buf, sizeof buf), (size_t)LS_NET_MAX_DATAGRAM, "a full chunk");
    m.u.state.offset = 4500; // past the end
    m.u.state.len = 1000;
    cr_assert_eq(ls_net_encode(&m, buf, sizeof buf), 0u);

    m = base(LS_NET_STATE_ACK);
    m.u.state_ack.tick = 600;
    m.u.state_ack.total = 5000;
    m.u.state_ack.next = 2232;
    d = round_trip(&m, BODY(12), buf);
    cr_assert_eq(d.u.state_ack.next, 2232u);
    m.u.state_ack.next = 5001;
    cr_assert_eq(ls_net_encode(&m, buf, sizeof buf), 0u);

    // STATE_PROOF: tick, source, kind, reserved, checksum (SPEC.md §17.10).
    m = base(LS_NET_STATE_PROOF);
    m.u.proof.tick = 600;
    m.u.proof.source = 3;
    m.u.proof.kind = LS_NET_PROOF_REFUSED;
    m.u.proof.checksum = 0x0123456789ABCDEFull;
    d = round_trip(&m, BODY(16), buf);
    cr_assert_eq(d.u.proof.tick, 600u);
    cr_assert_eq(d.u.proof.source, 3u);
    cr_assert_eq(d.u.proof.kind, LS_NET_PROOF_REFUSED);
    cr_assert_eq(d.u.proof.checksum, 0x0123456789ABCDEFull);
    m.u.proof.source = LS_NET_SOURCE_HOST;
    d = round_trip(&m, BODY(16), buf);
    cr_assert_eq(d.u.proof.source, LS_NET_SOURCE_HOST);
    m.u.proof.source = LS_NET_MAX_SLOTS;
    cr_assert_eq(ls_net_encode(&m, buf, sizeof buf), 0u, "a source is a slot or the host");
    m.u.proof.source = 0;
    m.u.proof.kind = LS_NET_PROOF_NONE + 1;
    cr_assert_eq(ls_net_encode(&m, buf, sizeof buf), 0u, "kind");
    m.u.proof.kind = LS_NET_PROOF_AGREED;
    size_t proof_len = ls_net_encode(&m, buf, sizeof buf);
    buf[LS_NET_HEADER_SIZE + 6] = 1; // reserved
    ls_error where;
    cr_assert_eq(ls_net_decode(buf, proof_len, &d, &where), LS_ERR_CORRUPT);
    cr_assert_str_eq(where.field, "proof reserved bytes");

    uint8_t rows[64 * LS_NET_CONFIRMED_ROW(4, 1)];
    for (size_t i = 0; i < sizeof rows; i++) {
        rows[i] = (uint8_t)i;
    }
    m = base(LS_NET_CONFIRMED);
    m.h.role = LS_NET_ROLE_SPECTATOR;
    m.u.confirmed.first_tick = 100;
    m.u.confirmed.count = 64;
    m.u.confirmed.slots = 4;
    m.u.confirmed.input_size = 1;
    m.u.confirmed.rows = rows;
    d = round_trip(&m, BODY(8 + sizeof rows), buf);
    cr_assert_eq(d.u.confirmed.count, 64u);
    cr_assert_arr_eq(d.u.confirmed.rows, rows, sizeof rows);
    // Truncating the rows is refused.
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    ls_net_msg bad;
    cr_assert_neq(ls_net_decode(buf, n - 1, &bad, NULL), LS_OK);
}

Test(net_wire, unknown_types_and_roles_are_refused)
{
    ls_net_msg m = base(LS_NET_PING);
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    ls_net_msg d;
    ls_error where;
    cr_assert_str_eq(ls_net_type_name(LS_NET_SPECTATE), "SPECTATE");
    buf[3] = LS_NET_TYPE_LAST + 1;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT);
    cr_assert_str_eq(where.field, "type");
    buf[3] = LS_NET_PING;
    buf[9] = 2;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT);
    cr_assert_str_eq(where.field, "role");
    buf[9] = LS_NET_ROLE_SPECTATOR;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_OK);
}

Test(net_wire, join_must_be_padded_with_zeros)
{
    ls_net_msg m = base(LS_NET_JOIN);
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    cr_assert_eq(n, (size_t)LS_NET_JOIN_SIZE);
    ls_net_msg d;
    buf[n - LS_NET_TAG_SIZE - 1] = 1;
    cr_assert_eq(ls_net_decode(buf, n, &d, NULL), LS_ERR_CORRUPT);
    buf[n - LS_NET_TAG_SIZE - 1] = 0;
    buf[n - 1] = 0xFF; // the tag is not the codec's business
    cr_assert_eq(ls_net_decode(buf, n, &d, NULL), LS_OK);
}

Test(net_wire, input_counts_outside_limits_are_rejected_both_ways)
{
    uint8_t payload[LS_NET_MAX_DATAGRAM] = {0};
    ls_net_msg m = base(LS_NET_INPUT);
    m.u.input.count = LS_NET_MAX_BATCH + 1;
    m.u.input.input_size = 1;
    m.u.input.data = payload;
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    cr_assert_eq(ls_net_encode(&m, buf, sizeof buf), 0u);
    m.u.input.count = 0;
    cr_assert_eq(ls_net_encode(&m, buf, sizeof buf), 0u);
    m.u.input.count = 64;
    m.u.input.input_size = 64; // 4096 bytes: more than a datagram
    cr_assert_eq(ls_net_encode(&m, buf, sizeof buf), 0u);
    m.u.input.input_size = 1;
    m.u.input.slot = LS_NET_MAX_SLOTS;
    cr_assert_eq(ls_net_encode(&m, buf, sizeof buf), 0u);
    m.u.input.slot = 0;
    m.u.input.count = 2;
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    cr_assert_gt(n, 0u);
    buf[LS_NET_HEADER_SIZE + 4] = 0; // count 0 on the wire
    ls_net_msg d;
    cr_assert_eq(ls_net_decode(buf, n, &d, NULL), LS_ERR_CORRUPT);
    buf[LS_NET_HEADER_SIZE + 4] = 2;
    ls_put_u32le(buf + LS_NET_HEADER_SIZE, UINT32_MAX); // tick range would wrap
    cr_assert_eq(ls_net_decode(buf, n, &d, NULL), LS_ERR_CORRUPT);
    ls_put_u32le(buf + LS_NET_HEADER_SIZE, 0);
    buf[LS_NET_HEADER_SIZE + 4] = 3; // claims more inputs than the body holds
    cr_assert_eq(ls_net_decode(buf, n, &d, NULL), LS_ERR_TRUNCATED);
}

Test(net_wire, addresses_compare_by_value)
{
    ls_net_addr a = ls_net_addr_ipv4(127, 0, 0, 1, 4000), b = ls_net_addr_ipv4(127, 0, 0, 1, 4000);
    cr_assert(ls_net_addr_equal(&a, &b));
    b.port = 4001;
    cr_assert_not(ls_net_addr_equal(&a, &b));
    char s[64];
    cr_assert_str_eq(ls_net_addr_format(&a, s, sizeof s), "127.0.0.1:4000");
}
