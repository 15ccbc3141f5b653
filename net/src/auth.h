// SPDX-License-Identifier: MIT
// Private: the tag computation shared by the relay and the peer (no
// sodium_init per datagram: their create functions initialise libsodium), the
// receive-side replay window, and key generation.
#ifndef LS_NET_AUTH_PRIVATE_H
#define LS_NET_AUTH_PRIVATE_H

#include "ls/net_auth.h"

/// Sequence numbers a receiver remembers behind the newest one (SPEC.md §17.3).
#define LS_NET_REPLAY_WINDOW 1024

/// Receive-side replay window: the newest sequence number accepted and one bit per
/// sequence number in (newest - LS_NET_REPLAY_WINDOW, newest].
typedef struct ls_net_replay {
    uint64_t newest;                          // 0: nothing accepted yet
    uint64_t seen[LS_NET_REPLAY_WINDOW / 64]; // bit seq % WINDOW
} ls_net_replay;

/// What the window says about a sequence number.
typedef enum ls_net_fresh {
    LS_NET_FRESH = 0,    // never seen and inside or ahead of the window
    LS_NET_REPLAYED = 1, // seen already
    LS_NET_STALE = 2,    // too far behind the newest to tell: dropped
} ls_net_fresh;

/// libsodium is ready (idempotent, thread-safe); false if it cannot start.
bool ls_net_auth_init_(void);
/// Tag of datagram[0, len - TAG) into datagram[len - TAG, len) (header already encoded).
void ls_net_auth_seal_(uint8_t *datagram, size_t len, const uint8_t *key, ls_net_dir dir);
/// Constant-time check of the tag; len >= LS_NET_OVERHEAD and the header decoded.
bool ls_net_auth_verify_(const uint8_t *datagram, size_t len, const uint8_t *key, ls_net_dir dir);
/// A fresh random key.
void ls_net_auth_new_key_(uint8_t key[LS_NET_KEY_SIZE]);
/// Zero secret bytes.
void ls_net_auth_wipe_(void *p, size_t n);

/// Classify seq (never changes the window).
ls_net_fresh ls_net_replay_check_(const ls_net_replay *w, uint64_t seq);
/// Record seq as seen (after its tag verified and ls_net_replay_check_ said FRESH).
void ls_net_replay_accept_(ls_net_replay *w, uint64_t seq);

#endif
