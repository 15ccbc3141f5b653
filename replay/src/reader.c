// SPDX-License-Identifier: MIT
// Replay reader: loads the file into memory, checks the header, then scans
// every chunk (header check, payload check, tick continuity, input and keyframe
// encodings) so that every later access works on validated bytes. A file that
// ends inside a chunk opens with info.complete = false and end_reason set;
// anything else that is wrong is an error naming the byte offset and tick.
// Plain C11 with explicit little-endian decoding: builds for every crosscheck
// target.
#include "ls/hash.h"
#include "reader_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ls_replay_reader *set_err(ls_error *err, ls_result code, uint64_t offset, int64_t tick,
                                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_error_setv(err, code, fmt, ap);
    va_end(ap);
    if (err) {
        err->offset = (int64_t)offset;
        err->tick = tick;
    }
    return NULL;
}

static bool header_truncated(const ls_replay_reader *r, size_t need, ls_error *err)
{
    if (r->size >= need) {
        return false;
    }
    set_err(err, LS_ERR_TRUNCATED, r->size, -1,
            "header truncated: the file has %zu bytes, the header needs %zu", r->size, need);
    return true;
}

static bool printable(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] < 0x20 || p[i] > 0x7E) {
            return false;
        }
    }
    return true;
}

// Magic and version first: a newer file gets "wrong version", not a check-code
// error.
static bool parse_header(ls_replay_reader *r, ls_error *err)
{
    const uint8_t *d = r->data;
    ls_replay_header *h = &r->header;
    size_t m = r->size < LSR_MAGIC_SIZE ? r->size : LSR_MAGIC_SIZE;
    if (memcmp(d, LSR_MAGIC, m) != 0) {
        return set_err(err, LS_ERR_CORRUPT, 0, -1, "not a replay file: bad magic at byte 0");
    }
    if (header_truncated(r, 12, err)) {
        return false;
    }
    h->format_version = ls_get_u16le(d + 8);
    if (h->format_version < 1 || h->format_version > LS_REPLAY_FORMAT_VERSION) {
        return set_err(err, LS_ERR_INCOMPATIBLE, 8, -1,
                       "format version %u at byte 8; this build reads versions 1 to %u",
                       h->format_version, LS_REPLAY_FORMAT_VERSION);
    }
    if (header_truncated(r, LSR_HEADER_FIXED, err)) {
        return false;
    }
    uint32_t flen = ls_get_u32le(d + 48), slen = ls_get_u32le(d + 52);
    uint32_t hsize = ls_get_u32le(d + 12);
    uint16_t flags = ls_get_u16le(d + 10);
    if ((flags & ~LSR_FLAG_SIGNED) != 0 || ls_get_u16le(d + 22) != 0) {
        unsigned at = (flags & ~LSR_FLAG_SIGNED) != 0 ? 10 : 22;
        return set_err(err, LS_ERR_CORRUPT, at, -1,
                       "unknown header flags 0x%04x at byte %u (versions 1 and 2 know 0x0001 at "
                       "byte 10, 0 at byte 22)",
                       ls_get_u16le(d + at), at);
    }
    h->is_signed = (flags & LSR_FLAG_SIGNED) != 0;
    if (flen < 1 || flen > LS_REPLAY_FINGERPRINT_MAX || slen > LS_REPLAY_MAX_SCENE) {
        return set_err(err, LS_ERR_CORRUPT, 48, -1,
                       "header: fingerprint length %u (1..255) or scene length %u (<= 16 MiB) "
                       "at byte 48 out of range",
                       flen, slen);
    }
    size_t key = h->is_signed ? LS_REPLAY_PUBLIC_KEY_SIZE : 0;
    size_t need = (size_t)LSR_HEADER_FIXED + flen + slen + key + LSR_HEADER_TAIL;
    if (hsize != need) {
        return set_err(err, LS_ERR_CORRUPT, 12, -1,
                       "header size %u at byte 12 disagrees with its fields (%zu)", hsize, need);
    }
    if (header_truncated(r, need, err)) {
        return false;
    }
    if (ls_hash64(d, need - 8) != ls_get_u64le(d + need - 8)) {
        return set_err(err, LS_ERR_CORRUPT, need - 8, -1,
                       "header check code mismatch (header bytes 0..%zu, code at byte %zu)",
                       need - 8, need - 8);
    }
    h->scene = d + LSR_HEADER_FIXED + flen;
    h->scene_size = slen;
    if (h->is_signed) {
        memcpy(h->public_key, h->scene + slen, LS_REPLAY_PUBLIC_KEY_SIZE);
    }
    h->scene_hash = ls_get_u64le(d + need - 16);
    if (ls_hash64(h->scene, slen) != h->scene_hash) {
        return set_err(err, LS_ERR_CORRUPT, need - 16, -1, "scene hash mismatch at byte %zu",
                       need - 16);
    }
    for (int i = 0; i < 3; i++) {
        h->engine_version[i] = ls_get_u16le(d + 16 + 2 * i);
    }
    h->tick_rate = ls_get_u32le(d + 24);
    h->players = ls_get_u32le(d + 28);
    h->input_size = ls_get_u32le(d + 32);
    h->keyframe_interval = ls_get_u32le(d + 36);
    h->seed = ls_get_u64le(d + 40);
    h->header_size = hsize;
    if (h->tick_rate < 1 || h->tick_rate > 1000 || h->players < 1 ||
        h->players > LS_REPLAY_MAX_PLAYERS || h->input_size < 1 ||
        h->input_size > LS_REPLAY_MAX_INPUT_SIZE || !printable(d + LSR_HEADER_FIXED, flen)) {
        return set_err(err, LS_ERR_CORRUPT, 24, -1,
                       "header fields out of range: tick_rate %u (1..1000), "
                       "players %u (1..64), "
                       "input_size %u (1..64) or a non-ASCII fingerprint",
                       h->tick_rate, h->players, h->input_size);
    }
    memcpy(h->fingerprint, d + LSR_HEADER_FIXED, flen);
    h->fingerprint[flen] = '\0';
    r->frame_size = (size_t)h->players * h->input_size;
    return true;
}

