// SPDX-License-Identifier: MIT
// Replay recorder: buffers a chunk of ticks in memory and writes each chunk
// whole (one fwrite + fflush), so a process killed at any moment leaves a file
// that is readable up to its last complete chunk.
#if !defined(_POSIX_C_SOURCE) && (defined(__unix__) || defined(__APPLE__))
#define _POSIX_C_SOURCE 200809L
#endif
#include "ls/hash.h"
#include "replay_format.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#define LSR_HAVE_FSYNC 1
#elif defined(_WIN32)
#include <io.h>
#define fsync(fd)      _commit(fd) // Windows' flush to disk (FlushFileBuffers)
#define LSR_HAVE_FSYNC 1
#endif

typedef struct ls_replay_index_entry {
    uint64_t offset;
    uint32_t tick;
    uint32_t count; // ticks (tick chunks) or decoded size (keyframes)
} ls_replay_index_entry;

struct ls_replay_recorder {
    FILE *f;
    ls_replay_recorder_def def;
    size_t frame_size;
    uint8_t *prev;      // the previous frame of this chunk (zero at chunk start)
    ls_replay_buf enc;  // encoded inputs of the pending chunk
    ls_replay_buf sums; // checksums of the pending chunk
    ls_replay_buf out;  // the chunk being written
    uint32_t pending;   // ticks in the pending chunk
    uint32_t run;       // repeats of prev not yet written as a token
    uint32_t ticks;     // ticks appended
    uint64_t bytes;     // bytes written
    uint32_t last_keyframe;
    ls_replay_buf prev_keyframe; // decoded bytes of the last keyframe (delta base)
    uint32_t delta_chain;        // delta keyframes since the last whole one
    ls_replay_index_entry *chunks, *keyframes;
    uint32_t nchunks, nkeyframes, cap_chunks, cap_keyframes;
    // Claims (def.claims): those of the next tick, until its append checks its
    // checksum against them; then encoded into the pending chunk's CLMS payload.
    bool next_claimed;
    uint16_t next_reported;
    bool next_disputed;
    uint64_t next_claims[LS_REPLAY_MAX_CLAIM_PLAYERS];
    ls_replay_buf claims;        // CLMS entries of the pending chunk
    uint32_t pending_claims;     // entries in claims
    uint32_t claimed_ticks;      // claimed ticks written
    ls_replay_index_entry *clms; // per CLMS chunk: offset, first tick, entries
    uint32_t nclms, cap_clms;
    bool finished;
    bool failed;
    ls_error error; // the last failure (code LS_OK if none)
};

ls_replay_recorder_def ls_default_replay_recorder_def(void)
{
    ls_replay_recorder_def d;
    memset(&d, 0, sizeof d);
    d.tick_rate = 60;
    d.players = 1;
    d.input_size = 1;
    d.keyframe_interval = 300;
    d.chunk_ticks = 60;
    d.fingerprint = "unspecified";
    d.engine_version[0] = LS_VERSION_MAJOR;
    d.engine_version[1] = LS_VERSION_MINOR;
    d.engine_version[2] = LS_VERSION_PATCH;
    return d;
}

ls_replay_recorder_def ls_replay_recorder_def_like(const ls_replay_header *h)
{
    ls_replay_recorder_def d = ls_default_replay_recorder_def();
    d.tick_rate = h->tick_rate;
    d.players = h->players;
    d.input_size = h->input_size;
    d.keyframe_interval = h->keyframe_interval;
    d.seed = h->seed;
    d.fingerprint = h->fingerprint;
    d.scene = h->scene;
    d.scene_size = h->scene_size;
    memcpy(d.engine_version, h->engine_version, sizeof d.engine_version);
    d.claims = h->format_version >= LS_REPLAY_FORMAT_VERSION_CLAIMS;
    return d;
}

static ls_result fail(ls_replay_recorder *r, ls_result code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_error_setv(&r->error, code, fmt, ap);
    va_end(ap);
    return code;
}

