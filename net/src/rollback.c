// SPDX-License-Identifier: MIT
// The rollback core (SPEC.md "Rollback and SyncTest").
//
// State stack and seed 000's off-by-one (§4.5). The thesis pushes the state
// *after* each step; rolling back k steps then lands one step short unless the
// stack holds k + 1 entries. Here the state saved for tick t is the state at
// the *start* of tick t (after t - 1), saved just before t is simulated for
// the first time and again before each re-simulation of t. A correction at
// tick t loads exactly that state and re-simulates t .. present - 1, i.e.
// present - t ticks. Ticks are only ever simulated below confirmed + W (the
// prediction window), and a correction can only concern a tick at or above
// the confirmed frontier, so the loadable states are those of ticks
// confirmed .. present - 1: at most W of them, a ring of W cells by tick % W.
//
// Input buffer (§4.5, "insertion in the middle"). Inputs arrive in any order,
// so each slot has a ring of LS_ROLLBACK_INPUT_WINDOW entries by tick, each
// tagged with its tick; a slot's frontier is its first unknown tick. A second
// ring per slot holds what the latest simulation of each tick used (the known
// input or a prediction): an arriving input is compared with it, and only a
// difference causes a correction. Several corrections between two frames
// collapse into one load at the earliest of them.
//
// Determinism of the result does not depend on prediction or arrival order:
// every tick below the confirmed frontier has been (re-)simulated with the
// known inputs from a state produced the same way, so its checksum is final;
// only those are compared between peers (§4.6's correctness horizon).
#include "ls/net_rollback.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING LS_ROLLBACK_INPUT_WINDOW
#define NONE UINT32_MAX

// The empty input (ticks below the delay, disconnected slots). Read-only.
static const uint8_t zero_input[LS_ROLLBACK_MAX_INPUT];

typedef struct state_cell {
    uint8_t *buf;
    size_t len, cap;
    uint32_t tag; // tick + 1 of the saved state, 0: none
} state_cell;

struct ls_rollback {
    ls_rollback_def def;
    uint32_t slots, isz, window, delay;
    uint8_t *in;         // [slot][RING][isz] known inputs
    uint32_t *in_tag;    // [slot][RING] tick + 1 of the stored input, 0: none
    uint8_t *used;       // [slot][RING][isz] input of the latest simulation of the tick
    uint32_t *used_tag;  // [slot][RING] tick + 1
    uint8_t *used_pred;  // [slot][RING] 1: `used` was a prediction not yet confirmed
    uint64_t *rcsum;     // [slot][RING] remote checksums
    uint32_t *rcsum_tag; // [slot][RING] tick + 1
    uint8_t last[LS_ROLLBACK_MAX_SLOTS][LS_ROLLBACK_MAX_INPUT]; // input at frontier - 1
    uint32_t frontier[LS_ROLLBACK_MAX_SLOTS]; // first unknown tick (NONE: all known)
    bool gone[LS_ROLLBACK_MAX_SLOTS];
    uint32_t gone_tick[LS_ROLLBACK_MAX_SLOTS];
    state_cell *cells; // [window]
    uint64_t csum[RING];
    uint32_t csum_tag[RING];
    uint32_t present; // next tick to simulate for the first time
    uint32_t valid;   // the game holds the state at the start of this tick
    uint32_t pending; // a correction must re-simulate from this tick (NONE: none)
    uint32_t loaded;  // the state of this tick was just loaded (NONE: not)
    uint32_t final_;  // ticks below have final checksums, compared with remote ones
    // time sync
    int32_t samples[LS_ROLLBACK_TIME_SYNC_SAMPLES];
    uint32_t nsamples, sample_at, since_skip;
    int32_t remote_adv[LS_ROLLBACK_MAX_SLOTS];
    bool has_remote_adv[LS_ROLLBACK_MAX_SLOTS];
    bool ahead_override;
    int32_t ahead_frames;
    bool waiting;
    uint32_t wait_slot;
    uint8_t row[LS_ROLLBACK_MAX_SLOTS * LS_ROLLBACK_MAX_INPUT];
    ls_rollback_stats st;
};