static bool grow(void **list, uint32_t *cap, uint32_t n, size_t elem)
{
    if (n < *cap) {
        return true;
    }
    uint32_t c = *cap ? *cap * 2 : 64;
    void *p = realloc(*list, c * elem);
    if (!p) {
        return false;
    }
    *list = p;
    *cap = c;
    return true;
}

typedef struct ls_replay_scan {
    uint64_t pos; // offset of the chunk being read
    uint32_t tag, len, first, count;
    const uint8_t *payload;
    uint8_t *scratch; // decoded inputs of one chunk
    size_t scratch_size;
    // A CLMS chunk read and checked, waiting for its TICK chunk (the next chunk).
    bool clms_pending;
    uint64_t clms_pos;
    uint32_t clms_first, clms_count, clms_entries, clms_len;
    const uint8_t *clms_payload;
} ls_replay_scan;

// "TICK chunk at byte 123 (ticks 60..119)", "KEYF chunk at byte 456 (keyframe
// of tick 300)".
static const char *describe(const ls_replay_scan *s, char *buf, size_t size)
{
    unsigned long long at = (unsigned long long)s->pos;
    if (s->tag == LSR_TAG_TICK) {
        snprintf(buf, size, "TICK chunk at byte %llu (ticks %u..%llu)", at, s->first,
                 (unsigned long long)s->first + s->count - 1);
    } else if (s->tag == LSR_TAG_KEYF) {
        snprintf(buf, size, "KEYF chunk at byte %llu (keyframe of tick %u)", at, s->first);
    } else if (s->tag == LSR_TAG_SIGN) {
        snprintf(buf, size, "SIGN chunk at byte %llu (after tick %u)", at, s->first);
    } else if (s->tag == LSR_TAG_CLMS) {
        snprintf(buf, size, "CLMS chunk at byte %llu (claims of ticks %u..%llu)", at, s->first,
                 (unsigned long long)s->first + s->count - 1);
    } else {
        snprintf(buf, size, "INDX chunk at byte %llu (index)", at);
    }
    return buf;
}

static bool scan_tick(ls_replay_reader *r, ls_replay_scan *s, ls_error *err)
{
    ls_replay_info *in = &r->info;
    int64_t first = s->first;
    if (s->first != in->ticks || s->count < 1 || s->count > LS_REPLAY_MAX_CHUNK_TICKS ||
        (uint64_t)s->count * r->frame_size > LSR_MAX_CHUNK_FRAMES ||
        (uint64_t)in->ticks + s->count >= UINT32_MAX) {
        return set_err(err, LS_ERR_CORRUPT, s->pos, first,
                       "TICK chunk at byte %llu holds ticks %u+%u; expected the "
                       "next tick %u and "
                       "1..4096 ticks",
                       (unsigned long long)s->pos, s->first, s->count, in->ticks);
    }
    uint32_t enc = s->len >= 4 ? ls_get_u32le(s->payload) : UINT32_MAX;
    if (enc == UINT32_MAX || (uint64_t)4 + enc + 8ull * s->count != s->len) {
        return set_err(err, LS_ERR_CORRUPT, s->pos, first,
                       "TICK chunk at byte %llu: %u-byte payload cannot hold %u ticks",
                       (unsigned long long)s->pos, s->len, s->count);
    }
    size_t need = (size_t)s->count * r->frame_size;
    if (need > s->scratch_size) {
        uint8_t *p = realloc(s->scratch, need);
        if (!p) {
            return set_err(err, LS_ERR_NO_MEMORY, s->pos, first, "out of memory");
        }
        s->scratch = p;
        s->scratch_size = need;
    }
    uint32_t bad = 0;
    char why[160];
    if (!ls_replay_decode_inputs_(s->payload + 4, enc, s->count, r->frame_size, s->scratch, &bad,
                                  why, sizeof why)) {
        return set_err(err, LS_ERR_CORRUPT, s->pos, first + bad,
                       "inputs of tick %u (TICK chunk at byte %llu): %s", s->first + bad,
                       (unsigned long long)s->pos, why);
    }
    if (!grow((void **)&r->chunks, &r->cap_chunks, r->nchunks, sizeof *r->chunks)) {
        return set_err(err, LS_ERR_NO_MEMORY, s->pos, first, "out of memory");
    }
    r->chunks[r->nchunks++] = (ls_replay_chunk_entry){s->pos, s->first, s->count, enc};
    in->chunks++;
    in->ticks += s->count;
    in->input_bytes += enc;
    in->checksum_bytes += 8ull * s->count;
    in->overhead_bytes += LSR_CHUNK_HEADER + 4;
    return true;
}