static const char *check_def(const ls_replay_recorder_def *d)
{
    size_t flen = d->fingerprint ? strlen(d->fingerprint) : 0;
    if (d->tick_rate < 1 || d->tick_rate > 1000) {
        return "tick_rate must be 1..1000";
    }
    if (d->players < 1 || d->players > LS_REPLAY_MAX_PLAYERS) {
        return "players must be 1..64";
    }
    if (d->input_size < 1 || d->input_size > LS_REPLAY_MAX_INPUT_SIZE) {
        return "input_size must be 1..64";
    }
    if (d->chunk_ticks < 1 || d->chunk_ticks > LS_REPLAY_MAX_CHUNK_TICKS ||
        (uint64_t)d->chunk_ticks * d->players * d->input_size > LSR_MAX_CHUNK_FRAMES) {
        return "chunk_ticks must be 1..4096 and chunk_ticks*players*input_size <= "
               "4 MiB";
    }
    if (flen < 1 || flen > LS_REPLAY_FINGERPRINT_MAX) {
        return "fingerprint must be 1..255 bytes";
    }
    for (size_t i = 0; i < flen; i++) {
        if (d->fingerprint[i] < 0x20 || d->fingerprint[i] > 0x7E) {
            return "fingerprint must be printable ASCII";
        }
    }
    if (d->scene_size > LS_REPLAY_MAX_SCENE || (d->scene_size && !d->scene)) {
        return "scene must be at most 16 MiB";
    }
    if (d->claims && d->players > LS_REPLAY_MAX_CLAIM_PLAYERS) {
        return "a recording with claims has at most 16 players";
    }
    return NULL;
}

// Write bytes or remember the failure; a failed recorder refuses further
// writes.
static ls_result write_all(ls_replay_recorder *r, const uint8_t *p, size_t n)
{
    if (fwrite(p, 1, n, r->f) != n || fflush(r->f) != 0) {
        r->failed = true;
        return fail(r, LS_ERR_IO, "write failed at byte %llu: %s", (unsigned long long)r->bytes,
                    strerror(errno));
    }
#ifdef LSR_HAVE_FSYNC
    if (r->def.fsync_chunks && fsync(fileno(r->f)) != 0) {
        r->failed = true;
        return fail(r, LS_ERR_IO, "fsync failed: %s", strerror(errno));
    }
#endif
    r->bytes += n;
    if (r->def.signer) {
        r->def.signer->absorb(r->def.signer->user, p, n);
    }
    return LS_OK;
}

static ls_result write_header(ls_replay_recorder *r)
{
    const ls_replay_recorder_def *d = &r->def;
    size_t flen = strlen(d->fingerprint);
    size_t key = d->signer ? LS_REPLAY_PUBLIC_KEY_SIZE : 0;
    size_t total = LSR_HEADER_FIXED + flen + d->scene_size + key + LSR_HEADER_TAIL;
    ls_replay_buf *b = &r->out;
    b->len = 0;
    if (!ls_replay_buf_reserve_(b, total)) {
        return fail(r, LS_ERR_NO_MEMORY, "out of memory for the header");
    }
    uint8_t *h = b->data;
    memset(h, 0, LSR_HEADER_FIXED);
    memcpy(h, LSR_MAGIC, LSR_MAGIC_SIZE);
    // Version 2 only when claims may follow: every other recording stays version 1,
    // byte for byte what earlier builds wrote.
    ls_put_u16le(h + 8, d->claims ? LS_REPLAY_FORMAT_VERSION_CLAIMS : 1);
    ls_put_u16le(h + 10, d->signer ? LSR_FLAG_SIGNED : 0);
    ls_put_u32le(h + 12, (uint32_t)total);
    for (int i = 0; i < 3; i++) {
        ls_put_u16le(h + 16 + 2 * i, d->engine_version[i]);
    }
    ls_put_u32le(h + 24, d->tick_rate);
    ls_put_u32le(h + 28, d->players);
    ls_put_u32le(h + 32, d->input_size);
    ls_put_u32le(h + 36, d->keyframe_interval);
    ls_put_u64le(h + 40, d->seed);
    ls_put_u32le(h + 48, (uint32_t)flen);
    ls_put_u32le(h + 52, (uint32_t)d->scene_size);
    b->len = LSR_HEADER_FIXED;
    ls_replay_buf_put_(b, d->fingerprint, flen);
    ls_replay_buf_put_(b, d->scene, d->scene_size);
    if (d->signer) {
        ls_replay_buf_put_(b, d->signer->public_key, LS_REPLAY_PUBLIC_KEY_SIZE);
    }
    ls_put_u64le(b->data + b->len, ls_hash64(d->scene, d->scene_size));
    b->len += 8;
    ls_put_u64le(b->data + b->len, ls_hash64(b->data, b->len));
    b->len += 8;
    return write_all(r, b->data, b->len);
}

