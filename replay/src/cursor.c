// SPDX-License-Identifier: MIT
// Replay cursor: decodes one chunk of inputs at a time, so sequential reads
// touch each chunk once and any number of cursors share one reader.
#include "reader_impl.h"

#include <stdlib.h>

struct ls_replay_cursor {
    const ls_replay_reader *r;
    uint8_t *frames; // decoded inputs of the current chunk
    size_t cap;      // bytes allocated in frames
    int64_t chunk;   // index of the decoded chunk, -1 if none
    const uint8_t *sums;
};

ls_replay_cursor *ls_replay_cursor_create(const ls_replay_reader *r)
{
    ls_replay_cursor *c = calloc(1, sizeof *c);
    if (c) {
        c->r = r;
        c->chunk = -1;
    }
    return c;
}

void ls_replay_cursor_destroy(ls_replay_cursor *c)
{
    if (c) {
        free(c->frames);
        free(c);
    }
}

static ls_result load_chunk(ls_replay_cursor *c, uint32_t index)
{
    const ls_replay_reader *r = c->r;
    const ls_replay_chunk_entry *k = &r->chunks[index];
    size_t need = (size_t)k->count * r->frame_size;
    if (need > c->cap) {
        uint8_t *p = realloc(c->frames, need);
        if (!p) {
            return LS_ERR_NO_MEMORY;
        }
        c->frames = p;
        c->cap = need;
    }
    const uint8_t *enc = r->data + k->offset + LSR_CHUNK_HEADER + 4;
    uint32_t bad;
    char why[8];
    // The scan decoded this chunk already; failing here would mean memory corruption.
    if (!ls_replay_decode_inputs_(enc, k->enc_len, k->count, r->frame_size, c->frames, &bad, why,
                                  sizeof why)) {
        c->chunk = -1;
        return LS_ERR_CORRUPT;
    }
    c->sums = enc + k->enc_len;
    c->chunk = index;
    return LS_OK;
}

ls_result ls_replay_cursor_read(ls_replay_cursor *c, uint32_t tick, const uint8_t **inputs,
                                uint64_t *checksum)
{
    const ls_replay_reader *r = c->r;
    if (tick >= r->info.ticks) {
        return LS_ERR_NOT_FOUND;
    }
    const ls_replay_chunk_entry *k = c->chunk >= 0 ? &r->chunks[c->chunk] : NULL;
    if (!k || tick < k->first || tick - k->first >= k->count) {
        ls_result res = load_chunk(c, ls_replay_find_chunk_(r, tick));
        if (res != LS_OK) {
            return res;
        }
        k = &r->chunks[c->chunk];
    }
    uint32_t i = tick - k->first;
    if (inputs) {
        *inputs = c->frames + (size_t)i * r->frame_size;
    }
    if (checksum) {
        *checksum = ls_get_u64le(c->sums + 8 * (size_t)i);
    }
    return LS_OK;
}