static bool scan_keyframe(ls_replay_reader *r, ls_replay_scan *s, ls_error *err)
{
    uint32_t t = r->info.ticks;
    bool order = r->nkeyframes == 0 || r->keyframes[r->nkeyframes - 1].tick < t;
    if (s->first != t || s->count != 0 || t == 0 || !order || s->len < 8) {
        return set_err(err, LS_ERR_CORRUPT, s->pos, s->first,
                       "KEYF chunk at byte %llu for tick %u: expected one keyframe at tick %u "
                       "(after tick 0)",
                       (unsigned long long)s->pos, s->first, t);
    }
    uint32_t size = ls_get_u32le(s->payload), encoding = ls_get_u32le(s->payload + 4);
    char why[160] = "unknown encoding";
    uint32_t chain = 0;
    for (uint32_t i = r->nkeyframes; encoding == LSR_KEYF_DELTA_ZERO_RUNS && i > 0 &&
                                     r->keyframes[i - 1].encoding == LSR_KEYF_DELTA_ZERO_RUNS;
         i--) {
        chain++;
    }
    if (encoding == LSR_KEYF_DELTA_ZERO_RUNS &&
        (r->nkeyframes == 0 || chain >= LSR_MAX_DELTA_CHAIN)) {
        snprintf(why, sizeof why,
                 "a delta keyframe needs a previous keyframe (chain %u of at most %u)", chain,
                 LSR_MAX_DELTA_CHAIN);
        encoding = UINT32_MAX;
    }
    bool ok = size >= 1 && size <= LS_REPLAY_MAX_KEYFRAME &&
              (encoding == LSR_KEYF_RAW ? s->len - 8 == size
               : encoding == LSR_KEYF_ZERO_RUNS || encoding == LSR_KEYF_DELTA_ZERO_RUNS
                   ? ls_replay_zrle_decode_(s->payload + 8, s->len - 8, NULL, size, why, sizeof why)
                   : false);
    if (!ok) {
        return set_err(err, LS_ERR_CORRUPT, s->pos, t,
                       "KEYF chunk at byte %llu (tick %u): size %u, encoding %u: %s",
                       (unsigned long long)s->pos, t, size, encoding, why);
    }
    if (!grow((void **)&r->keyframes, &r->cap_keyframes, r->nkeyframes, sizeof *r->keyframes)) {
        return set_err(err, LS_ERR_NO_MEMORY, s->pos, t, "out of memory");
    }
    r->keyframes[r->nkeyframes++] =
        (ls_replay_keyframe_entry){s->pos, t, size, encoding, s->len - 8};
    r->info.keyframes++;
    r->info.keyframe_bytes += LSR_CHUNK_HEADER + s->len;
    return true;
}

static uint32_t popcount16(uint16_t m)
{
    uint32_t n = 0;
    for (; m; m &= (uint16_t)(m - 1)) {
        n++;
    }
    return n;
}

// One CLMS entry at p (n bytes left): tick, mask, flags and the claims by player.
// False when it does not fit.
static bool claims_entry(const uint8_t *p, size_t n, uint32_t players, uint32_t *tick,
                         uint16_t *mask, uint16_t *flags, uint64_t *claims, size_t *size)
{
    if (n < LSR_CLMS_ENTRY) {
        return false;
    }
    *tick = ls_get_u32le(p);
    *mask = ls_get_u16le(p + 4);
    *flags = ls_get_u16le(p + 6);
    *size = LSR_CLMS_ENTRY + 8u * (size_t)popcount16(*mask);
    if (n < *size) {
        return false;
    }
    const uint8_t *v = p + LSR_CLMS_ENTRY;
    for (uint32_t q = 0; q < LS_REPLAY_MAX_CLAIM_PLAYERS; q++) {
        claims[q] = q < players && ((uint32_t)*mask >> q & 1u) ? ls_get_u64le(v) : 0;
        v += q < players && ((uint32_t)*mask >> q & 1u) ? 8 : 0;
    }
    return true;
}