ls_replay_recorder *ls_replay_recorder_create(const char *path, const ls_replay_recorder_def *def,
                                              ls_error *err)
{
    const char *why = def ? check_def(def) : "no recorder definition";
    ls_replay_recorder *r = NULL;
    ls_result code = LS_ERR_INVALID_ARGUMENT;
    if (!why) {
        r = calloc(1, sizeof *r);
        code = LS_ERR_NO_MEMORY;
        why = "out of memory";
    }
    if (r) {
        ls_error_clear(&r->error);
        r->def = *def;
        r->frame_size = (size_t)def->players * def->input_size;
        r->prev = calloc(1, r->frame_size);
        r->f = r->prev ? fopen(path, "wb") : NULL;
        if (!r->f) {
            code = r->prev ? LS_ERR_IO : LS_ERR_NO_MEMORY;
            why = r->prev ? strerror(errno) : "out of memory";
        } else if ((code = write_header(r)) != LS_OK) {
            why = r->error.message;
        }
        r->def.scene = NULL; // the caller's buffers are not kept
        r->def.fingerprint = NULL;
    }
    if (r && r->f && code == LS_OK) {
        ls_error_clear(err);
        return r;
    }
    ls_error_set(err, code, "%s", why);
    ls_error_set_path(err, path);
    ls_replay_recorder_destroy(r);
    return NULL;
}

static bool index_add(ls_replay_index_entry **list, uint32_t *n, uint32_t *cap,
                      ls_replay_index_entry e)
{
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 64;
        ls_replay_index_entry *p = realloc(*list, c * sizeof *p);
        if (!p) {
            return false;
        }
        *list = p;
        *cap = c;
    }
    (*list)[(*n)++] = e;
    return true;
}

// Append a chunk (header + payload) to r->out.
static ls_result assemble_chunk(ls_replay_recorder *r, uint32_t tag, uint32_t first, uint32_t count,
                                const ls_replay_buf *parts, int nparts)
{
    size_t len = 0;
    for (int i = 0; i < nparts; i++) {
        len += parts[i].len;
    }
    if (len > LSR_MAX_PAYLOAD) {
        return fail(r, LS_ERR_CAPACITY, "chunk payload of %zu bytes exceeds the limit", len);
    }
    if (!ls_replay_buf_reserve_(&r->out, LSR_CHUNK_HEADER + len)) {
        return fail(r, LS_ERR_NO_MEMORY, "out of memory for a chunk");
    }
    size_t at = r->out.len;
    uint8_t *h = r->out.data + at;
    ls_put_u32le(h, tag);
    ls_put_u32le(h + 4, (uint32_t)len);
    ls_put_u32le(h + 8, first);
    ls_put_u32le(h + 12, count);
    r->out.len += LSR_CHUNK_HEADER;
    for (int i = 0; i < nparts; i++) {
        ls_replay_buf_put_(&r->out, parts[i].data, parts[i].len);
    }
    ls_put_u64le(h + 16, ls_hash64(h + LSR_CHUNK_HEADER, len));
    ls_put_u64le(h + 24, ls_hash64(h, 24));
    return LS_OK;
}

