// SPDX-License-Identifier: MIT
// The wire codec: exact round trips of every message, and rejection (never a
// crash) of truncated, oversized, mislabelled or inconsistent datagrams.
#include "ls/net_wire.h"

#include <criterion/criterion.h>
#include <string.h>

static ls_net_msg base(uint8_t type)
{
    ls_net_msg m;
    memset(&m, 0, sizeof m);
    m.h.type = type;
    m.h.session = 0x01020304;
    m.h.slot = 3;
    for (int i = 0; i < LS_NET_TOKEN_SIZE; i++) {
        m.h.token[i] = (uint8_t)(0xA0 + i);
    }
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
    cr_assert_eq(memcmp(d.h.token, m->h.token, LS_NET_TOKEN_SIZE), 0);
    return d;
}

Test(net_wire, header_layout_is_little_endian_and_fixed)
{
    ls_net_msg m = base(LS_NET_PING);
    m.u.ping.time = 0x1122334455667788u;
    m.u.ping.seq = 7;
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    cr_assert_eq(n, 40u);
    static const uint8_t head[12] = {'L', 'S', 1, LS_NET_PING, 4, 3, 2, 1, 3, 0, 12, 0};
    cr_assert_eq(memcmp(buf, head, 12), 0);
    cr_assert_eq(buf[12], 0xA0);
    cr_assert_eq(buf[28], 0x88);
    cr_assert_eq(buf[35], 0x11);
    cr_assert_eq(buf[36], 7);
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
    d = round_trip(&m, LS_NET_HEADER_SIZE + 8, buf);
    cr_assert_eq(d.u.cookie, 42u);

    m = base(LS_NET_WELCOME);
    m.u.welcome.slots = 16;
    m.u.welcome.input_size = 64;
    m.u.welcome.delay = 5;
    m.u.welcome.tick_rate = 120;
    m.u.welcome.ticks = 1200;
    m.u.welcome.timeout_ms = 3000;
    d = round_trip(&m, LS_NET_HEADER_SIZE + 16, buf);
    cr_assert_eq(memcmp(&d.u.welcome, &m.u.welcome, sizeof d.u.welcome), 0);

    uint8_t payload[LS_NET_MAX_BATCH * 8];
    for (size_t i = 0; i < sizeof payload; i++) {
        payload[i] = (uint8_t)(i * 37);
    }
    m = base(LS_NET_INPUT);
    m.u.input.first_tick = 100000;
    m.u.input.count = 64;
    m.u.input.input_size = 8;
    m.u.input.data = payload;
    d = round_trip(&m, LS_NET_HEADER_SIZE + 8 + 512, buf);
    cr_assert_eq(d.u.input.first_tick, 100000u);
    cr_assert_eq(d.u.input.count, 64);
    cr_assert_eq(memcmp(d.u.input.data, payload, 512), 0);

    m = base(LS_NET_ACK);
    m.u.ack.checksum_next = 77;
    m.u.ack.disconnected = 0x8001;
    m.u.ack.count = 16;
    for (uint32_t s = 0; s < 16; s++) {
        m.u.ack.input_next[s] = 1000 + s;
    }
    d = round_trip(&m, LS_NET_HEADER_SIZE + 8 + 64, buf);
    cr_assert_eq(memcmp(&d.u.ack, &m.u.ack, sizeof d.u.ack), 0);

    m = base(LS_NET_CHECKSUM);
    m.u.checksum.first_tick = 5;
    m.u.checksum.count = 3;
    m.u.checksum.data = payload;
    d = round_trip(&m, LS_NET_HEADER_SIZE + 8 + 24, buf);
    cr_assert_eq(memcmp(d.u.checksum.data, payload, 24), 0);

    m = base(LS_NET_DESYNC);
    m.u.desync.tick = 37;
    m.u.desync.slots = 4;
    m.u.desync.expected = 0x0102030405060708u;
    d = round_trip(&m, LS_NET_HEADER_SIZE + 16, buf);
    cr_assert_eq(memcmp(&d.u.desync, &m.u.desync, sizeof d.u.desync), 0);

    m = base(LS_NET_DISCONNECT);
    m.u.disconnect.tick = 99;
    m.u.disconnect.reason = LS_NET_TIMEOUT;
    d = round_trip(&m, LS_NET_HEADER_SIZE + 8, buf);
    cr_assert_eq(d.u.disconnect.tick, 99u);
    cr_assert_eq(d.u.disconnect.reason, LS_NET_TIMEOUT);

    m = base(LS_NET_PONG);
    m.u.ping.time = 123456789;
    m.u.ping.seq = 5;
    d = round_trip(&m, LS_NET_HEADER_SIZE + 12, buf);
    cr_assert_eq(d.u.ping.time, 123456789u);
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
    for (size_t len = 0; len < n; len++) {
        cr_assert_neq(ls_net_decode(buf, len, &d, NULL), LS_OK, "prefix of %zu bytes accepted",
                      len);
    }
    buf[n] = 0;
    cr_assert_neq(ls_net_decode(buf, n + 1, &d, NULL), LS_OK, "trailing byte accepted");
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
    buf[2] = 2;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_INCOMPATIBLE);
    cr_assert_str_eq(where.field, "version");
    buf[2] = 1;
    buf[3] = 200;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT);
    cr_assert_str_eq(where.field, "type");
    buf[3] = LS_NET_PING;
    buf[8] = LS_NET_MAX_SLOTS;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT);
    cr_assert_str_eq(where.field, "slot");
    buf[8] = 0;
    buf[10] = 13;
    cr_assert_eq(ls_net_decode(buf, n, &d, &where), LS_ERR_CORRUPT);
    cr_assert_str_eq(where.field, "body length");
}

Test(net_wire, join_must_be_padded_with_zeros)
{
    ls_net_msg m = base(LS_NET_JOIN);
    uint8_t buf[LS_NET_MAX_DATAGRAM];
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    cr_assert_eq(n, (size_t)LS_NET_JOIN_SIZE);
    ls_net_msg d;
    buf[n - 1] = 1;
    cr_assert_eq(ls_net_decode(buf, n, &d, NULL), LS_ERR_CORRUPT);
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
    m.u.input.count = 2;
    size_t n = ls_net_encode(&m, buf, sizeof buf);
    buf[LS_NET_HEADER_SIZE + 4] = 0; // count 0 on the wire
    ls_net_msg d;
    cr_assert_eq(ls_net_decode(buf, n, &d, NULL), LS_ERR_CORRUPT);
    buf[LS_NET_HEADER_SIZE + 4] = 2;
    ls_put_u32le(buf + LS_NET_HEADER_SIZE, UINT32_MAX); // tick range would wrap
    cr_assert_eq(ls_net_decode(buf, n, &d, NULL), LS_ERR_CORRUPT);
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