// A CLMS chunk (format version 2): the claims of some ticks of the TICK chunk
// that must come next. Checked on its own here; kept with that chunk's
// checksums (keep_claims).
static bool scan_claims(ls_replay_reader *r, ls_replay_scan *s, ls_error *err)
{
    ls_replay_info *in = &r->info;
    unsigned long long at = (unsigned long long)s->pos;
    uint32_t players = r->header.players, v = r->header.format_version;
    if (v < LS_REPLAY_FORMAT_VERSION_CLAIMS || players > LS_REPLAY_MAX_CLAIM_PLAYERS) {
        return set_err(err, LS_ERR_CORRUPT, s->pos, in->ticks,
                       "CLMS chunk at byte %llu: claims need format version 2 and at most 16 "
                       "players; the file is version %u with %u players",
                       at, v, players);
    }
    uint32_t n = s->len >= LSR_CLMS_HEAD ? ls_get_u32le(s->payload) : 0;
    if (s->first != in->ticks || s->count < 1 || s->count > LS_REPLAY_MAX_CHUNK_TICKS || n < 1 ||
        n > s->count) {
        return set_err(err, LS_ERR_CORRUPT, s->pos, s->first,
                       "CLMS chunk at byte %llu holds %u claimed ticks of ticks %u+%u; expected "
                       "the next tick %u, 1..4096 ticks and 1 claimed tick or more, at most "
                       "one per tick",
                       at, n, s->first, s->count, in->ticks);
    }
    size_t pos = LSR_CLMS_HEAD;
    uint64_t end = (uint64_t)s->first + s->count;
    for (uint32_t i = 0, prev = 0; i < n; i++) {
        uint32_t tick;
        uint16_t mask, flags;
        uint64_t claims[LS_REPLAY_MAX_CLAIM_PLAYERS], top;
        size_t size;
        if (!claims_entry(s->payload + pos, s->len - pos, players, &tick, &mask, &flags, claims,
                          &size)) {
            return set_err(err, LS_ERR_CORRUPT, s->pos, s->first,
                           "CLMS chunk at byte %llu: claimed tick %u of %u ends past its "
                           "%u-byte payload",
                           at, i + 1, n, s->len);
        }
        const char *why = NULL;
        if (tick < s->first || tick >= end || (i > 0 && tick <= prev)) {
            why = "outside the chunk's ticks or not after the previous claimed tick";
        } else if (mask == 0 || (players < 16 && mask >> players != 0)) {
            why = "its reported mask names no player or one past the players";
        } else if (flags & ~LSR_CLMS_DISPUTED) {
            why = "unknown flags (bit 0, disputed, is the only one)";
        } else if (ls_replay_claims_tied_(mask, claims, players, 0, &top, NULL) !=
                   ((flags & LSR_CLMS_DISPUTED) != 0)) {
            why = flags & LSR_CLMS_DISPUTED
                      ? "marked disputed, but one value has more claims than every other"
                      : "not marked disputed, but the most claimed values are tied";
        }
        if (why) {
            return set_err(err, LS_ERR_CORRUPT, s->pos, tick,
                           "claims of tick %u (CLMS chunk at byte %llu, mask 0x%04x, flags "
                           "0x%04x): %s",
                           tick, at, mask, flags, why);
        }
        pos += size;
        prev = tick;
    }
    if (pos != s->len) {
        return set_err(err, LS_ERR_CORRUPT, s->pos, s->first,
                       "CLMS chunk at byte %llu: %zu bytes left after its %u claimed ticks", at,
                       s->len - pos, n);
    }
    s->clms_pending = true;
    s->clms_pos = s->pos;
    s->clms_first = s->first;
    s->clms_count = s->count;
    s->clms_entries = n;
    s->clms_len = s->len;
    s->clms_payload = s->payload;
    return true;
}

// The TICK chunk after a CLMS chunk is read: each claimed tick's recorded
// checksum must be what its claims agree on (SPEC.md §16.2); then the claims
// join the reader's table.
static bool keep_claims(ls_replay_reader *r, ls_replay_scan *s, ls_error *err)
{
    ls_replay_info *in = &r->info;
    uint32_t players = r->header.players;
    const uint8_t *sums = s->payload + 4 + r->chunks[r->nchunks - 1].enc_len;
    size_t pos = LSR_CLMS_HEAD;
    for (uint32_t i = 0; i < s->clms_entries; i++) {
        uint32_t tick;
        uint16_t mask, flags;
        uint64_t claims[LS_REPLAY_MAX_CLAIM_PLAYERS], top;
        size_t size;
        bool ok = false;
        claims_entry(s->clms_payload + pos, s->clms_len - pos, players, &tick, &mask, &flags,
                     claims, &size);
        uint64_t recorded = ls_get_u64le(sums + 8 * (size_t)(tick - s->first));
        ls_replay_claims_tied_(mask, claims, players, recorded, &top, &ok);
        if (!ok) {
            return set_err(err, LS_ERR_CORRUPT, s->pos, tick,
                           "tick %u: the recorded checksum %016llx (TICK chunk at byte %llu) is "
                           "not what its claims agree on (CLMS chunk at byte %llu)",
                           tick, (unsigned long long)recorded, (unsigned long long)s->pos,
                           (unsigned long long)s->clms_pos);
        }
        if (!grow((void **)&r->claims, &r->cap_claims, r->nclaims, sizeof *r->claims)) {
            return set_err(err, LS_ERR_NO_MEMORY, s->clms_pos, tick, "out of memory");
        }
        r->claims[r->nclaims++] =
            (ls_replay_claim_entry){tick, mask, (flags & LSR_CLMS_DISPUTED) != 0,
                                    s->clms_pos + LSR_CHUNK_HEADER + pos + LSR_CLMS_ENTRY};
        in->claim_ticks++;
        in->disputed_ticks += (flags & LSR_CLMS_DISPUTED) != 0;
        pos += size;
    }
    if (!grow((void **)&r->clms, &r->cap_clms, r->nclms, sizeof *r->clms)) {
        return set_err(err, LS_ERR_NO_MEMORY, s->clms_pos, -1, "out of memory");
    }
    r->clms[r->nclms++] = (ls_replay_clms_entry){s->clms_pos, s->clms_first, s->clms_entries};
    in->claim_bytes += LSR_CHUNK_HEADER + s->clms_len;
    s->clms_pending = false;
    return true;
}