// Assemble header + payload in r->out and write it in one call.
static ls_result write_chunk(ls_replay_recorder *r, uint32_t tag, uint32_t first, uint32_t count,
                             const ls_replay_buf *parts, int nparts)
{
    r->out.len = 0;
    ls_result res = assemble_chunk(r, tag, first, count, parts, nparts);
    return res == LS_OK ? write_all(r, r->out.data, r->out.len) : res;
}

// A SIGN chunk over every byte written so far (SPEC.md §16.11): after each
// chunk, so a file cut by a crash is signed up to its last whole chunk.
static ls_result write_signature(ls_replay_recorder *r)
{
    const ls_replay_signer *s = r->def.signer;
    if (!s) {
        return LS_OK;
    }
    uint8_t payload[LSR_SIGN_PAYLOAD];
    ls_put_u64le(payload, r->bytes);
    if (!s->sign(s->user, r->bytes, payload + 8)) {
        r->failed = true;
        return fail(r, LS_ERR_IO, "the signer failed at byte %llu", (unsigned long long)r->bytes);
    }
    ls_replay_buf part = {payload, sizeof payload, sizeof payload};
    return write_chunk(r, LSR_TAG_SIGN, r->ticks, 0, &part, 1);
}

static ls_result end_chunk(ls_replay_recorder *r)
{
    if (r->pending == 0) {
        return LS_OK;
    }
    if (r->run) {
        if (!ls_replay_buf_reserve_(&r->enc, 5)) {
            return fail(r, LS_ERR_NO_MEMORY, "out of memory");
        }
        ls_replay_buf_put_varint_(&r->enc, r->run << 1);
    }
    uint8_t lenbuf[4], nbuf[4];
    ls_put_u32le(lenbuf, (uint32_t)r->enc.len);
    ls_put_u32le(nbuf, r->pending_claims);
    ls_replay_buf parts[3] = {{lenbuf, 4, 4}, r->enc, r->sums};
    ls_replay_buf cparts[2] = {{nbuf, 4, 4}, r->claims};
    uint32_t first = r->ticks - r->pending;
    // The chunk's claims go in a CLMS chunk right before it, in the same write:
    // a crash keeps both or neither (or a prefix the reader reports).
    r->out.len = 0;
    ls_result res =
        r->pending_claims ? assemble_chunk(r, LSR_TAG_CLMS, first, r->pending, cparts, 2) : LS_OK;
    ls_replay_index_entry c = {r->bytes, first, r->pending_claims};
    ls_replay_index_entry e = {r->bytes + r->out.len, first, r->pending};
    if (res == LS_OK) {
        res = assemble_chunk(r, LSR_TAG_TICK, first, r->pending, parts, 3);
    }
    if (res == LS_OK) {
        res = write_all(r, r->out.data, r->out.len);
    }
    if (res == LS_OK && !index_add(&r->chunks, &r->nchunks, &r->cap_chunks, e)) {
        res = fail(r, LS_ERR_NO_MEMORY, "out of memory for the index");
    }
    if (res == LS_OK && r->pending_claims && !index_add(&r->clms, &r->nclms, &r->cap_clms, c)) {
        res = fail(r, LS_ERR_NO_MEMORY, "out of memory for the index");
    }
    if (res == LS_OK) {
        r->claimed_ticks += r->pending_claims;
    }
    if (res == LS_OK) {
        res = write_signature(r);
    }
    r->pending = 0;
    r->run = 0;
    r->enc.len = 0;
    r->sums.len = 0;
    r->claims.len = 0;
    r->pending_claims = 0;
    memset(r->prev, 0, r->frame_size);
    return res;
}

static ls_result usable(ls_replay_recorder *r)
{
    if (r->finished) {
        return fail(r, LS_ERR_INVALID_ARGUMENT, "the recording is finished");
    }
    if (r->failed) {
        return LS_ERR_IO; // the message of the first failure stays
    }
    return LS_OK;
}

