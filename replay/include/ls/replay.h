// SPDX-License-Identifier: MIT
/// @file
/// Replays: self-contained, versioned, crash-safe match recordings (SPEC.md
/// "Replay files"). The module knows nothing about physics: the scene, each
/// tick's inputs and the keyframes (state snapshots) are opaque bytes, and the
/// verifier re-simulates through callbacks the caller supplies.
///
/// Recording from a long-running process (e.g. the relay):
///
///     ls_replay_recorder_def def = ls_default_replay_recorder_def();
///     def.tick_rate = 60;
///     def.players = 4;
///     def.input_size = 1;
///     def.fingerprint = ls_game_fingerprint(); // what the bits depend on (ls/game.h)
///     def.scene = scene_text;
///     def.scene_size = scene_len;
///     ls_error err;
///     ls_replay_recorder *rec = ls_replay_recorder_create("match.lsr", &def, &err);
///     // per agreed tick t (0, 1, ...): all players' inputs, player p's at
///     // inputs + p * input_size, and the checksum of the state after tick t
///     if (ls_replay_recorder_append(rec, inputs, checksum) != LS_OK)
///         log(ls_replay_recorder_error(rec)->message);
///     // optional, when ls_replay_recorder_keyframe_due(rec): add_keyframe(rec, snapshot, n)
///     // a chunk is written (one fwrite + fflush) every def.chunk_ticks ticks
///     ls_replay_recorder_finish(rec);  // last chunk + index + trailer: complete
///     ls_replay_recorder_destroy(rec); // without finish: everything appended stays readable
///
/// A relay that compares the players' checksums also records what each player
/// claimed at the ticks where they disagreed (def.claims, then
/// ls_replay_recorder_claims before that tick's append): such a file is format
/// version 2, and re-simulation names the players whose claim was wrong.
///
/// Reading: ls_replay_reader_open (validates every chunk), then a cursor per
/// thread for inputs and checksums, ls_replay_reader_keyframe for snapshots,
/// ls_replay_reader_claims for a tick's claims.
/// Verifying: ls_replay_verify_segments with an ls_replay_sim. A recorder is
/// used by one thread; a reader may be shared by any number of cursors/threads.
#ifndef LS_REPLAY_H
#define LS_REPLAY_H

#include "ls/base.h"

LS_EXTERN_C_BEGIN

/// Newest replay format version (SPEC.md "Replay files"). This build reads versions 1
/// and 2; the recorder writes 2 only for recordings with claims (def.claims), else 1.
#define LS_REPLAY_FORMAT_VERSION 2
/// The format version of recordings with claims (CLMS chunks).
#define LS_REPLAY_FORMAT_VERSION_CLAIMS 2
/// Most players in a recording with claims (the claim mask has 16 bits, like the relay's slots).
#define LS_REPLAY_MAX_CLAIM_PLAYERS 16
/// Longest build fingerprint, bytes (without NUL).
#define LS_REPLAY_FINGERPRINT_MAX 255
/// Most players in a replay.
#define LS_REPLAY_MAX_PLAYERS 64
/// Largest input per player per tick, bytes.
#define LS_REPLAY_MAX_INPUT_SIZE 64
/// Largest embedded scene, bytes.
#define LS_REPLAY_MAX_SCENE (16u << 20)
/// Largest keyframe (decoded), bytes.
#define LS_REPLAY_MAX_KEYFRAME (16u << 20)
/// Most ticks in one chunk.
#define LS_REPLAY_MAX_CHUNK_TICKS 4096u
/// Size of the message buffers used by this module.
#define LS_REPLAY_MESSAGE_MAX 256
/// Bytes of an Ed25519 public key (signed recordings, SPEC.md §16.11).
#define LS_REPLAY_PUBLIC_KEY_SIZE 32
/// Bytes of an Ed25519 signature.
#define LS_REPLAY_SIGNATURE_SIZE 64