// Only the TICK chunk of its ticks may follow a CLMS chunk.
static bool follows_claims(const ls_replay_scan *s, ls_error *err)
{
    if (!s->clms_pending ||
        (s->tag == LSR_TAG_TICK && s->first == s->clms_first && s->count == s->clms_count)) {
        return true;
    }
    char what[96];
    set_err(err, LS_ERR_CORRUPT, s->pos, s->clms_first,
            "%s follows the CLMS chunk at byte %llu (claims of ticks %u..%llu); expected the "
            "TICK chunk of those ticks",
            describe(s, what, sizeof what), (unsigned long long)s->clms_pos, s->clms_first,
            (unsigned long long)s->clms_first + s->clms_count - 1);
    return false;
}

static bool index_matches(const ls_replay_reader *r, const ls_replay_scan *s)
{
    const uint8_t *p = s->payload;
    // Version 2 adds the claims table after the version-1 tables.
    uint64_t claims = r->header.format_version >= LS_REPLAY_FORMAT_VERSION_CLAIMS
                          ? LSR_INDX_CLAIMS_HEAD + 16ull * r->nclms
                          : 0;
    if (s->len < 8 || s->first != 0 || s->count != r->info.ticks || ls_get_u32le(p) != r->nchunks ||
        ls_get_u32le(p + 4) != r->nkeyframes ||
        s->len != 8 + 16ull * ((uint64_t)r->nchunks + r->nkeyframes) + claims) {
        return false;
    }
    p += 8;
    for (uint32_t i = 0; i < r->nchunks; i++, p += 16) {
        const ls_replay_chunk_entry *c = &r->chunks[i];
        if (ls_get_u64le(p) != c->offset || ls_get_u32le(p + 8) != c->first ||
            ls_get_u32le(p + 12) != c->count) {
            return false;
        }
    }
    for (uint32_t i = 0; i < r->nkeyframes; i++, p += 16) {
        const ls_replay_keyframe_entry *k = &r->keyframes[i];
        if (ls_get_u64le(p) != k->offset || ls_get_u32le(p + 8) != k->tick ||
            ls_get_u32le(p + 12) != k->size) {
            return false;
        }
    }
    if (claims == 0) {
        return true;
    }
    if (ls_get_u32le(p) != r->nclms || ls_get_u32le(p + 4) != r->nclaims) {
        return false;
    }
    p += LSR_INDX_CLAIMS_HEAD;
    for (uint32_t i = 0; i < r->nclms; i++, p += 16) {
        const ls_replay_clms_entry *c = &r->clms[i];
        if (ls_get_u64le(p) != c->offset || ls_get_u32le(p + 8) != c->first ||
            ls_get_u32le(p + 12) != c->entries) {
            return false;
        }
    }
    return true;
}

// A SIGN chunk names its own offset and the ticks before it; only a signed
// file has them. The signature itself is checked by ls/replay_sign.h.
static bool scan_signature(ls_replay_reader *r, ls_replay_scan *s, ls_error *err)
{
    ls_replay_info *in = &r->info;
    char what[96];
    if (!r->header.is_signed || s->len != LSR_SIGN_PAYLOAD || s->count != 0 ||
        s->first != in->ticks || ls_get_u64le(s->payload) != s->pos) {
        return set_err(err, LS_ERR_CORRUPT, s->pos, in->ticks, "%s: %s",
                       describe(s, what, sizeof what),
                       r->header.is_signed ? "malformed (length, tick or offset)"
                                           : "the header does not say the file is signed");
    }
    if (!grow((void **)&r->signatures, &r->cap_signatures, r->nsignatures, sizeof *r->signatures)) {
        return set_err(err, LS_ERR_NO_MEMORY, s->pos, -1, "out of memory");
    }
    ls_replay_signature_entry *g = &r->signatures[r->nsignatures++];
    g->offset = s->pos;
    g->ticks = in->ticks;
    memcpy(g->signature, s->payload + 8, LS_REPLAY_SIGNATURE_SIZE);
    in->signatures++;
    in->signed_ticks = in->ticks;
    in->overhead_bytes += LSR_CHUNK_HEADER + s->len;
    return true;
}

// The index must agree with the chunks and be followed by exactly the trailer.
static bool scan_index(ls_replay_reader *r, ls_replay_scan *s, ls_error *err)
{
    if (!index_matches(r, s)) {
        return set_err(err, LS_ERR_CORRUPT, s->pos, -1,
                       "INDX chunk at byte %llu disagrees with the chunks in the file",
                       (unsigned long long)s->pos);
    }
    uint64_t end = s->pos + LSR_CHUNK_HEADER + s->len, left = r->size - end;
    ls_replay_info *in = &r->info;
    if (left < LSR_TRAILER_SIZE) {
        in->end_offset = end;
        snprintf(in->end_reason, sizeof in->end_reason,
                 "file ends inside the trailer at byte %llu (%llu of 16 bytes)",
                 (unsigned long long)end, (unsigned long long)left);
        return true;
    }
    const uint8_t *t = r->data + end;
    if (left > LSR_TRAILER_SIZE || ls_get_u64le(t) != s->pos ||
        memcmp(t + 8, LSR_TRAILER_MAGIC, 8) != 0) {
        return set_err(err, LS_ERR_CORRUPT, end, -1,
                       "bad trailer at byte %llu (%llu bytes after the index, expected 16 "
                       "naming it)",
                       (unsigned long long)end, (unsigned long long)left);
    }
    in->overhead_bytes += LSR_CHUNK_HEADER + s->len + LSR_TRAILER_SIZE;
    in->end_offset = r->size;
    in->complete = true;
    in->indexed = true;
    return true;
}

