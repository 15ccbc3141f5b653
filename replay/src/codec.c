// SPDX-License-Identifier: MIT
// Replay codecs: varints, per-tick input deltas and keyframe zero runs.
// Hand-written instead of zstd: held keys make most ticks identical to the
// previous one, so "repeat N frames" tokens plus XOR deltas already cost well
// under a byte per player per tick, with no dependency and a tiny, fuzzable decoder.
#include "replay_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ls_replay_buf_reserve_(ls_replay_buf *b, size_t n)
{
    if (b->cap - b->len >= n) {
        return true;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n) {
        cap *= 2;
    }
    uint8_t *p = realloc(b->data, cap);
    if (!p) {
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void ls_replay_buf_put_(ls_replay_buf *b, const void *p, size_t n)
{
    if (n) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    }
}

void ls_replay_buf_put_varint_(ls_replay_buf *b, uint32_t v)
{
    while (v >= 0x80) {
        b->data[b->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->data[b->len++] = (uint8_t)v;
}

void ls_replay_buf_free_(ls_replay_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

bool ls_replay_get_varint_(const uint8_t *p, size_t len, size_t *pos, uint32_t *v)
{
    uint64_t acc = 0;
    for (unsigned i = 0; i < 5; i++) {
        if (*pos >= len) {
            return false;
        }
        uint8_t byte = p[(*pos)++];
        acc |= (uint64_t)(byte & 0x7F) << (7 * i);
        if (!(byte & 0x80)) {
            // Minimal encoding only: one value, one byte string (canonical files).
            if ((i > 0 && byte == 0) || acc > UINT32_MAX) {
                return false;
            }
            *v = (uint32_t)acc;
            return true;
        }
    }
    return false;
}

bool ls_replay_encode_frame_delta_(ls_replay_buf *b, const uint8_t *prev, const uint8_t *cur,
                                   size_t n)
{
    size_t mask_len = (n + 7) / 8;
    if (!ls_replay_buf_reserve_(b, mask_len + n)) {
        return false;
    }
    uint8_t *mask = b->data + b->len;
    memset(mask, 0, mask_len);
    b->len += mask_len;
    for (size_t i = 0; i < n; i++) {
        uint8_t d = (uint8_t)(prev[i] ^ cur[i]);
        if (d) {
            mask[i / 8] = (uint8_t)(mask[i / 8] | (1u << (i % 8)));
            b->data[b->len++] = d;
        }
    }
    return true;
}

static bool apply_delta(const uint8_t *enc, size_t enc_len, size_t *pos, uint8_t *frame, size_t n,
                        char *why, size_t why_size)
{
    size_t mask_len = (n + 7) / 8;
    if (enc_len - *pos < mask_len) {
        snprintf(why, why_size, "change mask runs past the end of the inputs");
        return false;
    }
    const uint8_t *mask = enc + *pos;
    *pos += mask_len;
    bool any = false;
    for (size_t i = 0; i < mask_len * 8; i++) {
        if (!(mask[i / 8] & (1u << (i % 8)))) {
            continue;
        }
        if (i >= n) {
            snprintf(why, why_size, "change mask names byte %zu of a %zu-byte frame", i, n);
            return false;
        }
        if (*pos >= enc_len || enc[*pos] == 0) {
            snprintf(why, why_size, "%s",
                     *pos >= enc_len ? "delta bytes run past the end"
                                     : "zero delta byte (not canonical)");
            return false;
        }
        frame[i] ^= enc[(*pos)++];
        any = true;
    }
    if (!any) {
        snprintf(why, why_size, "empty change mask (not canonical)");
    }
    return any;
}

bool ls_replay_decode_inputs_(const uint8_t *enc, size_t enc_len, uint32_t count, size_t frame_size,
                              uint8_t *frames, uint32_t *bad_tick, char *why, size_t why_size)
{
    size_t pos = 0;
    uint32_t done = 0;
    uint8_t *prev = NULL; // NULL: the all-zero frame before the chunk
    while (done < count) {
        uint32_t v;
        *bad_tick = done;
        if (!ls_replay_get_varint_(enc, enc_len, &pos, &v)) {
            snprintf(why, why_size, "bad or missing run token at input byte %zu", pos);
            return false;
        }
        uint32_t run = v >> 1, changed = v & 1;
        if (v == 0 || run > count - done || (changed && run == count - done)) {
            snprintf(why, why_size, "run of %u ticks%s exceeds the chunk's %u ticks", run,
                     changed ? " plus a change" : "", count);
            return false;
        }
        if (!changed && run != count - done) {
            // Only the chunk's last item may be a bare run: one encoding per input sequence.
            snprintf(why, why_size, "a run without a change before the chunk's end");
            return false;
        }
        for (uint32_t i = 0; i < run; i++, done++) {
            uint8_t *f = frames + (size_t)done * frame_size;
            prev ? memcpy(f, prev, frame_size) : memset(f, 0, frame_size);
            prev = f;
        }
        if (changed) {
            uint8_t *f = frames + (size_t)done * frame_size;
            prev ? memcpy(f, prev, frame_size) : memset(f, 0, frame_size);
            *bad_tick = done;
            if (!apply_delta(enc, enc_len, &pos, f, frame_size, why, why_size)) {
                return false;
            }
            prev = f;
            done++;
        }
    }
    if (pos != enc_len) {
        *bad_tick = count ? count - 1 : 0;
        snprintf(why, why_size, "%zu unused bytes after the last tick's inputs", enc_len - pos);
        return false;
    }
    return true;
}

// Zero runs: items (varint literal length, literal bytes, varint zero-run
// length) until n bytes are produced. A run of fewer than 3 zeros stays literal.
bool ls_replay_zrle_encode_(ls_replay_buf *b, const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t lit = i;
        while (lit < n) {
            if (p[lit] != 0) {
                lit++;
                continue;
            }
            size_t z = lit;
            while (z < n && p[z] == 0) {
                z++;
            }
            if (z - lit >= 3 || z == n) {
                break;
            }
            lit = z;
        }
        size_t zero = lit;
        while (zero < n && p[zero] == 0) {
            zero++;
        }
        if (!ls_replay_buf_reserve_(b, 10 + (lit - i))) {
            return false;
        }
        ls_replay_buf_put_varint_(b, (uint32_t)(lit - i));
        ls_replay_buf_put_(b, p + i, lit - i);
        ls_replay_buf_put_varint_(b, (uint32_t)(zero - lit));
        i = zero;
    }
    return true;
}

bool ls_replay_zrle_decode_(const uint8_t *enc, size_t enc_len, uint8_t *out, size_t n, char *why,
                            size_t why_size)
{
    size_t pos = 0, done = 0;
    while (done < n) {
        uint32_t lit, zero;
        if (!ls_replay_get_varint_(enc, enc_len, &pos, &lit)) {
            snprintf(why, why_size, "bad literal length at keyframe byte %zu", pos);
            return false;
        }
        if (lit > n - done || lit > enc_len - pos) {
            snprintf(why, why_size, "literal of %u bytes overruns the keyframe at byte %zu", lit,
                     pos);
            return false;
        }
        if (out) {
            memcpy(out + done, enc + pos, lit);
        }
        pos += lit;
        done += lit;
        if (!ls_replay_get_varint_(enc, enc_len, &pos, &zero)) {
            snprintf(why, why_size, "bad zero-run length at keyframe byte %zu", pos);
            return false;
        }
        if (zero > n - done || (lit == 0 && zero == 0)) {
            snprintf(why, why_size, "zero run of %u bytes %s at keyframe byte %zu", zero,
                     zero ? "overruns the keyframe" : "after an empty literal", pos);
            return false;
        }
        if (out) {
            memset(out + done, 0, zero);
        }
        done += zero;
    }
    if (pos != enc_len) {
        snprintf(why, why_size, "%zu unused bytes after the keyframe data", enc_len - pos);
        return false;
    }
    return true;
}

// The relay's rule (SPEC.md §17.7): the value reported by more players than any
// other is agreed; when several values tie for the most, the tick is disputed and
// the lowest player holding a tied value gives the recorded checksum.
bool ls_replay_claims_tied_(uint16_t reported, const uint64_t *claims, uint32_t players,
                            uint64_t recorded, uint64_t *top, bool *ok)
{
    uint32_t best = 0, of_recorded = 0;
    bool tied = false;
    *top = 0;
    for (uint32_t p = 0; p < players; p++) {
        if (!((uint32_t)reported >> p & 1u)) {
            continue;
        }
        uint32_t c = 0;
        for (uint32_t q = 0; q < players; q++) {
            c += ((uint32_t)reported >> q & 1u) && claims[q] == claims[p] ? 1u : 0u;
        }
        of_recorded += claims[p] == recorded;
        if (c > best) {
            best = c;
            *top = claims[p];
            tied = false;
        } else if (c == best && claims[p] != *top) {
            tied = true;
        }
    }
    if (ok) {
        // Not tied: the one top value. Tied: any value with the top count.
        *ok = of_recorded > 0 && of_recorded == best;
    }
    return tied;
}
