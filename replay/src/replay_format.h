// SPDX-License-Identifier: MIT
// Private: byte layout of replay files (SPEC.md "Replay files") and the codecs
// shared by the recorder and the reader.
#ifndef LS_REPLAY_FORMAT_H
#define LS_REPLAY_FORMAT_H

#include "ls/replay.h"

/// File magic: "LSRP" then CR LF SUB LF (catches text-mode and 7-bit mangling,
/// as PNG does).
#define LSR_MAGIC      "LSRP\r\n\x1a\n"
#define LSR_MAGIC_SIZE 8
/// Fixed part of the header, before the fingerprint.
#define LSR_HEADER_FIXED 56
/// Scene hash + header check after the scene.
#define LSR_HEADER_TAIL 16
/// Chunk header: tag, payload length, first tick, tick count, payload check,
/// header check.
#define LSR_CHUNK_HEADER 32
/// Trailer after the index chunk: index offset, magic.
#define LSR_TRAILER_SIZE  16
#define LSR_TRAILER_MAGIC "LSRPEND\n"
/// Largest chunk payload.
#define LSR_MAX_PAYLOAD (LS_REPLAY_MAX_KEYFRAME + 64u)
/// Largest decoded inputs of one chunk (ticks * players * input_size).
#define LSR_MAX_CHUNK_FRAMES (4u << 20)
/// Largest file the reader loads.
#define LSR_MAX_FILE ((uint64_t)1 << 30)

/// Chunk tags, as little-endian u32 of their ASCII names.
#define LSR_TAG_TICK 0x4B434954u ///< "TICK"
#define LSR_TAG_KEYF 0x4659454Bu ///< "KEYF"
#define LSR_TAG_INDX 0x58444E49u ///< "INDX"
#define LSR_TAG_SIGN 0x4E474953u ///< "SIGN"
#define LSR_TAG_CLMS 0x534D4C43u ///< "CLMS" (format version 2)

/// CLMS: u32 entry count, then per claimed tick u32 tick, u16 reported mask, u16 flags
/// and a u64 claim per reported player.
#define LSR_CLMS_HEAD  4u
#define LSR_CLMS_ENTRY 8u
/// CLMS entry flag: the tick was disputed (the top value was tied).
#define LSR_CLMS_DISPUTED 1u
/// INDX of version 2: after the version-1 tables, u32 CLMS chunks, u32 claimed ticks,
/// then per CLMS chunk u64 offset, u32 first tick, u32 entries.
#define LSR_INDX_CLAIMS_HEAD 8u

/// Header flag: the file is signed; the header carries the Ed25519 public key.
#define LSR_FLAG_SIGNED 1u
/// SIGN payload: u64 offset of the SIGN chunk (= bytes covered), signature.
#define LSR_SIGN_PAYLOAD (8u + LS_REPLAY_SIGNATURE_SIZE)

/// Keyframe encodings.
#define LSR_KEYF_RAW             0u
#define LSR_KEYF_ZERO_RUNS       1u
#define LSR_KEYF_DELTA_ZERO_RUNS 2u ///< XOR with the previous keyframe, then zero runs
/// Most delta keyframes in a row (the recorder writes a whole one every 16).
#define LSR_MAX_DELTA_CHAIN      63u
#define LSR_RECORDER_DELTA_CHAIN 15u

/// A growable byte buffer (recorder side).
typedef struct ls_replay_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} ls_replay_buf;

/// Make room for n more bytes; false when out of memory.
bool ls_replay_buf_reserve_(ls_replay_buf *b, size_t n);
/// Append n bytes (space must be reserved).
void ls_replay_buf_put_(ls_replay_buf *b, const void *p, size_t n);
/// Append a LEB128 varint (space must be reserved: 5 bytes).
void ls_replay_buf_put_varint_(ls_replay_buf *b, uint32_t v);
/// Free the buffer.
void ls_replay_buf_free_(ls_replay_buf *b);

/// Read a LEB128 varint of at most 5 bytes (value < 2^32, minimal encoding) at
/// *pos; false when malformed or past end.
bool ls_replay_get_varint_(const uint8_t *p, size_t len, size_t *pos, uint32_t *v);

/// Encode one changed frame into b: mask of ceil(n/8) bytes, then the nonzero
/// XOR bytes in order. Reserves its own space; false when out of memory.
bool ls_replay_encode_frame_delta_(ls_replay_buf *b, const uint8_t *prev, const uint8_t *cur,
                                   size_t n);

/// Decode a chunk's input stream into frames (count * frame_size bytes; the
/// frame before the first is all zero). On error returns false and writes the
/// tick (relative to the chunk) and what is wrong into why.
bool ls_replay_decode_inputs_(const uint8_t *enc, size_t enc_len, uint32_t count, size_t frame_size,
                              uint8_t *frames, uint32_t *bad_tick, char *why, size_t why_size);

/// The claims' verdict on themselves: true when the top value (most reports) is
/// tied, i.e. the tick is disputed. *top gets the top value of the lowest player
/// holding one (the relay's choice). `ok` (may be NULL) tells whether `recorded` is
/// acceptable: the top value, or any tied top value when disputed.
bool ls_replay_claims_tied_(uint16_t reported, const uint64_t *claims, uint32_t players,
                            uint64_t recorded, uint64_t *top, bool *ok);

/// Zero-run encoding of a keyframe into b (see SPEC). False when out of memory.
bool ls_replay_zrle_encode_(ls_replay_buf *b, const uint8_t *p, size_t n);
/// Decode zero runs into out (exactly n bytes; out may be NULL to only
/// validate). On error returns false and writes why.
bool ls_replay_zrle_decode_(const uint8_t *enc, size_t enc_len, uint8_t *out, size_t n, char *why,
                            size_t why_size);

#endif