// Reads the chunk header at s->pos. Returns 1 for a chunk, 0 when the file ends
// (end_reason set), -1 on error.
static int read_chunk(ls_replay_reader *r, ls_replay_scan *s, ls_error *err)
{
    ls_replay_info *in = &r->info;
    char what[96];
    uint64_t left = r->size - s->pos;
    unsigned long long at = (unsigned long long)s->pos;
    in->end_offset = s->pos;
    if (left == 0) {
        snprintf(in->end_reason, sizeof in->end_reason,
                 "no index: the recording was not finished; it ends after tick %u "
                 "at byte %llu",
                 in->ticks, at);
        return 0;
    }
    if (left < LSR_CHUNK_HEADER) {
        snprintf(in->end_reason, sizeof in->end_reason,
                 "file ends inside a chunk header at byte %llu (%llu of 32 bytes) "
                 "after tick %u",
                 at, (unsigned long long)left, in->ticks);
        return 0;
    }
    const uint8_t *h = r->data + s->pos;
    if (ls_hash64(h, 24) != ls_get_u64le(h + 24)) {
        set_err(err, LS_ERR_CORRUPT, s->pos, in->ticks,
                "chunk header at byte %llu (after tick %u): check code mismatch", at, in->ticks);
        return -1;
    }
    s->tag = ls_get_u32le(h);
    s->len = ls_get_u32le(h + 4);
    s->first = ls_get_u32le(h + 8);
    s->count = ls_get_u32le(h + 12);
    if ((s->tag != LSR_TAG_TICK && s->tag != LSR_TAG_KEYF && s->tag != LSR_TAG_INDX &&
         s->tag != LSR_TAG_SIGN && s->tag != LSR_TAG_CLMS) ||
        s->len > LSR_MAX_PAYLOAD) {
        set_err(err, LS_ERR_CORRUPT, s->pos, in->ticks,
                "chunk at byte %llu: unknown tag 0x%08x or length %u over the limit", at, s->tag,
                s->len);
        return -1;
    }
    if (s->len > left - LSR_CHUNK_HEADER) {
        snprintf(in->end_reason, sizeof in->end_reason,
                 "file ends inside the %s: it needs %u bytes, %llu are left; %u "
                 "ticks are "
                 "readable",
                 describe(s, what, sizeof what), LSR_CHUNK_HEADER + s->len,
                 (unsigned long long)left, in->ticks);
        return 0;
    }
    s->payload = h + LSR_CHUNK_HEADER;
    if (ls_hash64(s->payload, s->len) != ls_get_u64le(h + 16)) {
        set_err(err, LS_ERR_CORRUPT, s->pos, s->first, "%s: payload check code mismatch",
                describe(s, what, sizeof what));
        return -1;
    }
    return 1;
}

static bool scan(ls_replay_reader *r, ls_error *err)
{
    ls_replay_scan s = {0};
    s.pos = r->header.header_size;
    bool ok = true;
    for (;;) {
        int c = read_chunk(r, &s, err);
        if (c <= 0) {
            ok = c == 0;
            break;
        }
        bool claimed = s.clms_pending;
        ok = follows_claims(&s, err) &&
             (s.tag == LSR_TAG_TICK ? scan_tick(r, &s, err) && (!claimed || keep_claims(r, &s, err))
              : s.tag == LSR_TAG_KEYF ? scan_keyframe(r, &s, err)
              : s.tag == LSR_TAG_SIGN ? scan_signature(r, &s, err)
              : s.tag == LSR_TAG_CLMS ? scan_claims(r, &s, err)
                                      : scan_index(r, &s, err));
        if (!ok || s.tag == LSR_TAG_INDX) {
            break;
        }
        s.pos += LSR_CHUNK_HEADER + s.len;
    }
    if (ok && s.clms_pending) {
        // Claims whose ticks the file lost: the readable part ends before them.
        ls_replay_info *in = &r->info;
        char why[2 * LS_REPLAY_MESSAGE_MAX];
        int n = snprintf(why, sizeof why,
                         "%s; the CLMS chunk at byte %llu before it (claims of ticks %u..%llu) "
                         "is not readable",
                         in->end_reason, (unsigned long long)s.clms_pos, s.clms_first,
                         (unsigned long long)s.clms_first + s.clms_count - 1);
        size_t len = n < 0                               ? 0
                     : (size_t)n < sizeof in->end_reason ? (size_t)n
                                                         : sizeof in->end_reason - 1;
        memcpy(in->end_reason, why, len);
        in->end_reason[len] = '\0';
        in->end_offset = s.clms_pos;
    }
    free(s.scratch);
    return ok;
}