/// Signs a recording while it is written (SPEC.md §16.11). The replay module
/// has no cryptography of its own: ls/replay_sign.h makes one with libsodium.
typedef struct ls_replay_signer {
    void *user;                                    ///< Passed to the callbacks.
    uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE]; ///< Written into the header.
    /// Every byte the recorder writes, in file order.
    void (*absorb)(void *user, const uint8_t *bytes, size_t n);
    /// Sign the bytes absorbed so far (their count is `covered`); false on failure.
    bool (*sign)(void *user, uint64_t covered, uint8_t signature[LS_REPLAY_SIGNATURE_SIZE]);
} ls_replay_signer;

/// Recorder settings. Start from ls_default_replay_recorder_def().
typedef struct ls_replay_recorder_def {
    uint32_t tick_rate;             ///< Ticks per second (1..1000), informative for players.
    uint32_t players;               ///< Players (1..LS_REPLAY_MAX_PLAYERS).
    uint32_t input_size;            ///< Bytes per player per tick (1..LS_REPLAY_MAX_INPUT_SIZE).
    uint32_t keyframe_interval;     ///< Intended ticks between keyframes (0: none).
    uint32_t chunk_ticks;           ///< Ticks per chunk (1..LS_REPLAY_MAX_CHUNK_TICKS), default 60.
    uint64_t seed;                  ///< Seed of the scripted input stream (0 for live matches).
    const char *fingerprint;        ///< Build fingerprint text (1..255 bytes, printable ASCII).
    const uint8_t *scene;           ///< Initial scene, opaque bytes (embedded in the header).
    size_t scene_size;              ///< Bytes of scene (0..LS_REPLAY_MAX_SCENE).
    uint16_t engine_version[3];     ///< Engine major, minor, patch (default: this library's).
    bool fsync_chunks;              ///< fsync after every chunk (default false: fflush only).
    const ls_replay_signer *signer; ///< Sign after every chunk (NULL: unsigned, the default).
    /// Record the players' claims (ls_replay_recorder_claims): the file is format version 2
    /// and players must be at most LS_REPLAY_MAX_CLAIM_PLAYERS. Default false (version 1).
    bool claims;
} ls_replay_recorder_def;

/// Opaque recorder writing one file.
typedef struct ls_replay_recorder ls_replay_recorder;

/// Defaults: 60 Hz, 1 player, 1 byte, keyframes every 300 ticks, 60-tick chunks.
LS_API ls_replay_recorder_def ls_default_replay_recorder_def(void);
/// Create (truncate) `path` and write the header. NULL on error, with *err (may be
/// NULL) naming the path and the reason.
LS_API ls_replay_recorder *
ls_replay_recorder_create(const char *path, const ls_replay_recorder_def *def, ls_error *err);
/// Append the next tick: all players' inputs (players * input_size bytes) and the
/// 64-bit checksum of the state after the tick. Writes a chunk when one is full.
LS_API ls_result ls_replay_recorder_append(ls_replay_recorder *r, const uint8_t *inputs,
                                           uint64_t checksum);
/// Record the claims of the tick the next ls_replay_recorder_append appends (`tick` must
/// be ls_replay_recorder_ticks(r); at most once per tick; needs def.claims): player p
/// reported the checksum claims[p] when bit p of `reported` is set (claims holds
/// def.players values; the others are ignored). `disputed` says no value had more
/// reports than every other and must agree with the claims. The checksum then
/// appended must be what the claims agree on: the value more players claimed than any
/// other, or for a disputed tick one of the values tied for the most (SPEC.md §16.2
/// CLMS). LS_ERR_INVALID_ARGUMENT otherwise; the claims are written with their tick's
/// chunk.
LS_API ls_result ls_replay_recorder_claims(ls_replay_recorder *r, uint32_t tick, uint16_t reported,
                                           const uint64_t *claims, bool disputed);
/// True when a keyframe is expected now (ticks so far is a positive multiple of the interval).
LS_API bool ls_replay_recorder_keyframe_due(const ls_replay_recorder *r);
/// Record a keyframe: the opaque state after all ticks appended so far. Ends the
/// current chunk first, so a keyframe always sits at a chunk boundary.
LS_API ls_result ls_replay_recorder_add_keyframe(ls_replay_recorder *r, const uint8_t *state,
                                                 size_t size);