ls_result ls_replay_recorder_claims(ls_replay_recorder *r, uint32_t tick, uint16_t reported,
                                    const uint64_t *claims, bool disputed)
{
    ls_result res = usable(r);
    if (res != LS_OK) {
        return res;
    }
    uint32_t players = r->def.players;
    if (!r->def.claims) {
        return fail(r, LS_ERR_INVALID_ARGUMENT,
                    "claims of tick %u: the recorder was created without def.claims", tick);
    }
    if (tick != r->ticks || r->next_claimed) {
        return fail(r, LS_ERR_INVALID_ARGUMENT, "claims of tick %u: %s %u", tick,
                    r->next_claimed ? "already recorded for tick" : "the next tick is", r->ticks);
    }
    if (reported == 0 || (players < 16 && reported >> players != 0)) {
        return fail(r, LS_ERR_INVALID_ARGUMENT,
                    "claims of tick %u: reported mask 0x%04x names no player or one past "
                    "the %u players",
                    tick, reported, players);
    }
    uint64_t top;
    bool tied = ls_replay_claims_tied_(reported, claims, players, 0, &top, NULL);
    if (tied != disputed) {
        return fail(r, LS_ERR_INVALID_ARGUMENT, "claims of tick %u: disputed is %s, but %s", tick,
                    disputed ? "true" : "false",
                    tied ? "the most reported values are tied"
                         : "one value has more reports than every other");
    }
    memset(r->next_claims, 0, sizeof r->next_claims);
    for (uint32_t p = 0; p < players; p++) {
        r->next_claims[p] = ((uint32_t)reported >> p & 1u) ? claims[p] : 0;
    }
    r->next_reported = reported;
    r->next_disputed = disputed;
    r->next_claimed = true;
    return LS_OK;
}

// Before the tick's append: its checksum must be what its claims agree on; room
// for the claims in the pending chunk's CLMS payload is made now, so that
// put_claims after the append cannot fail.
static ls_result check_claims(ls_replay_recorder *r, uint64_t checksum)
{
    uint64_t top;
    bool ok;
    ls_replay_claims_tied_(r->next_reported, r->next_claims, r->def.players, checksum, &top, &ok);
    if (!ok) {
        return fail(r, LS_ERR_INVALID_ARGUMENT,
                    "tick %u: checksum %016llx is not what its claims agree on (%s %016llx)",
                    r->ticks, (unsigned long long)checksum,
                    r->next_disputed ? "a tied value such as" : "the top value",
                    (unsigned long long)top);
    }
    if (!ls_replay_buf_reserve_(&r->claims, LSR_CLMS_ENTRY + 8u * LS_REPLAY_MAX_CLAIM_PLAYERS)) {
        return fail(r, LS_ERR_NO_MEMORY, "out of memory");
    }
    return LS_OK;
}

static void put_claims(ls_replay_recorder *r, uint32_t tick)
{
    uint8_t *e = r->claims.data + r->claims.len;
    ls_put_u32le(e, tick);
    ls_put_u16le(e + 4, r->next_reported);
    ls_put_u16le(e + 6, r->next_disputed ? LSR_CLMS_DISPUTED : 0);
    r->claims.len += LSR_CLMS_ENTRY;
    for (uint32_t p = 0; p < r->def.players; p++) {
        if ((uint32_t)r->next_reported >> p & 1u) {
            ls_put_u64le(r->claims.data + r->claims.len, r->next_claims[p]);
            r->claims.len += 8;
        }
    }
    r->pending_claims++;
    r->next_claimed = false;
}