ls_rollback_def ls_default_rollback_def(void)
{
    ls_rollback_def d;
    memset(&d, 0, sizeof d);
    d.slots = 2;
    d.input_size = 1;
    d.local_slot = 0;
    d.input_delay = 0;
    d.max_prediction = 8;
    d.resim_budget = 0;
    d.ticks = 0;
    d.time_sync_threshold = 2;
    d.time_sync_interval = 16;
    return d;
}

// Names the first bad field of a definition (and what is wrong), or NULL.
static const char *def_problem(const ls_rollback_def *d, const char **field)
{
    if (d->slots < 1 || d->slots > LS_ROLLBACK_MAX_SLOTS) {
        *field = "slots";
        return "slots must be 1..LS_ROLLBACK_MAX_SLOTS";
    }
    if (d->input_size < 1 || d->input_size > LS_ROLLBACK_MAX_INPUT) {
        *field = "input_size";
        return "input_size must be 1..LS_ROLLBACK_MAX_INPUT";
    }
    if (d->local_slot != LS_ROLLBACK_NO_SLOT && d->local_slot >= d->slots) {
        *field = "local_slot";
        return "local_slot must be below slots (or LS_ROLLBACK_NO_SLOT)";
    }
    if (d->input_delay > LS_ROLLBACK_MAX_DELAY) {
        *field = "input_delay";
        return "input_delay must be 0..LS_ROLLBACK_MAX_DELAY";
    }
    if (d->max_prediction > LS_ROLLBACK_MAX_PREDICTION) {
        *field = "max_prediction";
        return "max_prediction must be 0..LS_ROLLBACK_MAX_PREDICTION";
    }
    if (d->time_sync_interval < 1) {
        *field = "time_sync_interval";
        return "time_sync_interval must be at least 1";
    }
    if (!d->cb.advance) {
        *field = "cb.advance";
        return "the advance callback is required";
    }
    if (d->max_prediction > 0 && (!d->cb.save || !d->cb.load)) {
        *field = "cb.save";
        return "save and load callbacks are required when max_prediction > 0";
    }
    if (d->local_slot != LS_ROLLBACK_NO_SLOT && !d->cb.local_input) {
        *field = "cb.local_input";
        return "the local_input callback is required when local_slot is set";
    }
    return NULL;
}

