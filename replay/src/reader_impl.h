// SPDX-License-Identifier: MIT
// Private: the reader's tables, shared by the reader, cursors and the verifier.
#ifndef LS_REPLAY_READER_IMPL_H
#define LS_REPLAY_READER_IMPL_H

#include "replay_format.h"

/// A tick chunk found by the scan.
typedef struct ls_replay_chunk_entry {
    uint64_t offset;  ///< Offset of the chunk header.
    uint32_t first;   ///< First tick.
    uint32_t count;   ///< Ticks.
    uint32_t enc_len; ///< Bytes of encoded inputs (they start at offset + 36).
} ls_replay_chunk_entry;

/// A keyframe chunk found by the scan.
typedef struct ls_replay_keyframe_entry {
    uint64_t offset;   ///< Offset of the chunk header.
    uint32_t tick;     ///< State after this many ticks.
    uint32_t size;     ///< Decoded bytes.
    uint32_t encoding; ///< LSR_KEYF_RAW or LSR_KEYF_ZERO_RUNS.
    uint32_t data_len; ///< Encoded bytes (they start at offset + 40).
} ls_replay_keyframe_entry;

/// A signature chunk found by the scan.
typedef struct ls_replay_signature_entry {
    uint64_t offset; ///< Offset of the SIGN chunk = bytes it covers.
    uint32_t ticks;  ///< Ticks recorded before it.
    uint8_t signature[LS_REPLAY_SIGNATURE_SIZE];
} ls_replay_signature_entry;

/// A tick with claims (format version 2), found by the scan.
typedef struct ls_replay_claim_entry {
    uint32_t tick;      ///< The tick.
    uint16_t reported;  ///< Bit per player that reported a claim.
    bool disputed;      ///< Flags bit 0.
    uint64_t values_at; ///< Offset of its first u64 claim in the file.
} ls_replay_claim_entry;

/// A CLMS chunk found by the scan (checked against the version-2 index).
typedef struct ls_replay_clms_entry {
    uint64_t offset;  ///< Offset of the chunk header.
    uint32_t first;   ///< First tick (its TICK chunk's).
    uint32_t entries; ///< Claimed ticks in it.
} ls_replay_clms_entry;

struct ls_replay_reader {
    uint8_t *data;
    size_t size;
    ls_replay_header header;
    ls_replay_info info;
    size_t frame_size; ///< players * input_size
    ls_replay_chunk_entry *chunks;
    uint32_t nchunks, cap_chunks;
    ls_replay_keyframe_entry *keyframes;
    uint32_t nkeyframes, cap_keyframes;
    ls_replay_signature_entry *signatures;
    uint32_t nsignatures, cap_signatures;
    ls_replay_claim_entry *claims; ///< Every readable claimed tick, in tick order.
    uint32_t nclaims, cap_claims;
    ls_replay_clms_entry *clms;
    uint32_t nclms, cap_clms;
};

/// Index of the chunk holding `tick` (tick < ticks).
uint32_t ls_replay_find_chunk_(const ls_replay_reader *r, uint32_t tick);

/// Index of the first claimed tick at or after `tick` (r->nclaims: none), by binary search
/// over the claims, which are in tick order.
uint32_t ls_replay_claims_from_(const ls_replay_reader *r, uint32_t tick);

#endif
