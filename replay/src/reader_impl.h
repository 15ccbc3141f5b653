// SPDX-License-Identifier: MIT
// Private: the reader's tables, shared by the reader, cursors and the verifier.
#ifndef LS_REPLAY_READER_IMPL_H
#define LS_REPLAY_READER_IMPL_H

#include "replay_format.h"

/// A tick chunk found by the scan.
typedef struct lsr_chunk {
    uint64_t offset;  ///< Offset of the chunk header.
    uint32_t first;   ///< First tick.
    uint32_t count;   ///< Ticks.
    uint32_t enc_len; ///< Bytes of encoded inputs (they start at offset + 36).
} lsr_chunk;

/// A keyframe chunk found by the scan.
typedef struct lsr_keyframe {
    uint64_t offset;   ///< Offset of the chunk header.
    uint32_t tick;     ///< State after this many ticks.
    uint32_t size;     ///< Decoded bytes.
    uint32_t encoding; ///< LSR_KEYF_RAW or LSR_KEYF_ZERO_RUNS.
    uint32_t data_len; ///< Encoded bytes (they start at offset + 40).
} lsr_keyframe;

/// A signature chunk found by the scan.
typedef struct lsr_signature {
    uint64_t offset; ///< Offset of the SIGN chunk = bytes it covers.
    uint32_t ticks;  ///< Ticks recorded before it.
    uint8_t signature[LS_REPLAY_SIGNATURE_SIZE];
} lsr_signature;

struct ls_replay_reader {
    uint8_t *data;
    size_t size;
    ls_replay_header header;
    ls_replay_info info;
    size_t frame_size; ///< players * input_size
    lsr_chunk *chunks;
    uint32_t nchunks, cap_chunks;
    lsr_keyframe *keyframes;
    uint32_t nkeyframes, cap_keyframes;
    lsr_signature *signatures;
    uint32_t nsignatures, cap_signatures;
};

/// Index of the chunk holding `tick` (tick < ticks).
uint32_t lsr_find_chunk(const ls_replay_reader *r, uint32_t tick);

#endif
