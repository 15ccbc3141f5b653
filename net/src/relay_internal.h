// SPDX-License-Identifier: MIT
// Private: the relay's state (SPEC.md §17), shared by the files of the sans-IO
// relay (ls/net_relay.h): relay.c (relay and sessions, the players' match, receive
// dispatch and poll), relay_rejoin.c (a slot that comes back, §17.10) and
// relay_spectator.c (spectators, §17.10). They split the relay by concern, not by
// data: one session_st holds a session's players, spectators, history and
// snapshots, so the layout is here whole. Functions named ls_relay_*_ are private
// to these files (declared below, by the file that defines them).
#ifndef LS_NET_RELAY_INTERNAL_H
#define LS_NET_RELAY_INTERNAL_H

#include "ls/net_relay.h"

#include "auth.h"
#include "outbox.h"
#include "ratelimit.h"

#include <sodium.h>

#define W LS_NET_WINDOW
// Final ticks whose agreed checksum is kept: a snapshot's tick is at least R - W and the
// final ticks reach R at most, so T - 1 is among the last 2 W + 1.
#define AGREED_RING (2u * LS_NET_WINDOW + 2u)
#define EVENTS_MAX  1024u

typedef struct spec_st {
    uint8_t key[LS_NET_KEY_SIZE];
    uint64_t tx_seq;
    ls_net_replay rx;
    bool bound, dropped;
    ls_net_addr addr;
    uint32_t next;      // the spectator holds rows below this (its ACK)
    uint32_t sent_next; // rows below this were sent at least once
    bool xfer;          // receiving the session's snapshot
    bool waiting;       // behind the history, waiting for a snapshot since wait_since
    uint64_t wait_since;
    uint32_t xfer_tick;              // tick of the snapshot being sent
    uint32_t state_next, state_sent; // snapshot bytes acknowledged / sent
    uint64_t last_heard, last_sent, last_ping;
    uint32_t ping_seq;
    ls_relay_peer_stats st;
} spec_st;

typedef struct slot_st {
    uint8_t key[LS_NET_KEY_SIZE]; // the slot's secret (its credential)
    uint64_t tx_seq;              // sequence number of the last datagram sent to the slot
    ls_net_replay rx;             // sequence numbers received from the slot
    bool bound, gone;
    ls_net_addr addr;
    uint32_t gone_tick;
    uint8_t reason;
    uint32_t input_next; // relay holds this slot's inputs below this tick
    uint32_t csum_next;  // relay holds this slot's checksums below this tick
    // What the peer holds of slot s, from its ACKs, never beyond sent_next: peer_has is the
    // highest claim (new inputs are fanned out from there), peer_said the claim of the
    // ACK that arrived last (the re-send timer starts there, so one wrong ACK is undone by
    // the next right one). Genuine ACKs only grow, so the two differ only on reordering.
    uint32_t peer_has[LS_NET_MAX_SLOTS];
    uint32_t peer_said[LS_NET_MAX_SLOTS];
    uint32_t sent_next[LS_NET_MAX_SLOTS]; // the relay sent the peer slot s's inputs below this
    uint16_t peer_knows_gone;             // slots the peer acknowledged as gone
    uint64_t last_heard, last_ping, last_notice;
    uint64_t last_sent[LS_NET_MAX_SLOTS]; // last INPUT of slot s sent to this peer
    uint32_t ping_seq;
    bool ack_due; // an ACK is owed; sent once per poll, however many packets arrived
    // Acknowledgements that do not keep up (SPEC.md §17.5): since stale_since (while
    // stale), some other slot's claim has stayed below the first non-final tick; unacked:
    // those slots when that lasted timeout_ms (the DISCONNECTED event's `slots`).
    bool stale;
    uint64_t stale_since;
    uint16_t unacked;
    // Rejoin (SPEC.md §17.10): inputs of [gap_from, gap_to) are empty (the outage);
    // checksums below csum_from are not awaited; while xfer the slot loads a snapshot.
    uint64_t gone_at;
    uint32_t gap_from, gap_to, csum_from;
    bool xfer, xfer_ok; // receiving a snapshot / xfer_tick's snapshot is being sent
    uint64_t wait_since, last_state;
    uint32_t xfer_tick, state_next, state_sent;
    uint8_t xfer_source; // who supplied xfer_tick's snapshot (a slot, LS_NET_SOURCE_HOST)
    uint32_t refused;    // sources whose snapshot this rejoiner refused (bit 16: the host)
    uint32_t said_floor; // its ACK claims never count below this (its snapshot's tick)
    ls_relay_peer_stats st;
} slot_st;