ls_result ls_replay_recorder_append(ls_replay_recorder *r, const uint8_t *inputs, uint64_t checksum)
{
    ls_result res = usable(r);
    if (res != LS_OK) {
        return res;
    }
    if (r->ticks == UINT32_MAX - 1) {
        return fail(r, LS_ERR_CAPACITY, "a replay holds at most 2^32-2 ticks");
    }
    bool claimed = r->next_claimed;
    if (claimed && (res = check_claims(r, checksum)) != LS_OK) {
        return res;
    }
    if (memcmp(inputs, r->prev, r->frame_size) == 0) {
        r->run++; // held keys: the common case costs nothing until the run ends
    } else {
        if (!ls_replay_buf_reserve_(&r->enc, 5)) {
            return fail(r, LS_ERR_NO_MEMORY, "out of memory");
        }
        ls_replay_buf_put_varint_(&r->enc, (r->run << 1) | 1u);
        if (!ls_replay_encode_frame_delta_(&r->enc, r->prev, inputs, r->frame_size)) {
            return fail(r, LS_ERR_NO_MEMORY, "out of memory");
        }
        memcpy(r->prev, inputs, r->frame_size);
        r->run = 0;
    }
    if (!ls_replay_buf_reserve_(&r->sums, 8)) {
        return fail(r, LS_ERR_NO_MEMORY, "out of memory");
    }
    ls_put_u64le(r->sums.data + r->sums.len, checksum);
    r->sums.len += 8;
    if (claimed) {
        put_claims(r, r->ticks);
    }
    r->pending++;
    r->ticks++;
    return r->pending >= r->def.chunk_ticks ? end_chunk(r) : LS_OK;
}

bool ls_replay_recorder_keyframe_due(const ls_replay_recorder *r)
{
    uint32_t k = r->def.keyframe_interval;
    return k > 0 && r->ticks > 0 && r->ticks % k == 0 && r->last_keyframe != r->ticks;
}

// The smallest of raw, zero runs, and zero runs of the XOR with the previous
// keyframe (most of a snapshot - static bodies, shapes, masses - does not
// change between keyframes). Leaves the chosen encoded bytes in *z.
static uint32_t encode_keyframe(ls_replay_recorder *r, const uint8_t *state, size_t size,
                                ls_replay_buf *z, ls_replay_buf *x)
{
    uint32_t encoding = LSR_KEYF_RAW;
    if (ls_replay_zrle_encode_(z, state, size) && z->len < size) {
        encoding = LSR_KEYF_ZERO_RUNS;
    }
    const ls_replay_buf *prev = &r->prev_keyframe;
    if (prev->len == 0 || r->delta_chain >= LSR_RECORDER_DELTA_CHAIN ||
        !ls_replay_buf_reserve_(x, size)) {
        return encoding;
    }
    for (size_t i = 0; i < size; i++) {
        x->data[i] = (uint8_t)(state[i] ^ (i < prev->len ? prev->data[i] : 0));
    }
    x->len = size;
    ls_replay_buf d = {0};
    if (ls_replay_zrle_encode_(&d, x->data, size) && d.len < (encoding ? z->len : size)) {
        ls_replay_buf_free_(z);
        *z = d;
        return LSR_KEYF_DELTA_ZERO_RUNS;
    }
    ls_replay_buf_free_(&d);
    return encoding;
}

ls_result ls_replay_recorder_add_keyframe(ls_replay_recorder *r, const uint8_t *state, size_t size)
{
    ls_result res = usable(r);
    if (res != LS_OK) {
        return res;
    }
    if (r->ticks == 0 || r->last_keyframe == r->ticks) {
        return fail(r, LS_ERR_INVALID_ARGUMENT, "keyframe at tick %u: %s", r->ticks,
                    r->ticks ? "already recorded" : "tick 0 is the scene itself");
    }
    if (size == 0 || size > LS_REPLAY_MAX_KEYFRAME) {
        return fail(r, LS_ERR_INVALID_ARGUMENT, "keyframe of %zu bytes (1..16 MiB)", size);
    }
    if ((res = end_chunk(r)) != LS_OK) {
        return res;
    }
    uint8_t head[8];
    ls_replay_buf z = {0}, x = {0};
    uint32_t encoding = encode_keyframe(r, state, size, &z, &x);
    ls_put_u32le(head, (uint32_t)size);
    ls_put_u32le(head + 4, encoding);
    ls_replay_buf parts[2] = {{head, 8, 8}, {(uint8_t *)(uintptr_t)state, size, size}};
    if (encoding != LSR_KEYF_RAW) {
        parts[1] = z;
    }
    ls_replay_index_entry e = {r->bytes, r->ticks, (uint32_t)size};
    res = write_chunk(r, LSR_TAG_KEYF, r->ticks, 0, parts, 2);
    ls_replay_buf_free_(&z);
    ls_replay_buf_free_(&x);
    r->prev_keyframe.len = 0;
    if (res == LS_OK && ls_replay_buf_reserve_(&r->prev_keyframe, size)) {
        ls_replay_buf_put_(&r->prev_keyframe, state, size);
        r->delta_chain = encoding == LSR_KEYF_DELTA_ZERO_RUNS ? r->delta_chain + 1 : 0;
    }
    if (res == LS_OK && !index_add(&r->keyframes, &r->nkeyframes, &r->cap_keyframes, e)) {
        res = fail(r, LS_ERR_NO_MEMORY, "out of memory for the index");
    }
    if (res == LS_OK) {
        r->last_keyframe = r->ticks;
        res = write_signature(r);
    }
    return res;
}