ls_replay_reader *ls_replay_reader_open_memory(const uint8_t *data, size_t size, ls_error *err)
{
    ls_error_clear(err);
    if ((uint64_t)size > LSR_MAX_FILE) {
        return set_err(err, LS_ERR_CAPACITY, 0, -1, "file of %llu bytes exceeds 1 GiB",
                       (unsigned long long)size);
    }
    ls_replay_reader *r = calloc(1, sizeof *r);
    uint8_t *copy = malloc(size ? size : 1);
    if (!r || !copy) {
        free(r);
        free(copy);
        return set_err(err, LS_ERR_NO_MEMORY, 0, -1, "out of memory");
    }
    if (size) {
        memcpy(copy, data, size);
    }
    r->data = copy;
    r->size = size;
    r->info.file_size = size;
    if (!parse_header(r, err) || !scan(r, err)) {
        ls_replay_reader_destroy(r);
        return NULL;
    }
    r->info.overhead_bytes += r->header.header_size;
    return r;
}

ls_replay_reader *ls_replay_reader_open(const char *path, ls_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, LS_ERR_IO, 0, -1, "cannot open: %s", strerror(errno));
        ls_error_set_path(err, path);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    bool too_big = false;
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) {
            break;
        }
        if ((uint64_t)cap >= LSR_MAX_FILE) {
            too_big = true;
            break;
        }
        uint8_t *p = realloc(buf, cap * 2);
        if (!p) {
            free(buf);
        }
        buf = p;
        cap *= 2;
    }
    bool io_error = ferror(f) != 0;
    fclose(f);
    if (!buf || io_error || too_big) {
        int e = errno;
        free(buf);
        set_err(err,
                !buf      ? LS_ERR_NO_MEMORY
                : too_big ? LS_ERR_CAPACITY
                          : LS_ERR_IO,
                len, -1, "%s",
                !buf      ? "out of memory"
                : too_big ? "larger than 1 GiB"
                          : strerror(e));
        ls_error_set_path(err, path);
        return NULL;
    }
    ls_replay_reader *r = ls_replay_reader_open_memory(buf, len, err);
    free(buf);
    if (!r) {
        ls_error_set_path(err, path);
    }
    return r;
}

void ls_replay_reader_destroy(ls_replay_reader *r)
{
    if (r) {
        free(r->data);
        free(r->chunks);
        free(r->keyframes);
        free(r->signatures);
        free(r->claims);
        free(r->clms);
        free(r);
    }
}

const ls_replay_header *ls_replay_reader_header(const ls_replay_reader *r)
{
    return &r->header;
}

const ls_replay_info *ls_replay_reader_info(const ls_replay_reader *r)
{
    return &r->info;
}

ls_result ls_replay_reader_require_fingerprint(const ls_replay_reader *r, const char *expected,
                                               ls_error *err)
{
    if (strcmp(r->header.fingerprint, expected) == 0) {
        ls_error_clear(err);
        return LS_OK;
    }
    if (!ls_replay_fingerprint_engine(expected).known) {
        // Another program's fingerprints: the strings are all there is to say.
        set_err(err, LS_ERR_INCOMPATIBLE, LSR_HEADER_FIXED, -1,
                "build fingerprint mismatch at byte %u: the file says '%s', this "
                "build is '%s'",
                LSR_HEADER_FIXED, r->header.fingerprint, expected);
        return LS_ERR_INCOMPATIBLE;
    }
    // A lockstep build: name both engines (SPEC.md §16.8) and what to verify it with.
    char by[128], why[LS_ERROR_MESSAGE_MAX];
    ls_replay_fingerprint_describe(r->header.fingerprint, by, sizeof by);
    ls_replay_fingerprint_refusal(r->header.fingerprint, expected, why, sizeof why);
    set_err(err, LS_ERR_INCOMPATIBLE, LSR_HEADER_FIXED, -1,
            "build fingerprint at byte %u: recorded by %s; %s", LSR_HEADER_FIXED, by, why);
    return LS_ERR_INCOMPATIBLE;
}

uint32_t ls_replay_reader_ticks(const ls_replay_reader *r)
{
    return r->info.ticks;
}

uint32_t ls_replay_find_chunk_(const ls_replay_reader *r, uint32_t tick)
{
    uint32_t lo = 0, hi = r->nchunks; // first chunk with first > tick, minus one
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->chunks[mid].first <= tick) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo - 1;
}

uint64_t ls_replay_reader_checksum(const ls_replay_reader *r, uint32_t tick)
{
    if (tick >= r->info.ticks) {
        return 0;
    }
    const ls_replay_chunk_entry *c = &r->chunks[ls_replay_find_chunk_(r, tick)];
    const uint8_t *sums = r->data + c->offset + LSR_CHUNK_HEADER + 4 + c->enc_len;
    return ls_get_u64le(sums + 8 * (size_t)(tick - c->first));
}

uint32_t ls_replay_reader_claims_count(const ls_replay_reader *r)
{
    return r->nclaims;
}

ls_result ls_replay_reader_claims_at(const ls_replay_reader *r, uint32_t i, ls_replay_claims *out)
{
    if (i >= r->nclaims) {
        return LS_ERR_NOT_FOUND;
    }
    const ls_replay_claim_entry *e = &r->claims[i];
    memset(out, 0, sizeof *out);
    out->tick = e->tick;
    out->reported = e->reported;
    out->disputed = e->disputed;
    const uint8_t *v = r->data + e->values_at;
    for (uint32_t p = 0; p < LS_REPLAY_MAX_CLAIM_PLAYERS; p++) {
        if (e->reported >> p & 1u) {
            out->claims[p] = ls_get_u64le(v);
            v += 8;
        }
    }
    return LS_OK;
}