/// Write the pending ticks as a chunk now and flush (fsync if def.fsync_chunks).
LS_API ls_result ls_replay_recorder_flush(ls_replay_recorder *r);
/// Ticks appended so far.
LS_API uint32_t ls_replay_recorder_ticks(const ls_replay_recorder *r);
/// Bytes written to the file so far (complete chunks only).
LS_API uint64_t ls_replay_recorder_bytes(const ls_replay_recorder *r);
/// Write pending ticks, the index and the trailer, and flush: the file is complete.
/// Appending after finish is an error.
LS_API ls_result ls_replay_recorder_finish(ls_replay_recorder *r);
/// Close the file and free. Pending ticks are written first; without a prior
/// finish the file has no index (like a crash; readers rebuild it by scanning).
LS_API void ls_replay_recorder_destroy(ls_replay_recorder *r);
/// The last error (code LS_OK and an empty message if none).
LS_API const ls_error *ls_replay_recorder_error(const ls_replay_recorder *r);

/// The decoded header of a replay.
typedef struct ls_replay_header {
    uint16_t format_version;                         ///< Format version of the file.
    uint16_t engine_version[3];                      ///< Engine major, minor, patch.
    char fingerprint[LS_REPLAY_FINGERPRINT_MAX + 1]; ///< Build fingerprint (NUL-terminated).
    uint32_t tick_rate;                              ///< Ticks per second.
    uint32_t players;                                ///< Players.
    uint32_t input_size;                             ///< Bytes per player per tick.
    uint32_t keyframe_interval;                      ///< Intended keyframe interval (0: none).
    uint64_t seed;                                   ///< Seed of the scripted inputs.
    const uint8_t *scene;                            ///< Embedded scene (inside the reader).
    size_t scene_size;                               ///< Bytes of scene.
    uint64_t scene_hash;                             ///< XXH3-64 of the scene bytes.
    uint32_t header_size;                            ///< Bytes of the header section.
    bool is_signed;                                  ///< Signed (SPEC.md §16.11).
    uint8_t public_key[LS_REPLAY_PUBLIC_KEY_SIZE];   ///< The signer's key (if signed).
} ls_replay_header;

/// What a reader found in the file.
typedef struct ls_replay_info {
    uint32_t ticks;                         ///< Readable ticks.
    uint32_t chunks;                        ///< Tick chunks.
    uint32_t keyframes;                     ///< Keyframes.
    uint32_t signatures;                    ///< SIGN chunks (signed files).
    uint32_t signed_ticks;                  ///< Ticks before the last SIGN chunk.
    uint32_t claim_ticks;                   ///< Readable ticks with claims (version 2).
    uint32_t disputed_ticks;                ///< Of those, the disputed ones.
    uint64_t claim_bytes;                   ///< Bytes of CLMS chunks (with chunk headers).
    uint64_t file_size;                     ///< Bytes in the file.
    uint64_t input_bytes;                   ///< Bytes of encoded inputs (all chunks).
    uint64_t checksum_bytes;                ///< Bytes of per-tick checksums.
    uint64_t keyframe_bytes;                ///< Bytes of keyframe chunks (with chunk headers).
    uint64_t overhead_bytes;                ///< Header, chunk headers, index and trailer.
    bool complete;                          ///< Finished with an index and trailer.
    bool indexed;                           ///< The end index was present and matched.
    uint64_t end_offset;                    ///< Offset just past the last complete chunk.
    char end_reason[LS_REPLAY_MESSAGE_MAX]; ///< Why reading stopped early (empty if complete).
} ls_replay_info;

/// A keyframe's place in the file.
typedef struct ls_replay_keyframe_info {
    uint32_t tick;   ///< State after this many ticks.
    uint32_t size;   ///< Decoded bytes.
    uint64_t offset; ///< Byte offset of its chunk.
} ls_replay_keyframe_info;

/// Opaque reader; immutable once open, so cursors on several threads may share it.
typedef struct ls_replay_reader ls_replay_reader;

/// Read a whole file (at most 1 GiB) and open it. NULL on error with *err (may be
/// NULL) filled: code, path, byte offset, tick (or -1) and a message naming the
/// section and offset.
LS_API ls_replay_reader *ls_replay_reader_open(const char *path, ls_error *err);
/// Open a replay in memory. The bytes are copied. NULL on error with *err filled.
/// A file cut inside its last chunk opens: info.complete is false and end_reason says where.
LS_API ls_replay_reader *ls_replay_reader_open_memory(const uint8_t *data, size_t size,
                                                      ls_error *err);