ls_rollback *ls_rollback_create(const ls_rollback_def *def, ls_error *err)
{
    const char *field = "";
    const char *problem = def ? def_problem(def, &field) : "no rollback definition";
    if (problem) {
        ls_error_set(err, LS_ERR_INVALID_ARGUMENT, "%s", problem);
        if (err) {
            snprintf(err->field, sizeof err->field, "%s", field);
        }
        return NULL;
    }
    ls_rollback *rb = calloc(1, sizeof *rb);
    if (!rb) {
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    rb->def = *def;
    rb->slots = def->slots;
    rb->isz = def->input_size;
    rb->window = def->max_prediction;
    rb->delay = def->input_delay;
    size_t entries = (size_t)rb->slots * RING;
    rb->in = calloc(entries, rb->isz);
    rb->in_tag = calloc(entries, sizeof *rb->in_tag);
    rb->used = calloc(entries, rb->isz);
    rb->used_tag = calloc(entries, sizeof *rb->used_tag);
    rb->used_pred = calloc(entries, 1);
    rb->rcsum = calloc(entries, sizeof *rb->rcsum);
    rb->rcsum_tag = calloc(entries, sizeof *rb->rcsum_tag);
    rb->cells = calloc(rb->window ? rb->window : 1, sizeof *rb->cells);
    if (!rb->in || !rb->in_tag || !rb->used || !rb->used_tag || !rb->used_pred || !rb->rcsum ||
        !rb->rcsum_tag || !rb->cells) {
        ls_rollback_destroy(rb);
        ls_error_set(err, LS_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    for (uint32_t k = 0; k < rb->slots; k++) {
        rb->frontier[k] = rb->delay;
    }
    rb->pending = NONE;
    rb->loaded = NONE;
    ls_error_clear(err);
    return rb;
}

void ls_rollback_destroy(ls_rollback *rb)
{
    if (!rb) {
        return;
    }
    if (rb->cells) {
        for (uint32_t i = 0; i < rb->window; i++) {
            free(rb->cells[i].buf);
        }
    }
    free(rb->cells);
    free(rb->in);
    free(rb->in_tag);
    free(rb->used);
    free(rb->used_tag);
    free(rb->used_pred);
    free(rb->rcsum);
    free(rb->rcsum_tag);
    free(rb);
}

static void emit(ls_rollback *rb, const ls_rollback_event *ev)
{
    if (rb->def.cb.on_event) {
        rb->def.cb.on_event(rb->def.cb.user, ev);
    }
}

static size_t at(uint32_t k, uint32_t t)
{
    return (size_t)k * RING + t % RING;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

static bool is_empty_tick(const ls_rollback *rb, uint32_t k, uint32_t t)
{
    return t < rb->delay || (rb->gone[k] && t >= rb->gone_tick[k]);
}

// The known input of slot k at tick t, or NULL (unknown, or too old to be held).
static const uint8_t *known_input(const ls_rollback *rb, uint32_t k, uint32_t t)
{
    if (is_empty_tick(rb, k, t)) {
        return zero_input;
    }
    size_t i = at(k, t);
    return rb->in_tag[i] == t + 1 ? rb->in + i * rb->isz : NULL;
}

static uint32_t confirmed(const ls_rollback *rb)
{
    uint32_t cf = NONE;
    for (uint32_t k = 0; k < rb->slots; k++) {
        cf = min_u32(cf, rb->frontier[k]);
    }
    return cf;
}

// The oldest tick whose inputs, used inputs or state may still be read.
static uint32_t oldest_needed(const ls_rollback *rb)
{
    return min_u32(min_u32(confirmed(rb), rb->pending), rb->valid);
}

static void advance_frontier(ls_rollback *rb, uint32_t k)
{
    while (rb->frontier[k] != NONE) {
        uint32_t t = rb->frontier[k];
        if (rb->gone[k] && t >= rb->gone_tick[k]) {
            rb->frontier[k] = NONE;
            return;
        }
        const uint8_t *v = known_input(rb, k, t);
        if (!v) {
            return;
        }
        memcpy(rb->last[k], v, rb->isz);
        rb->frontier[k] = t + 1;
    }
}

// The guess for slot k at tick t (unknown): its nearest known earlier input,
// then the game's predictor if any.
static void predict(ls_rollback *rb, uint32_t k, uint32_t t, uint8_t *out)
{
    const uint8_t *base = rb->last[k];
    for (uint32_t s = t; s-- > rb->frontier[k];) {
        const uint8_t *v = known_input(rb, k, s);
        if (v) {
            base = v;
            break;
        }
    }
    memcpy(out, base, rb->isz);
    if (rb->def.cb.predict) {
        rb->def.cb.predict(rb->def.cb.user, k, t, out, rb->isz);
    }
}

// Simulate tick t with the known inputs and predictions for the rest; record
// what was used and the checksum.
static void simulate(ls_rollback *rb, uint32_t t)
{
    uint32_t mask = 0;
    for (uint32_t k = 0; k < rb->slots; k++) {
        size_t i = at(k, t);
        uint8_t *u = rb->used + i * rb->isz;
        const uint8_t *v = known_input(rb, k, t);
        if (v) {
            memcpy(u, v, rb->isz);
            rb->used_pred[i] = 0;
        } else {
            predict(rb, k, t, u);
            rb->used_pred[i] = 1;
            mask |= 1u << k;
        }
        rb->used_tag[i] = t + 1;
        memcpy(rb->row + (size_t)k * rb->isz, u, rb->isz);
    }
    uint64_t c = rb->def.cb.advance(rb->def.cb.user, t, rb->row, rb->slots, rb->isz, mask);
    rb->csum[t % RING] = c;
    rb->csum_tag[t % RING] = t + 1;
}

// A slot's input for tick t is now known: count the prediction, and schedule a
// correction if the latest simulation of t used something else.
static void check_used(ls_rollback *rb, uint32_t k, uint32_t t, const uint8_t *actual)
{
    size_t i = at(k, t);
    if (rb->used_tag[i] != t + 1) {
        return; // not simulated yet
    }
    bool same = memcmp(rb->used + i * rb->isz, actual, rb->isz) == 0;
    if (rb->used_pred[i]) {
        rb->used_pred[i] = 0;
        rb->st.predicted++;
        rb->st.predicted_hits += same;
    }
    if (!same && rb->window == 0) {
        // Without prediction nothing is simulated before it is known, so this is an
        // input that contradicts a simulated tick (a driver that announced an input wrong):
        // there is no state to correct from; counted, and left to the checksum comparison.
        rb->st.conflicts++;
    } else if (!same && t < rb->valid && t < rb->pending) {
        rb->pending = t;
    }
}

ls_result ls_rollback_add_input(ls_rollback *rb, uint32_t k, uint32_t t, const uint8_t *input)
{
    if (k >= rb->slots || !input) {
        return LS_ERR_INVALID_ARGUMENT;
    }
    if (is_empty_tick(rb, k, t)) {
        rb->st.duplicates++; // defined as empty: nothing to learn
        return LS_OK;
    }
    if ((rb->def.ticks && t >= rb->def.ticks) || t == NONE) {
        rb->st.refused++;
        return LS_ERR_OUT_OF_RANGE;
    }
    if (t < rb->frontier[k] || known_input(rb, k, t)) {
        const uint8_t *v = known_input(rb, k, t);
        if (v && memcmp(v, input, rb->isz) != 0) {
            rb->st.conflicts++;
            return LS_ERR_CORRUPT;
        }
        rb->st.duplicates++;
        return LS_OK;
    }
    if (t - oldest_needed(rb) >= RING) {
        rb->st.refused++;
        return LS_ERR_OUT_OF_RANGE;
    }
    size_t i = at(k, t);
    memcpy(rb->in + i * rb->isz, input, rb->isz);
    rb->in_tag[i] = t + 1;
    check_used(rb, k, t, input);
    if (t == rb->frontier[k]) {
        advance_frontier(rb, k);
    }
    return LS_OK;
}

void ls_rollback_disconnect(ls_rollback *rb, uint32_t k, uint32_t d)
{
    if (k >= rb->slots || rb->gone[k]) {
        return;
    }
    // Inputs already known stand: a notice below the frontier starts at the frontier.
    uint32_t f = rb->frontier[k];
    rb->gone[k] = true;
    rb->gone_tick[k] = d > f ? d : f;
    uint32_t lim = min_u32(rb->valid, rb->pending);
    for (uint32_t t = rb->gone_tick[k]; t < lim; t++) {
        check_used(rb, k, t, zero_input);
    }
    advance_frontier(rb, k);
}

static bool save_state(ls_rollback *rb, uint32_t t)
{
    // No cells without prediction (max_prediction 0): never called then, refused if it were.
    state_cell *c = rb->window ? &rb->cells[t % rb->window] : NULL;
    for (int attempt = 0; c && attempt < 2; attempt++) {
        size_t n = rb->def.cb.save(rb->def.cb.user, t, c->buf, c->cap);
        if (n == 0) {
            break;
        }
        if (n <= c->cap) {
            c->len = n;
            c->tag = t + 1;
            return true;
        }
        size_t cap = n + n / 4;
        uint8_t *b = realloc(c->buf, cap);
        if (!b) {
            break;
        }
        c->buf = b;
        c->cap = cap;
    }
    if (c) {
        c->tag = 0;
    }
    rb->st.errors++;
    ls_rollback_event ev = {LS_ROLLBACK_EV_ERROR, 0, t, rb->present, 0, 0, 0, 0};
    emit(rb, &ev);
    return false;
}

static bool load_state(ls_rollback *rb, uint32_t t)
{
    const state_cell *c = rb->window ? &rb->cells[t % rb->window] : NULL;
    if (c && c->tag == t + 1 && rb->def.cb.load(rb->def.cb.user, t, c->buf, c->len)) {
        return true;
    }
    rb->st.errors++;
    ls_rollback_event ev = {LS_ROLLBACK_EV_ERROR, 0, t, rb->present, 1, 0, 0, 0};
    emit(rb, &ev);
    return false;
}

static uint32_t final_frontier(const ls_rollback *rb)
{
    return min_u32(min_u32(confirmed(rb), rb->pending), rb->valid);
}

static void compare_checksum(ls_rollback *rb, uint32_t k, uint32_t t, uint64_t remote)
{
    if (rb->csum_tag[t % RING] != t + 1 || rb->csum[t % RING] == remote) {
        return;
    }
    if (rb->st.desyncs++ == 0) {
        rb->st.first_desync = t;
    }
    ls_rollback_event ev = {LS_ROLLBACK_EV_DESYNC, k,     t, rb->present, 0, 0,
                            rb->csum[t % RING],    remote};
    emit(rb, &ev);
}

// Move the final frontier and compare the remote checksums it passes.
static void update_final(ls_rollback *rb)
{
    uint32_t f = final_frontier(rb);
    for (uint32_t t = rb->final_; t < f; t++) {
        for (uint32_t k = 0; k < rb->slots; k++) {
            size_t i = at(k, t);
            if (rb->rcsum_tag[i] == t + 1) {
                compare_checksum(rb, k, t, rb->rcsum[i]);
                rb->rcsum_tag[i] = 0;
            }
        }
    }
    if (f > rb->final_) {
        rb->final_ = f;
    }
}

void ls_rollback_add_remote_checksum(ls_rollback *rb, uint32_t k, uint32_t t, uint64_t checksum)
{
    if (k >= rb->slots || t == NONE) {
        return;
    }
    if (t < rb->final_) {
        compare_checksum(rb, k, t, checksum); // too old to be held: not compared
        return;
    }
    if (t - rb->final_ >= RING) {
        return; // too far ahead; the sender repeats unacknowledged checksums
    }
    size_t i = at(k, t);
    rb->rcsum[i] = checksum;
    rb->rcsum_tag[i] = t + 1;
}

int32_t ls_rollback_local_advantage(const ls_rollback *rb, uint32_t k)
{
    if (k >= rb->slots || rb->frontier[k] == NONE) {
        return 0;
    }
    int64_t v = (int64_t)rb->present - ((int64_t)rb->frontier[k] - (int64_t)rb->delay);
    return (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v);
}

void ls_rollback_remote_advantage(ls_rollback *rb, uint32_t k, int32_t frames)
{
    if (k < rb->slots) {
        rb->remote_adv[k] = frames;
        rb->has_remote_adv[k] = true;
    }
}

void ls_rollback_set_frames_ahead(ls_rollback *rb, int32_t frames)
{
    rb->ahead_override = true;
    rb->ahead_frames = frames;
}

// One time-sync sample per frame: our lead over the slowest live slot.
static void time_sync_sample(ls_rollback *rb)
{
    bool any = rb->ahead_override;
    int64_t ahead = rb->ahead_frames;
    if (!rb->ahead_override) {
        for (uint32_t k = 0; k < rb->slots; k++) {
            if (k == rb->def.local_slot || rb->frontier[k] == NONE || !rb->has_remote_adv[k]) {
                continue;
            }
            int64_t v = ((int64_t)ls_rollback_local_advantage(rb, k) - rb->remote_adv[k]) / 2;
            ahead = any && ahead > v ? ahead : v;
            any = true;
        }
    }
    rb->since_skip++;
    if (!any) {
        return;
    }
    ahead = ahead < -1000000 ? -1000000 : ahead > 1000000 ? 1000000 : ahead;
    rb->samples[rb->sample_at] = (int32_t)ahead;
    rb->sample_at = (rb->sample_at + 1) % LS_ROLLBACK_TIME_SYNC_SAMPLES;
    if (rb->nsamples < LS_ROLLBACK_TIME_SYNC_SAMPLES) {
        rb->nsamples++;
    }
    int64_t sum = 0;
    for (uint32_t i = 0; i < rb->nsamples; i++) {
        sum += rb->samples[i];
    }
    rb->st.frames_ahead = (int32_t)(sum / (int64_t)rb->nsamples);
}

static bool time_sync_skip(ls_rollback *rb)
{
    uint32_t th = rb->def.time_sync_threshold;
    if (th == 0 || rb->nsamples < LS_ROLLBACK_TIME_SYNC_SAMPLES ||
        rb->st.frames_ahead < (int32_t)th || rb->since_skip < rb->def.time_sync_interval) {
        return false;
    }
    rb->since_skip = 0;
    rb->st.time_sync_skips++;
    ls_rollback_event ev = {
        LS_ROLLBACK_EV_TIME_SYNC, 0, rb->present, rb->present, 0, rb->st.frames_ahead, 0, 0};
    emit(rb, &ev);
    return true;
}

// Produce the local input for present + D (once per tick).
static void local_input(ls_rollback *rb)
{
    uint32_t k = rb->def.local_slot;
    if (k == LS_ROLLBACK_NO_SLOT) {
        return;
    }
    uint64_t t = (uint64_t)rb->present + rb->delay;
    if (t >= NONE || (rb->def.ticks && t >= rb->def.ticks) || known_input(rb, k, (uint32_t)t) ||
        t < rb->frontier[k]) {
        return;
    }
    uint8_t buf[LS_ROLLBACK_MAX_INPUT];
    memset(buf, 0, sizeof buf);
    rb->def.cb.local_input(rb->def.cb.user, (uint32_t)t, buf, rb->isz);
    ls_rollback_add_input(rb, k, (uint32_t)t, buf);
}

// Load the state for a pending correction and re-simulate towards the present,
// within the budget. Returns false when the frame must end here (status set).
static bool correct(ls_rollback *rb, uint32_t *resim, ls_rollback_status *status)
{
    if (rb->pending != NONE) {
        uint32_t u = rb->pending;
        if (!load_state(rb, u)) {
            *status = LS_ROLLBACK_ERROR;
            return false;
        }
        uint32_t count = rb->present - u;
        rb->st.rollbacks++;
        rb->st.max_rollback = count > rb->st.max_rollback ? count : rb->st.max_rollback;
        ls_rollback_event ev = {LS_ROLLBACK_EV_ROLLBACK, 0, u, rb->present, count, 0, 0, 0};
        emit(rb, &ev);
        rb->valid = u;
        rb->pending = NONE;
        rb->loaded = u;
    }
    while (rb->valid < rb->present) {
        if (rb->def.resim_budget && *resim >= rb->def.resim_budget) {
            rb->st.budget_frames++;
            *status = LS_ROLLBACK_CATCHING_UP;
            return false;
        }
        // The state of a re-simulated tick replaces the mispredicted one (the
        // loaded tick's is unchanged).
        if (rb->valid != rb->loaded && !save_state(rb, rb->valid)) {
            *status = LS_ROLLBACK_ERROR;
            return false;
        }
        simulate(rb, rb->valid);
        rb->loaded = NONE;
        rb->valid++;
        (*resim)++;
    }
    return true;
}

// Name the slot holding the window back (lowest frontier; ties: lowest slot).
static void wait_for(ls_rollback *rb)
{
    uint32_t slot = 0, f = NONE;
    for (uint32_t k = 0; k < rb->slots; k++) {
        if (rb->frontier[k] < f) {
            f = rb->frontier[k];
            slot = k;
        }
    }
    rb->st.waits++;
    if (!rb->waiting || rb->wait_slot != slot) {
        ls_rollback_event ev = {LS_ROLLBACK_EV_WAITING, slot, f, rb->present, 0, 0, 0, 0};
        emit(rb, &ev);
    }
    rb->waiting = true;
    rb->wait_slot = slot;
}

ls_rollback_status ls_rollback_advance(ls_rollback *rb)
{
    rb->st.frames++;
    time_sync_sample(rb);
    uint32_t resim = 0;
    ls_rollback_status status = LS_ROLLBACK_ADVANCED;
    if (correct(rb, &resim, &status)) {
        local_input(rb);
        bool full = (uint64_t)rb->present >= (uint64_t)confirmed(rb) + rb->window;
        rb->waiting = rb->waiting && full;
        if (rb->def.ticks && rb->present >= rb->def.ticks) {
            status = LS_ROLLBACK_FINISHED;
        } else if (full) {
            wait_for(rb);
            status = LS_ROLLBACK_WAITING;
        } else if (time_sync_skip(rb)) {
            status = LS_ROLLBACK_SKIPPED;
        } else if (rb->window > 0 && !save_state(rb, rb->present)) {
            status = LS_ROLLBACK_ERROR;
        } else {
            simulate(rb, rb->present);
            rb->present++;
            rb->valid = rb->present;
            rb->st.advanced++;
        }
    }
    rb->st.resimulated += resim;
    rb->st.max_resim_frame = resim > rb->st.max_resim_frame ? resim : rb->st.max_resim_frame;
    update_final(rb);
    return status;
}

void ls_rollback_reset(ls_rollback *rb, uint32_t tick)
{
    size_t entries = (size_t)rb->slots * RING;
    memset(rb->in_tag, 0, entries * sizeof *rb->in_tag);
    memset(rb->used_tag, 0, entries * sizeof *rb->used_tag);
    memset(rb->used_pred, 0, entries);
    memset(rb->rcsum_tag, 0, entries * sizeof *rb->rcsum_tag);
    memset(rb->csum_tag, 0, sizeof rb->csum_tag);
    for (uint32_t i = 0; i < rb->window; i++) {
        rb->cells[i].tag = 0;
    }
    // The inputs below the snapshot's tick are folded into its state: the frontier
    // starts there (and the prediction base is the empty input, as at tick 0).
    for (uint32_t k = 0; k < rb->slots; k++) {
        rb->frontier[k] = tick > rb->delay ? tick : rb->delay;
        rb->gone[k] = false;
        rb->gone_tick[k] = 0;
        memset(rb->last[k], 0, sizeof rb->last[k]);
    }
    rb->present = rb->valid = rb->final_ = tick;
    rb->pending = rb->loaded = NONE;
    rb->nsamples = rb->sample_at = rb->since_skip = 0;
    memset(rb->has_remote_adv, 0, sizeof rb->has_remote_adv);
    rb->waiting = false;
}

bool ls_rollback_saved_state(const ls_rollback *rb, uint32_t tick, const uint8_t **buf, size_t *len)
{
    if (rb->window == 0 || tick >= rb->present || tick > final_frontier(rb)) {
        return false;
    }
    const state_cell *c = &rb->cells[tick % rb->window];
    if (c->tag != tick + 1) {
        return false;
    }
    *buf = c->buf;
    *len = c->len;
    return true;
}

uint32_t ls_rollback_present(const ls_rollback *rb)
{
    return rb->present;
}

uint32_t ls_rollback_confirmed(const ls_rollback *rb)
{
    return confirmed(rb);
}

uint32_t ls_rollback_final(const ls_rollback *rb)
{
    return final_frontier(rb);
}

bool ls_rollback_checksum(const ls_rollback *rb, uint32_t tick, uint64_t *out)
{
    if (tick >= rb->present || rb->csum_tag[tick % RING] != tick + 1) {
        return false;
    }
    *out = rb->csum[tick % RING];
    return true;
}

bool ls_rollback_input(const ls_rollback *rb, uint32_t k, uint32_t tick, uint8_t *out)
{
    if (k >= rb->slots || tick == NONE) {
        return false;
    }
    const uint8_t *v = known_input(rb, k, tick);
    if (!v) {
        return false;
    }
    memcpy(out, v, rb->isz);
    return true;
}

uint32_t ls_rollback_frontier(const ls_rollback *rb, uint32_t k)
{
    return k < rb->slots ? rb->frontier[k] : 0;
}

ls_rollback_stats ls_rollback_stats_get(const ls_rollback *rb)
{
    return rb->st;
}