typedef struct session_st {
    bool used, done;
    // Kept with `used` (one cache line) for ls_relay_poll's skip of a quiet session: a
    // poll at a time in [quiet_from, quiet_until) is proven to change nothing and send
    // nothing (session_quiet_until in relay.c); quiet_until 0 = must poll. Every entry
    // point that changes the session (a datagram, the host's calls) clears it.
    uint64_t now; // time of the latest receive or poll (for events raised inside finalize)
    uint64_t quiet_from, quiet_until;
    ls_session_def def;
    uint64_t created;
    slot_st slot[LS_NET_MAX_SLOTS];
    uint8_t *inputs; // [slot][W][input_size]
    uint64_t *csum;  // [slot][W]
    uint32_t final_next;
    ls_relay_recorder rec;
    spec_st spec[LS_NET_MAX_SLOTS];
    uint8_t *hist;     // [def.history][row]: final ticks for spectators
    uint32_t row_size; // LS_NET_CONFIRMED_ROW(slots, input_size)
    uint8_t *snap;     // [def.state_max]: the late spectators' snapshot
    uint32_t snap_tick, snap_len;
    uint8_t snap_hash[LS_NET_STATE_HASH_SIZE];
    bool snap_ready;
    uint8_t snap_source; // who supplied it: a slot (an upload) or LS_NET_SOURCE_HOST
    uint64_t snap_asked; // time of the last LS_RELAY_EV_STATE_NEEDED (0: never)
    // Agreed checksums of the latest final ticks, by tick % AGREED_RING (tag: tick + 1):
    // a rejoiner proves the snapshot of T against the one of T - 1 (SPEC.md §17.10).
    uint64_t agreed[AGREED_RING];
    uint32_t agreed_tag[AGREED_RING];
    // A connected player's upload of its state of up_tick (for rejoiners, SPEC.md §17.10).
    uint8_t *up; // [def.state_max], with rejoin_ms
    uint32_t up_slot, up_tick, up_total, up_next;
    uint8_t up_hash[LS_NET_STATE_HASH_SIZE];
    uint64_t up_asked;    // time of the last request (0: never)
    uint64_t up_progress; // time the upload last moved (a request, or new in-order bytes)
} session_st;

struct ls_relay {
    ls_relay_def def;
    session_st *sessions;
    uint32_t session_count;
    uint8_t secret[crypto_shorthash_KEYBYTES]; // cookie key
    ls_net_outbox out;
    ls_relay_event events[EVENTS_MAX];
    uint32_t ev_head, ev_count;
    ls_net_ratelimit limit;
    ls_relay_stats st;
    uint32_t resend_left; // re-sends this poll may still produce (max_resends_per_poll)
    bool resend_held;     // a due re-send waited for a later poll
    uint32_t poll_start;  // the session index the next poll starts with
};

// relay.c: events, sending, cookies, disconnects.
void ls_relay_emit_(ls_relay *r, const ls_relay_event *ev);
bool ls_relay_seal_to_(ls_relay *r, slot_st *p, uint32_t to, const ls_net_addr *addr, ls_net_msg *m,
                       size_t *len);
void ls_relay_send_to_(ls_relay *r, session_st *s, uint32_t to, ls_net_msg *m);
void ls_relay_header_(ls_net_msg *m, uint8_t type, uint32_t session);
/// The WELCOME of session id (its parameters), for a player or a spectator.
ls_net_msg ls_relay_welcome_(const session_st *s, uint32_t id);
void ls_relay_disconnect_(ls_relay *r, session_st *s, uint32_t id, uint32_t k, uint8_t reason,
                          uint64_t now);
uint64_t ls_relay_cookie_for_(const ls_relay *r, const ls_net_addr *a, uint32_t id, uint32_t slot,
                              uint64_t bucket);

// relay_rejoin.c: REJOIN, the rejoiner's snapshot, uploads from connected slots.
void ls_relay_send_rejoined_(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint32_t k);
void ls_relay_on_rejoin_(ls_relay *r, session_st *s, uint32_t id, const ls_net_addr *from,
                         const ls_net_msg *m, uint64_t now);
void ls_relay_on_state_chunk_(ls_relay *r, session_st *s, uint32_t id, uint32_t k,
                              const ls_net_msg *m);
void ls_relay_peer_state_(ls_relay *r, session_st *s, uint32_t id, uint32_t j, uint64_t now);
void ls_relay_on_state_ack_(ls_relay *r, session_st *s, uint32_t id, uint32_t j,
                            const ls_net_msg *m);
void ls_relay_on_state_proof_(ls_relay *r, session_st *s, uint32_t id, uint32_t j,
                              const ls_net_msg *m, uint64_t now);

// relay_spectator.c: the history, spectators' datagrams and timers.
uint32_t ls_relay_hist_base_(const session_st *s);
void ls_relay_poll_spectator_(ls_relay *r, session_st *s, uint32_t id, uint32_t index,
                              uint64_t now);
void ls_relay_on_spectator_datagram_(ls_relay *r, session_st *s, const ls_net_header *h,
                                     const ls_net_addr *from, const uint8_t *data, size_t len,
                                     uint64_t now);
bool ls_relay_sealed_by_spectator_(const session_st *s, const uint8_t *data, size_t len);

#endif