/// Free a reader.
LS_API void ls_replay_reader_destroy(ls_replay_reader *r);
/// The header.
LS_API const ls_replay_header *ls_replay_reader_header(const ls_replay_reader *r);
/// Settings that write a file like the one `h` describes: the same tick rate,
/// players, input size, keyframe interval, seed, fingerprint, scene, engine
/// version and format (claims for version 2; not a signer: a rewritten file is not
/// the original signer's).
/// The strings and scene point into h's reader.
LS_API ls_replay_recorder_def ls_replay_recorder_def_like(const ls_replay_header *h);
/// Sizes, counts and where the file ends.
LS_API const ls_replay_info *ls_replay_reader_info(const ls_replay_reader *r);
/// LS_OK if the file's build fingerprint equals `expected`; else LS_ERR_INCOMPATIBLE
/// with err->offset 56 (the fingerprint's byte) and a message naming both engines
/// when `expected` is a release's fingerprint (SPEC.md §16.8): "build fingerprint at
/// byte 56: recorded by lockstep 0.2 (Solver v2: snapshot LSSN-3, physics solver-v2);
/// this is ..." (then ls_replay_fingerprint_refusal's words), or else both strings.
LS_API ls_result ls_replay_reader_require_fingerprint(const ls_replay_reader *r,
                                                      const char *expected, ls_error *err);

/// The engine behind a build fingerprint (SPEC.md §16.8): the lockstep release
/// that wrote it, from the table of every fingerprint a release wrote, and the
/// fingerprint's own `snapshot=` and `physics=` fields. Strings are "" when absent.
typedef struct ls_replay_engine {
    bool known;        ///< The fingerprint is exactly one a lockstep release wrote.
    char version[16];  ///< That release, "MAJOR.MINOR" (e.g. "0.2"); "" when unknown.
    char solver[16];   ///< Its solver (e.g. "Solver v2"); "" when unknown.
    char snapshot[32]; ///< The `snapshot=` field (e.g. "LSSN-3"); "" when absent.
    char physics[32];  ///< The `physics=` field (e.g. "solver-v2"); "" when absent.
} ls_replay_engine;

/// Which engine wrote `fingerprint` (any string; NULL is an unknown engine).
LS_API ls_replay_engine ls_replay_fingerprint_engine(const char *fingerprint);
/// That engine in words, as snprintf (returns the length it needs): "lockstep 0.2
/// (Solver v2: snapshot LSSN-3, physics solver-v2)"; for a fingerprint no release
/// wrote, "an unknown engine (snapshot S, physics P)" or, without those fields,
/// "an unknown engine (fingerprint '...')".
LS_API size_t ls_replay_fingerprint_describe(const char *fingerprint, char *buf, size_t size);
/// Why a build with fingerprint `expected` cannot verify a recording with
/// fingerprint `recorded`, as snprintf ("" when they are equal): "this is lockstep
/// 0.3 (Solver v3: LSSN-6, solver-v3): its physics differ, so it cannot be verified
/// here; verify it with lockstep 0.2". The reason names the
/// first field that differs (number format, libfixmath, checksum, physics,
/// snapshot layout, game rules); the advice names the recording's release when
/// it is known.
LS_API size_t ls_replay_fingerprint_refusal(const char *recorded, const char *expected, char *buf,
                                            size_t size);
/// Readable ticks.
LS_API uint32_t ls_replay_reader_ticks(const ls_replay_reader *r);
/// The recorded checksum of `tick` (the state after that tick); 0 if out of range.
LS_API uint64_t ls_replay_reader_checksum(const ls_replay_reader *r, uint32_t tick);
/// Keyframe i (0-based, in tick order).
LS_API ls_replay_keyframe_info ls_replay_reader_keyframe_info(const ls_replay_reader *r,
                                                              uint32_t i);
/// Decode keyframe i into buf (at least its size bytes).
LS_API ls_result ls_replay_reader_keyframe(const ls_replay_reader *r, uint32_t i, uint8_t *buf,
                                           size_t size);
