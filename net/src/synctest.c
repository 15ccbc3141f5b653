// SPDX-License-Identifier: MIT
// SyncTest (SPEC.md "Rollback and SyncTest"). After the first simulation of
// tick t the state at the start of t + 1 is saved; then the state of
// t + 1 - k is loaded and ticks t + 1 - k .. t are simulated again with the
// inputs recorded the first time. Each re-simulated tick must give the same
// checksum, and the state saved after it the same bytes. States are those at
// the start of a tick (as in the rollback core), so a rollback of k ticks
// re-simulates exactly k ticks. Needs only libc and ls/base.h (the crosscheck
// runner compiles it for every target).
#include "ls/net_synctest.h"

#include <stdlib.h>
#include <string.h>

typedef struct cell {
    uint8_t *buf;
    size_t len, cap;
    uint32_t tag; // tick + 1, 0: none
} cell;

struct ls_synctest {
    ls_synctest_def def;
    uint32_t ncells; // max_distance + 1
    cell *cells;     // states by tick % ncells
    cell scratch;    // a re-simulated state, compared with the first one
    uint8_t *inputs; // [ncells][slots * input_size]
    uint64_t *sums;  // [ncells] first-simulation checksums
    uint32_t next;   // next tick to simulate for the first time
    bool started;
    ls_result failed;
    ls_synctest_report rep;
};

ls_synctest_def ls_default_synctest_def(void)
{
    ls_synctest_def d;
    memset(&d, 0, sizeof d);
    d.slots = 0;
    d.input_size = 1;
    d.min_distance = 1;
    d.max_distance = 8;
    d.compare_states = true;
    return d;
}

static const char *def_problem(const ls_synctest_def *d)
{
    if (d->slots > 16 || d->input_size > 64 || (d->slots > 0 && d->input_size < 1)) {
        return "slots must be 0..16 and input_size 1..64";
    }
    if (d->min_distance < 1 || d->max_distance < d->min_distance ||
        d->max_distance > LS_SYNCTEST_MAX_DISTANCE) {
        return "distances must satisfy 1 <= min_distance <= max_distance <= "
               "LS_SYNCTEST_MAX_DISTANCE";
    }
    if (!d->cb.save || !d->cb.load || !d->cb.advance) {
        return "callbacks save, load and advance are required";
    }
    return NULL;
}

ls_synctest *ls_synctest_create(const ls_synctest_def *def, ls_error *err)
{
    const char *problem = def ? def_problem(def) : "no synctest definition";
    if (problem) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "%s", problem);
        return NULL;
    }
    ls_synctest *st = calloc(1, sizeof *st);
    if (!st) {
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    st->def = *def;
    st->ncells = def->max_distance + 1;
    size_t row = (size_t)def->slots * def->input_size;
    st->cells = calloc(st->ncells, sizeof *st->cells);
    st->inputs = calloc(st->ncells, row ? row : 1);
    st->sums = calloc(st->ncells, sizeof *st->sums);
    if (!st->cells || !st->inputs || !st->sums) {
        ls_synctest_destroy(st);
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    ls_error_clear(err);
    return st;
}

void ls_synctest_destroy(ls_synctest *st)
{
    if (!st) {
        return;
    }
    if (st->cells) {
        for (uint32_t i = 0; i < st->ncells; i++) {
            free(st->cells[i].buf);
        }
    }
    free(st->cells);
    free(st->scratch.buf);
    free(st->inputs);
    free(st->sums);
    free(st);
}

// Save the game's state (at the start of `tick`) into c, growing it as needed.
static bool save_into(ls_synctest *st, cell *c, uint32_t tick)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        size_t n = st->def.cb.save(st->def.cb.user, tick, c->buf, c->cap);
        if (n == 0) {
            break;
        }
        if (n <= c->cap) {
            c->len = n;
            c->tag = tick + 1;
            return true;
        }
        uint8_t *b = realloc(c->buf, n + n / 4);
        if (!b) {
            break;
        }
        c->buf = b;
        c->cap = n + n / 4;
    }
    c->tag = 0;
    return false;
}

static void fail(ls_synctest *st, ls_synctest_failure what, uint32_t tick, uint32_t k)
{
    st->rep.failure = what;
    st->rep.tick = tick;
    st->rep.distance = k;
    st->failed =
        what == LS_SYNCTEST_CHECKSUM || what == LS_SYNCTEST_STATE ? LS_ERR_DESYNC : LS_ERR_IO;
}

