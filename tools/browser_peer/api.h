// SPDX-License-Identifier: MIT
// The browser peer's exports (tools/browser_peer/api.c; peer.js wraps them).
// 64-bit values cross to JavaScript as BigInt; times are microseconds of the
// caller's monotonic clock.
#ifndef LS_BROWSER_PEER_API_H
#define LS_BROWSER_PEER_API_H

#include <stdint.h>

/// Bytes for the caller to fill (a scene, a credential, a received message); bp_free them.
uint8_t *bp_alloc(uint32_t size);
void bp_free(uint8_t *p);
/// Why the last bp_create failed (NUL-terminated).
const char *bp_error(void);
/// Drop the peer, its world and scene (bp_create calls it first).
void bp_destroy(void);
/// Create the peer from a scene's text and a player credential's text (as `lockstep
/// relay` writes it). rollback: 1 rollback mode, 0 lockstep; max_prediction: the
/// rollback window (as `lockstep bot --max-prediction`, 0..64); seed: the bot's seed
/// (as `lockstep bot --seed`); bot: 1 the soccer bot (or the push script) plays our
/// slot, 0 bp_set_input does; a spectator credential makes a spectator (bp_spectator).
/// first_seq: ls_peer_def.first_seq, the number of our first datagram (0: 1), from the
/// clock so that a page loaded again numbers above its previous load (SPEC.md §17.3);
/// restarted: 1 when a previous load of this page may hold the slot (ls_peer_def.restarted:
/// silent for the session's timeout after WELCOME, then rejoin, SPEC.md §17.10).
/// 0 on success, -1 with bp_error() saying why.
int32_t bp_create(const char *scene, uint32_t scene_len, const char *cred, uint32_t cred_len,
                  uint32_t rollback, uint32_t max_prediction, uint32_t seed, uint32_t bot,
                  uint64_t first_seq, uint32_t restarted);
/// One binary WebSocket message from the relay (bad bytes are counted, never fatal).
void bp_receive(const uint8_t *data, uint32_t len, uint64_t now_us);
/// Run the peer's timers and advance every tick it can (ls_peer_poll).
void bp_poll(uint64_t now_us);
/// Say goodbye to the relay (ls_peer_leave); drain the datagrams, then close.
void bp_leave(void);
/// The next datagram to send, as one binary message: its length (0: none), its bytes
/// at bp_datagram() until the next call.
uint32_t bp_next_datagram(void);
const uint8_t *bp_datagram(void);
/// Our input byte (soccer: LS_INPUT_* bits) from now on; bot 1 hands our slot back to
/// the bot, 0 takes it from the bot.
void bp_set_input(uint32_t input, uint32_t bot);
/// ls_peer_state, or a spectator's ls_spectator_state (-1: neither).
int32_t bp_state(void);
/// Our slot (from the credential; a spectator: its index).
uint32_t bp_slot(void);
/// 1 when the credential was a spectator's: the module watches (ls_spectator: it
/// simulates the relay's final ticks and checks the agreed checksums) and plays nothing.
uint32_t bp_spectator(void);
/// Ticks simulated (rollback: including predicted ones).
uint32_t bp_ticks(void);
/// Every slot's input is confirmed below this tick.
uint32_t bp_confirmed(void);
/// The checksum of the last tick sent to the relay (ls_peer_last_checksum).
uint64_t bp_checksum(void);
/// The world's checksum now (the predicted world in rollback mode).
uint64_t bp_world_checksum(void);
/// WELCOME's session parameters: 0 slots, 1 input size, 2 delay, 3 tick rate, 4 ticks.
uint32_t bp_session(uint32_t what);
/// Counter `what` of ls_peer_stats (the order of STATS in peer.js), 0 beyond; a
/// spectator has packets, bytes and dropped, and its mismatches as `desyncs`.
uint64_t bp_stat(uint32_t what);
/// Times event `type` (ls_peer_event_type) happened.
uint32_t bp_events(uint32_t type);
/// Soccer: goals of team 0 or 1 in the world as this peer has it (0 in other games).
int32_t bp_score(uint32_t team);
/// Bodies in the world (file order, as the scene lists them).
uint32_t bp_body_count(void);
/// Body `index`'s position and orientation as Q16.16 integers into out[0..6] (x y z,
/// then the quaternion w x y z); false beyond the bodies.
int32_t bp_body_pose(uint32_t index, int32_t *out);
/// The scene's player body index of slot `slot` (-1: none).
int32_t bp_player_body(uint32_t slot);
/// Bench (make bench-browser-peer): `ticks` ticks of the scene from tick 0, every
/// player driven by a soccer bot (seed 1), as `ls_game_tick` runs them in a match;
/// scalar 1 forces the solver's scalar path (LS_SIMD_SCALAR). The final checksum
/// (0: the scene does not parse). The same code natively (bench_native.c).
uint64_t bp_bench(const char *scene, uint32_t scene_len, uint32_t ticks, uint32_t scalar);

#endif