/// Index of the last keyframe with tick <= `tick`, or -1 if none.
LS_API int64_t ls_replay_reader_keyframe_at_or_before(const ls_replay_reader *r, uint32_t tick);
/// Index of the first keyframe with tick >= `tick`, or -1 if none.
LS_API int64_t ls_replay_reader_keyframe_at_or_after(const ls_replay_reader *r, uint32_t tick);

/// What the players claimed the checksum of one tick was, when they disagreed
/// (SPEC.md §16.2 CLMS).
typedef struct ls_replay_claims {
    uint32_t tick;     ///< The tick (a claim is the checksum of the state after it).
    uint16_t reported; ///< Bit p: player p reported claims[p].
    bool disputed;     ///< No value had more reports than every other: nobody was named.
    uint64_t claims[LS_REPLAY_MAX_CLAIM_PLAYERS]; ///< Player p's claim (0 if it reported none).
} ls_replay_claims;

/// Re-simulation's verdict on one tick (SPEC.md §16.9).
typedef struct ls_replay_verdict {
    uint32_t tick;     ///< The tick.
    bool disputed;     ///< The claims were tied (the relay named nobody).
    uint16_t reported; ///< Players that reported a claim (bit per player).
    uint16_t wrong;    ///< Players whose claim differs from the re-simulated checksum.
    uint64_t recorded; ///< The recorded checksum.
    uint64_t computed; ///< The re-simulated checksum: the truth the inputs give.
} ls_replay_verdict;

/// Readable ticks with claims.
LS_API uint32_t ls_replay_reader_claims_count(const ls_replay_reader *r);
/// The i-th tick with claims (0-based, in tick order) into *out; LS_ERR_NOT_FOUND past the end.
LS_API ls_result ls_replay_reader_claims_at(const ls_replay_reader *r, uint32_t i,
                                            ls_replay_claims *out);
/// The claims of `tick` into *out; LS_ERR_NOT_FOUND when it has none (its players agreed,
/// or the file is version 1).
LS_API ls_result ls_replay_reader_claims(const ls_replay_reader *r, uint32_t tick,
                                         ls_replay_claims *out);
/// Judge tick `tick` given its re-simulated checksum `computed`: true when the recording
/// is sound there, i.e. computed equals the recorded checksum or, at a tick with claims,
/// one of the claims (a disputed tick records one of the tied claims, which may be the
/// wrong one). *out (may be NULL) gets the verdict; `wrong` names the players whose claim
/// differs (0 at a tick without claims).
LS_API bool ls_replay_reader_judge(const ls_replay_reader *r, uint32_t tick, uint64_t computed,
                                   ls_replay_verdict *out);

/// Opaque cursor: decodes one chunk at a time; one per thread.
typedef struct ls_replay_cursor ls_replay_cursor;

/// Create a cursor over a reader (the reader must outlive it). NULL if out of memory.
LS_API ls_replay_cursor *ls_replay_cursor_create(const ls_replay_reader *r);
/// Free a cursor.
LS_API void ls_replay_cursor_destroy(ls_replay_cursor *c);
/// Inputs (players * input_size bytes, valid until the next read) and checksum of
/// `tick`. Any tick in any order; sequential reads decode each chunk once.
/// LS_ERR_NOT_FOUND past the end.
LS_API ls_result ls_replay_cursor_read(ls_replay_cursor *c, uint32_t tick, const uint8_t **inputs,
                                       uint64_t *checksum);

/// The caller's simulation, driven by the verifier. States are opaque.
typedef struct ls_replay_sim {
    void *user; ///< Passed to every callback.
    /// A state from the scene alone (keyframe NULL, state at tick 0) or from the scene
    /// and a keyframe. NULL on error with *err filled (never NULL here).
    void *(*load)(void *user, const uint8_t *scene, size_t scene_size, const uint8_t *keyframe,
                  size_t keyframe_size, ls_error *err);
    /// Apply `tick`'s inputs, advance one tick, return the checksum of the new state.
    uint64_t (*advance)(void *user, void *state, uint32_t tick, const uint8_t *inputs);
    /// The checksum of a state (used to check keyframes against the recorded checksums).
    uint64_t (*checksum)(void *user, const void *state);
    /// Free a state.
    void (*destroy)(void *user, void *state);
    /// Optional: called about every 256 ticks with the ticks done since the last call.
    void (*progress)(void *user, uint32_t ticks);
    /// Serialise a state as keyframe bytes (what the recorder stored): write them into
    /// buf if they fit and return their size (like snprintf). With it, every keyframe
    /// is proven byte-equal to the state re-simulated up to its tick (SPEC.md §16.9);
    /// without it (NULL) only the keyframe's checksum is compared.
    size_t (*save)(void *user, const void *state, uint8_t *buf, size_t size);
} ls_replay_sim;