uint32_t ls_replay_claims_from_(const ls_replay_reader *r, uint32_t tick)
{
    uint32_t lo = 0, hi = r->nclaims;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->claims[mid].tick < tick) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Index of the claims of `tick`, or -1.
static int64_t find_claims(const ls_replay_reader *r, uint32_t tick)
{
    uint32_t lo = ls_replay_claims_from_(r, tick);
    return lo < r->nclaims && r->claims[lo].tick == tick ? (int64_t)lo : -1;
}

ls_result ls_replay_reader_claims(const ls_replay_reader *r, uint32_t tick, ls_replay_claims *out)
{
    int64_t i = find_claims(r, tick);
    return i < 0 ? LS_ERR_NOT_FOUND : ls_replay_reader_claims_at(r, (uint32_t)i, out);
}

bool ls_replay_reader_judge(const ls_replay_reader *r, uint32_t tick, uint64_t computed,
                            ls_replay_verdict *out)
{
    ls_replay_verdict v;
    memset(&v, 0, sizeof v);
    v.tick = tick;
    v.recorded = ls_replay_reader_checksum(r, tick);
    v.computed = computed;
    bool sound = v.recorded == computed;
    ls_replay_claims c;
    if (tick < r->info.ticks && ls_replay_reader_claims(r, tick, &c) == LS_OK) {
        v.disputed = c.disputed;
        v.reported = c.reported;
        for (uint32_t p = 0; p < LS_REPLAY_MAX_CLAIM_PLAYERS; p++) {
            if ((uint32_t)c.reported >> p & 1u) {
                sound |= c.claims[p] == computed;
                v.wrong |= (uint16_t)((c.claims[p] != computed ? 1u : 0u) << p);
            }
        }
    }
    if (out) {
        *out = v;
    }
    return sound;
}

ls_replay_keyframe_info ls_replay_reader_keyframe_info(const ls_replay_reader *r, uint32_t i)
{
    ls_replay_keyframe_info k = {0, 0, 0};
    if (i < r->nkeyframes) {
        k.tick = r->keyframes[i].tick;
        k.size = r->keyframes[i].size;
        k.offset = r->keyframes[i].offset;
    }
    return k;
}

static bool decode_one(const ls_replay_reader *r, const ls_replay_keyframe_entry *k, uint8_t *out)
{
    const uint8_t *src = r->data + k->offset + LSR_CHUNK_HEADER + 8;
    char why[8];
    if (k->encoding == LSR_KEYF_RAW) {
        memcpy(out, src, k->size);
        return true;
    }
    return ls_replay_zrle_decode_(src, k->data_len, out, k->size, why, sizeof why);
}

// A delta keyframe is the XOR of its decoded zero runs with the previous
// keyframe (zero-extended or cut to its size): decode from the last whole one.
ls_result ls_replay_reader_keyframe(const ls_replay_reader *r, uint32_t i, uint8_t *buf,
                                    size_t size)
{
    if (i >= r->nkeyframes) {
        return LS_ERR_NOT_FOUND;
    }
    if (size < r->keyframes[i].size) {
        return LS_ERR_BUFFER_TOO_SMALL;
    }
    uint32_t j = i;
    size_t most = 0;
    for (; r->keyframes[j].encoding == LSR_KEYF_DELTA_ZERO_RUNS; j--) {
        most = r->keyframes[j].size > most ? r->keyframes[j].size : most;
    }
    if (j == i) {
        return decode_one(r, &r->keyframes[i], buf) ? LS_OK : LS_ERR_CORRUPT;
    }
    most = r->keyframes[j].size > most ? r->keyframes[j].size : most;
    uint8_t *base = calloc(1, most), *delta = malloc(most);
    bool ok = base && delta && decode_one(r, &r->keyframes[j], base);
    for (uint32_t m = j + 1; ok && m <= i; m++) {
        const ls_replay_keyframe_entry *k = &r->keyframes[m];
        size_t prev = r->keyframes[m - 1].size;
        ok = decode_one(r, k, delta);
        for (size_t x = 0; ok && x < k->size; x++) {
            base[x] = (uint8_t)(delta[x] ^ (x < prev ? base[x] : 0));
        }
    }
    if (ok) {
        memcpy(buf, base, r->keyframes[i].size);
    }
    ls_result res = base && delta ? (ok ? LS_OK : LS_ERR_CORRUPT) : LS_ERR_NO_MEMORY;
    free(base);
    free(delta);
    return res;
}

int64_t ls_replay_reader_keyframe_at_or_before(const ls_replay_reader *r, uint32_t tick)
{
    int64_t found = -1;
    for (uint32_t i = 0; i < r->nkeyframes && r->keyframes[i].tick <= tick; i++) {
        found = i;
    }
    return found;
}

int64_t ls_replay_reader_keyframe_at_or_after(const ls_replay_reader *r, uint32_t tick)
{
    for (uint32_t i = 0; i < r->nkeyframes; i++) {
        if (r->keyframes[i].tick >= tick) {
            return i;
        }
    }
    return -1;
}