// The message of the first failure (also given again by later calls).
static ls_result explain(const ls_synctest *st, ls_error *err)
{
    const ls_synctest_report *r = &st->rep;
    switch (r->failure) {
    case LS_SYNCTEST_CHECKSUM:
        ls_error_set(err, st->failed,
                     "tick %u: re-simulated after rolling back %u ticks, its checksum is "
                     "%016llx; the first simulation gave %016llx",
                     r->tick, r->distance, (unsigned long long)r->again,
                     (unsigned long long)r->first);
        break;
    case LS_SYNCTEST_STATE:
        ls_error_set(err, st->failed,
                     "tick %u: re-simulated after rolling back %u ticks, the state saved after "
                     "it differs from the first simulation's (same checksum: state missing "
                     "from the checksum?)",
                     r->tick, r->distance);
        break;
    case LS_SYNCTEST_SAVE_FAILED:
        ls_error_set(err, st->failed, "tick %u: saving the state failed", r->tick);
        break;
    case LS_SYNCTEST_LOAD_FAILED:
        ls_error_set(err, st->failed, "tick %u: loading the saved state failed (rollback of %u)",
                     r->tick, r->distance);
        break;
    case LS_SYNCTEST_OK:
        ls_error_clear(err);
        return LS_OK;
    }
    if (err) {
        err->tick = r->tick;
    }
    return st->failed;
}

static uint8_t *row_of(ls_synctest *st, uint32_t tick)
{
    size_t row = (size_t)st->def.slots * st->def.input_size;
    return st->inputs + (size_t)(tick % st->ncells) * row;
}

static uint64_t run_tick(ls_synctest *st, uint32_t tick)
{
    return st->def.cb.advance(st->def.cb.user, tick, row_of(st, tick), st->def.slots,
                              st->def.input_size);
}

ls_result ls_synctest_step(ls_synctest *st, ls_error *err)
{
    if (st->failed != LS_OK) {
        return explain(st, err);
    }
    uint32_t n = st->next;
    if (!st->started) {
        st->started = true;
        if (!save_into(st, &st->cells[0], 0)) {
            fail(st, LS_SYNCTEST_SAVE_FAILED, 0, 0);
            return explain(st, err);
        }
    }
    // First simulation of tick n.
    uint8_t *in = row_of(st, n);
    memset(in, 0, (size_t)st->def.slots * st->def.input_size);
    if (st->def.cb.inputs && st->def.slots > 0) {
        st->def.cb.inputs(st->def.cb.user, n, in, st->def.slots, st->def.input_size);
    }
    uint64_t c = run_tick(st, n);
    st->sums[n % st->ncells] = c;
    st->rep.last_checksum = c;
    st->rep.ticks++;
    st->next = n + 1;
    if (!save_into(st, &st->cells[st->next % st->ncells], st->next)) {
        fail(st, LS_SYNCTEST_SAVE_FAILED, st->next, 0);
        return explain(st, err);
    }
    // Roll back k ticks and simulate them again.
    uint32_t span = st->def.max_distance - st->def.min_distance + 1;
    uint32_t k = st->def.min_distance + n % span;
    k = k < st->next ? k : st->next;
    uint32_t from = st->next - k;
    const cell *back = &st->cells[from % st->ncells];
    if (back->tag != from + 1 || !st->def.cb.load(st->def.cb.user, from, back->buf, back->len)) {
        fail(st, LS_SYNCTEST_LOAD_FAILED, from, k);
        return explain(st, err);
    }
    for (uint32_t u = from; u < st->next; u++) {
        uint64_t again = run_tick(st, u);
        st->rep.resimulated++;
        if (again != st->sums[u % st->ncells]) {
            st->rep.first = st->sums[u % st->ncells];
            st->rep.again = again;
            fail(st, LS_SYNCTEST_CHECKSUM, u, k);
            return explain(st, err);
        }
        if (st->def.compare_states) {
            const cell *orig = &st->cells[(u + 1) % st->ncells];
            if (!save_into(st, &st->scratch, u + 1)) {
                fail(st, LS_SYNCTEST_SAVE_FAILED, u + 1, k);
                return explain(st, err);
            }
            if (orig->tag != u + 2 || st->scratch.len != orig->len ||
                memcmp(st->scratch.buf, orig->buf, orig->len) != 0) {
                fail(st, LS_SYNCTEST_STATE, u, k);
                return explain(st, err);
            }
        }
    }
    ls_error_clear(err);
    return LS_OK;
}

ls_result ls_synctest_run(ls_synctest *st, uint32_t ticks, ls_error *err)
{
    for (uint32_t i = 0; i < ticks; i++) {
        ls_result r = ls_synctest_step(st, err);
        if (r != LS_OK) {
            return r;
        }
    }
    ls_error_clear(err);
    return LS_OK;
}

ls_synctest_report ls_synctest_report_get(const ls_synctest *st)
{
    return st->rep;
}