ls_result ls_replay_recorder_flush(ls_replay_recorder *r)
{
    ls_result res = usable(r);
    return res == LS_OK ? end_chunk(r) : res;
}

uint32_t ls_replay_recorder_ticks(const ls_replay_recorder *r)
{
    return r->ticks;
}

uint64_t ls_replay_recorder_bytes(const ls_replay_recorder *r)
{
    return r->bytes;
}

static void put_entries(ls_replay_buf *b, const ls_replay_index_entry *e, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *p = b->data + b->len;
        ls_put_u64le(p, e[i].offset);
        ls_put_u32le(p + 8, e[i].tick);
        ls_put_u32le(p + 12, e[i].count);
        b->len += 16;
    }
}

ls_result ls_replay_recorder_finish(ls_replay_recorder *r)
{
    ls_result res = usable(r);
    if (res != LS_OK || (res = end_chunk(r)) != LS_OK) {
        return res;
    }
    ls_replay_buf idx = {0};
    size_t claims_table = r->def.claims ? LSR_INDX_CLAIMS_HEAD + 16 * (size_t)r->nclms : 0;
    if (!ls_replay_buf_reserve_(&idx,
                                8 + 16 * ((size_t)r->nchunks + r->nkeyframes) + claims_table)) {
        return fail(r, LS_ERR_NO_MEMORY, "out of memory for the index");
    }
    ls_put_u32le(idx.data, r->nchunks);
    ls_put_u32le(idx.data + 4, r->nkeyframes);
    idx.len = 8;
    put_entries(&idx, r->chunks, r->nchunks);
    put_entries(&idx, r->keyframes, r->nkeyframes);
    if (r->def.claims) { // version 2: where the claims are, by tick
        ls_put_u32le(idx.data + idx.len, r->nclms);
        ls_put_u32le(idx.data + idx.len + 4, r->claimed_ticks);
        idx.len += LSR_INDX_CLAIMS_HEAD;
        put_entries(&idx, r->clms, r->nclms);
    }
    uint64_t at = r->bytes;
    res = write_chunk(r, LSR_TAG_INDX, 0, r->ticks, &idx, 1);
    ls_replay_buf_free_(&idx);
    if (res == LS_OK) {
        uint8_t trailer[LSR_TRAILER_SIZE];
        ls_put_u64le(trailer, at);
        memcpy(trailer + 8, LSR_TRAILER_MAGIC, 8);
        res = write_all(r, trailer, sizeof trailer);
    }
    r->finished = true;
    return res;
}

void ls_replay_recorder_destroy(ls_replay_recorder *r)
{
    if (!r) {
        return;
    }
    if (r->f) {
        if (!r->finished && !r->failed) {
            end_chunk(r);
        }
        fclose(r->f);
    }
    free(r->prev);
    ls_replay_buf_free_(&r->enc);
    ls_replay_buf_free_(&r->sums);
    ls_replay_buf_free_(&r->out);
    ls_replay_buf_free_(&r->prev_keyframe);
    ls_replay_buf_free_(&r->claims);
    free(r->chunks);
    free(r->keyframes);
    free(r->clms);
    free(r);
}

const ls_error *ls_replay_recorder_error(const ls_replay_recorder *r)
{
    return &r->error;
}