/// What went wrong in a verification (kind of the first failure).
typedef enum ls_replay_failure {
    LS_REPLAY_FAIL_NONE = 0,     ///< Verified.
    LS_REPLAY_FAIL_CHECKSUM = 1, ///< The recomputed checksum of a tick differs.
    LS_REPLAY_FAIL_KEYFRAME = 2, ///< A keyframe's state does not match the recorded checksum.
    LS_REPLAY_FAIL_ERROR = 3,    ///< Reading or loading failed (see message).
} ls_replay_failure;

/// Result of verifying ticks [first_tick, end_tick).
typedef struct ls_replay_verify_result {
    ls_replay_failure failure;           ///< Kind of the first failure.
    ls_result code;                      ///< LS_OK, LS_ERR_DESYNC or the error.
    uint32_t first_tick;                 ///< First tick of the range.
    uint32_t end_tick;                   ///< One past the last tick of the range.
    uint32_t ticks_verified;             ///< Ticks whose checksum matched before the failure.
    uint32_t tick;                       ///< Failing tick (keyframes: the keyframe's tick).
    uint64_t recorded;                   ///< Recorded checksum.
    uint64_t computed;                   ///< Recomputed checksum.
    void *state;                         ///< On a checksum failure with keep_state: the
                                         ///< state after the failing tick (caller destroys).
    ls_replay_verdict *verdicts;         ///< One per verified tick with claims, in tick
                                         ///< order (NULL if none): free with
                                         ///< ls_replay_verify_result_release.
    uint32_t verdict_count;              ///< Entries in verdicts.
    char message[LS_REPLAY_MESSAGE_MAX]; ///< Human-readable description.
} ls_replay_verify_result;

/// Free what verification allocated in *res (the verdicts; not a kept state, which is
/// the caller's). Safe on a zeroed or already released result.
LS_API void ls_replay_verify_result_release(ls_replay_verify_result *res);

/// Number of verification segments: one from the scene, one from each keyframe.
LS_API uint32_t ls_replay_segment_count(const ls_replay_reader *r);
/// Tick where segment i starts (0 for the first; else keyframe i-1's tick).
LS_API uint32_t ls_replay_segment_start(const ls_replay_reader *r, uint32_t i);
/// Verify segments [first, end) as one continuous re-simulation: load the state
/// at segment `first` (a keyframe's checksum must be the recorded one), advance
/// through every tick comparing checksums, and prove every keyframe met on the
/// way, including the one that starts segment `end`, byte-equal to the
/// re-simulated state (sim->save). So verifying segments one by one on N threads
/// proves every keyframe a segment starts from, and the first failure in tick
/// order (ties: the lower segment) is exactly the one-job verdict. At a tick with
/// claims the re-simulated checksum may equal a claim instead of the recorded checksum
/// (ls_replay_reader_judge); every such tick verified gets a verdict in
/// result->verdicts (release it). Returns result->code. With keep_state, a checksum
/// failure hands the state to the caller.
LS_API ls_result ls_replay_verify_segments(const ls_replay_reader *r, const ls_replay_sim *sim,
                                           uint32_t first, uint32_t end, bool keep_state,
                                           ls_replay_verify_result *result);

/// The tick of the first difference between two recordings (inputs or checksums),
/// or -1 when the common ticks agree. *why says what differs first.
LS_API int64_t ls_replay_first_difference(const ls_replay_reader *a, const ls_replay_reader *b,
                                          char *why, size_t why_size);

LS_EXTERN_C_END

#endif
