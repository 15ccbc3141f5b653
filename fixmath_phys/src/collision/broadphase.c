// SPDX-License-Identifier: MIT
// Incremental single-axis sweep-and-prune with a canonical, history-free result.
//
// Determinism argument, in short:
//  * endpoints are 64-bit keys (value, kind, id) with kind min=0 < max=1; ids are
//    unique, so the key order is total and every correct sort yields the same
//    sequence, whatever order the keys were in before (insertion or radix);
//  * the sweep axis depends only on the current AABBs;
//  * the pairs found are radix-sorted on the unique key a<<s|b, so their order
//    does not depend on the order the sweep met them in (the active list is
//    swap-removed, which is fine for the same reason).
// Hence the kept endpoint order affects only speed, never results, and
// snapshots need not store it.
//
// Fat boxes. The sweep runs on each proxy's fat box -- its box grown by
// LS_BROADPHASE_FAT when it was last set outside the previous fat box -- and
// keeps the fat pairs; each ls_broadphase_pairs_ call then keeps the fat pairs
// whose own boxes overlap. Why: in a pile every awake body moves a little
// each tick, so every box changes and the whole sweep (endpoint refresh,
// sort, sweep, pair sort: about 6 % of a 5,050-box pyramid's tick) ran every
// tick; a fat box changes only when its body has moved a tenth of a metre,
// so most ticks only filter the kept pairs. The result is the same set: a
// pair whose boxes overlap has overlapping fat boxes (each contains its box),
// so it is among the fat pairs, and the filter applies the same closed test
// the sweep does. If the fat pairs would not fit in the pair buffer, the
// broad phase sweeps the boxes themselves from then on (fat = box), exactly
// as without fat boxes.
//
// Incremental sweep. A fat pair of two proxies whose fat boxes did not change
// (not `moved`) since the last sweep is still a fat pair, so a sweep keeps
// those and finds only the pairs with a moved proxy: when a proxy opens, a
// moved one is tested against every open proxy, an unmoved one only against
// the open moved ones (a pair is met when its later proxy opens). The kept
// and the found pairs are both sorted and disjoint, and are merged. In a
// sinking pyramid a few bodies leave their fat boxes each tick; the sweep's
// inner loop, most of its cost, then runs for those alone.
//
// Bands. A proxy being opened is tested only against the open proxies that
// may overlap it on one more axis: each sweep cuts the wider-spread of the two
// other axes into up to MAX_BANDS bands of one width W (at least twice the
// mean fat-box width there), files each open proxy no wider than W under the
// band of its lower end, and tests a new proxy against the bands from that of
// (its lower end - W) to that of its upper end. A filed proxy overlapping it
// starts no earlier than its lower end minus W (it is at most W wide), so it
// is in those bands. The wider proxies are filed the same way in a second set
// of up to MAX_BANDS bands of width W2 (twice their mean width), and the
// proxies wider than W2 in one last band that every new proxy is tested
// against. The same pairs, in another order, which the sort removes. Why: in
// a scene spread over a plane (Box3D's rain: ragdolls over a 4 x 20 grid of
// cells of two meshes each) about 300 proxies are open at each point of the
// sweep axis, and testing each of 1,500 moved ones against all of them was
// two thirds of the broad phase.
//
// Segments. A broad phase created with S > 1 segments may cut a sweep into S
// runs of endpoints swept at once (ls_broadphase_pairs_run_): a first pass
// over the endpoints without any test lists the proxies open where each run
// starts, each run files those in its own lists and then sweeps its
// endpoints, testing the proxies that open in it, into its own slice of the
// found pairs. Every pair is met once, when its later proxy opens, in the run
// that holds that endpoint; the slices are joined and sorted as before. If a
// slice fills up, the whole sweep is done again in one run, whose pair
// buffer prunes (above): the same result either way.
#include "broadphase.h"

#include <stdlib.h>
#include <string.h>

enum { RADIX_BITS = 11, RADIX_SIZE = 1 << RADIX_BITS };

/// Most bands of a sweep (plus the wide band).
enum { MAX_BANDS = 64 };

/// Fewest endpoints for a sweep in segments (below, one run is cheaper).
enum { MIN_SEGMENT_ENDS = 1024 };

typedef struct proxy {
    ls_aabb box; ///< As last set.
    ls_aabb fat; ///< Contains box; what the endpoints and the sweep use.
    uint32_t category;
    uint32_t mask;
    uint32_t group; ///< Proxies of one group (the shapes of one body) never pair.
    bool is_static;
    bool active;  ///< Present (set and not removed).
    bool in_list; ///< Its two endpoints are in bp->ends.
    bool moved;   ///< Its fat box or filter changed since the last sweep.
} proxy;

/// The two non-sweep extents of a proxy open in the sweep, packed for the hot loop.
typedef struct open_box {
    ls_fx umin, umax, vmin, vmax;
} open_box;

/// The rest of an open proxy, read only for candidates that overlap.
typedef struct open_meta {
    uint32_t category;
    uint32_t mask;
    uint32_t id;
    uint32_t is_static;
    uint32_t group;
} open_meta;

/// The working lists of one run of a sweep (the whole sweep, or a segment).
typedef struct sweep_lists {
    open_box *open_box;    ///< [cap] extents of the proxies open at the sweep position.
    open_meta *open_meta;  ///< [cap] their filters and ids, same index.
    uint32_t *open_pos;    ///< [cap] index of each open proxy in open_box/open_meta.
    open_box *moved_box;   ///< [cap] the open moved proxies' extents (incremental sweep).
    open_meta *moved_meta; ///< [cap] their filters and ids.
    uint32_t *moved_pos;   ///< [cap] index of each open moved proxy in moved_box/moved_meta.
    uint32_t *cand;        ///< [cap] open indices that overlap the proxy being opened.
} sweep_lists;

struct ls_broadphase {
    uint32_t cap;      ///< max_proxies.
    uint32_t id_bits;  ///< Bits needed for an id (>= 1).
    uint32_t max_keep; ///< max_pairs.
    int axis;          ///< Axis the kept endpoint order was sorted on; -1 if none.
    uint32_t n_ends;   ///< Endpoints in ends[].
    proxy *proxies;    ///< [cap]
    uint64_t *ends;    ///< [2 cap] endpoint keys, sorted after each pairs() call.
    uint64_t *ends_tmp;
    sweep_lists lists[LS_BROADPHASE_MAX_SEGMENTS]; ///< one per segment
    uint32_t segments;                             ///< 1..LS_BROADPHASE_MAX_SEGMENTS
    uint8_t *band;   ///< [cap] band of each proxy in the current sweep (bands).
    uint64_t *pairs; ///< [2 max_pairs] packed pair keys; the slack lets us prune by sorting.
    uint64_t *pairs_tmp;
    uint64_t *fresh;   ///< [2 max_pairs] the pairs a sweep found, before the merge.
    uint32_t high;     ///< One past the highest id set since the last clear: loops stop here.
    bool changed;      ///< A proxy was set or removed since the last pairs() call.
    uint32_t kept;     ///< Fat pairs kept in pairs[] by the last sweep.
    bool kept_dropped; ///< The last sweep dropped pairs beyond max_pairs (only with fat_off).
    bool fat_off;      ///< Fat pairs overflowed once: fat boxes are the boxes from then on.
};

/// How far a fat box reaches beyond its box on each side: 0.1 m in Q16.16 (as
/// Box3D's AABB margin). Larger keeps more fat pairs to filter; smaller
/// sweeps more often.
#define LS_BROADPHASE_FAT 6554

// ---------------------------------------------------------------------------
// Sorting

/// LSD radix sort of n keys on their low `bits` bits; result in keys. Stable per pass.
static void radix_sort(uint64_t *keys, uint64_t *tmp, uint32_t n, uint32_t bits)
{
    if (n < 64) { // a stable insertion sort on the same bits gives the same order, faster
        uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
        for (uint32_t i = 1; i < n; i++) {
            uint64_t k = keys[i];
            uint32_t j = i;
            for (; j > 0 && (keys[j - 1] & mask) > (k & mask); j--) {
                keys[j] = keys[j - 1];
            }
            keys[j] = k;
        }
        return;
    }
    uint64_t *src = keys, *dst = tmp;
    for (uint32_t shift = 0; shift < bits; shift += RADIX_BITS) {
        uint32_t count[RADIX_SIZE] = {0};
        for (uint32_t i = 0; i < n; i++) {
            count[(src[i] >> shift) & (RADIX_SIZE - 1)]++;
        }
        uint32_t first = (uint32_t)((src[0] >> shift) & (RADIX_SIZE - 1));
        if (count[first] == n) {
            continue; // every key has the same digit: the pass would be the identity
        }
        uint32_t sum = 0;
        for (uint32_t d = 0; d < RADIX_SIZE; d++) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (uint32_t i = 0; i < n; i++) {
            dst[count[(src[i] >> shift) & (RADIX_SIZE - 1)]++] = src[i];
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys) {
        memcpy(keys, src, (size_t)n * sizeof *keys);
    }
}

/// Insertion sort that gives up after `budget` element moves; true if it finished.
/// Frame-to-frame coherence makes the endpoint list nearly sorted, so this is
/// usually O(n); the budget bounds the bad cases (teleports, mass inserts).
static bool insertion_sort_bounded(uint64_t *a, uint32_t n, uint64_t budget)
{
    uint64_t moves = 0;
    for (uint32_t i = 1; i < n; i++) {
        uint64_t k = a[i];
        uint32_t j = i;
        while (j > 0 && a[j - 1] > k) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = k;
        moves += i - j;
        if (moves > budget) {
            return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------
// Endpoint keys

static ls_fx axis_min(const ls_aabb *b, int axis)
{
    return axis == 0 ? b->min.x : axis == 1 ? b->min.y : b->min.z;
}

static ls_fx axis_max(const ls_aabb *b, int axis)
{
    return axis == 0 ? b->max.x : axis == 1 ? b->max.y : b->max.z;
}

/// Key (value, kind, id): at equal values mins sort before maxes, so a box that
/// starts where another ends opens before the other closes: touching counts.
static uint64_t end_key(const ls_broadphase *bp, uint32_t id, uint32_t is_max)
{
    const proxy *p = &bp->proxies[id];
    ls_fx v = is_max ? axis_max(&p->fat, bp->axis) : axis_min(&p->fat, bp->axis);
    uint64_t biased = (uint32_t)v ^ 0x80000000u; // order-preserving int32 -> uint32
    return (biased << (bp->id_bits + 1)) | ((uint64_t)is_max << bp->id_bits) | id;
}

static uint32_t key_id(const ls_broadphase *bp, uint64_t key)
{
    return (uint32_t)(key & ((UINT64_C(1) << bp->id_bits) - 1));
}

static uint32_t key_is_max(const ls_broadphase *bp, uint64_t key)
{
    return (uint32_t)((key >> bp->id_bits) & 1u);
}

/// Axis along which the box centres spread most (lowest axis on ties). A pure
/// function of the current AABBs; sweeping along the widest spread keeps the
/// open set small (a column of boxes is the bad case for a fixed axis).
static int choose_axis(const ls_broadphase *bp)
{
    // Start from the first proxy (not +-inf) so hi - lo cannot overflow.
    int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    bool any = false;
    for (uint32_t i = 0; i < bp->high; i++) {
        const proxy *p = &bp->proxies[i];
        if (!p->active) {
            continue;
        }
        for (int a = 0; a < 3; a++) {
            int64_t c = (int64_t)axis_min(&p->fat, a) + axis_max(&p->fat, a); // 2 * centre
            lo[a] = !any || c < lo[a] ? c : lo[a];
            hi[a] = !any || c > hi[a] ? c : hi[a];
        }
        any = true;
    }
    int best = 0;
    for (int a = 1; a < 3; a++) {
        if (hi[a] - lo[a] > hi[best] - lo[best]) {
            best = a;
        }
    }
    return best;
}

/// Drop endpoints of removed proxies, refresh the values of the others (order kept).
static void refresh_endpoints(ls_broadphase *bp)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < bp->n_ends; i++) {
        uint32_t id = key_id(bp, bp->ends[i]);
        if (!bp->proxies[id].active) {
            bp->proxies[id].in_list = false;
            continue;
        }
        bp->ends[n++] = end_key(bp, id, key_is_max(bp, bp->ends[i]));
    }
    bp->n_ends = n;
}

/// Append endpoints of proxies not yet in the list; returns how many proxies were added.
static uint32_t append_new_endpoints(ls_broadphase *bp)
{
    uint32_t added = 0;
    for (uint32_t id = 0; id < bp->high; id++) {
        proxy *p = &bp->proxies[id];
        if (p->active && !p->in_list) {
            bp->ends[bp->n_ends++] = end_key(bp, id, 0);
            bp->ends[bp->n_ends++] = end_key(bp, id, 1);
            p->in_list = true;
            added++;
        }
    }
    return added;
}

/// Bring ends[] into key order on the current axis.
static void sort_endpoints(ls_broadphase *bp, bool axis_changed, uint32_t added)
{
    uint32_t n = bp->n_ends;
    // Why these thresholds: each appended endpoint costs O(n) insertion moves,
    // and a radix sort costs ~5 passes over n; beyond ~16 moves per endpoint
    // the radix sort wins. Either way the resulting order is the same.
    bool rebuild = axis_changed || (uint64_t)added * 16 > n;
    if (!rebuild && insertion_sort_bounded(bp->ends, n, (uint64_t)n * 16 + 1024)) {
        return;
    }
    radix_sort(bp->ends, bp->ends_tmp, n, 32 + bp->id_bits + 1);
}

// ---------------------------------------------------------------------------
// Pair collection: keeps the max_keep smallest keys (canonical prefix) even when
// more pairs exist, using a buffer of twice that size that is pruned by sorting.

typedef struct pair_sink {
    uint64_t *buf; ///< [2 max_keep], or a segment's slice of it
    uint32_t n;
    uint64_t limit; ///< Keys above this can no longer be among the kept ones.
    bool dropped;   ///< Some pair was discarded.
    uint32_t slice; ///< A segment's: its room (0: the whole buffer, pruned when full)
    bool full;      ///< A segment's slice filled up (the sweep is redone in one run).
} pair_sink;

static void sink_prune(ls_broadphase *bp, pair_sink *s)
{
    radix_sort(s->buf, bp->pairs_tmp, s->n, 2 * bp->id_bits);
    s->n = bp->max_keep;
    s->limit = s->buf[s->n - 1];
    s->dropped = true;
}

static void sink_push(ls_broadphase *bp, pair_sink *s, uint32_t a, uint32_t b)
{
    uint64_t key = a < b ? ((uint64_t)a << bp->id_bits) | b : ((uint64_t)b << bp->id_bits) | a;
    if (s->slice != 0) {
        if (s->n == s->slice) {
            s->full = true;
            return;
        }
        s->buf[s->n++] = key;
        return;
    }
    if (bp->max_keep == 0 || key > s->limit) {
        s->dropped = true;
        return;
    }
    if (s->n == 2 * bp->max_keep) {
        sink_prune(bp, s);
        if (key > s->limit) {
            return;
        }
    }
    s->buf[s->n++] = key;
}

// ---------------------------------------------------------------------------
// Sweep

static open_box box_of(const ls_broadphase *bp, const proxy *p)
{
    int u = (bp->axis + 1) % 3, v = (bp->axis + 2) % 3;
    return (open_box){axis_min(&p->fat, u), axis_max(&p->fat, u), axis_min(&p->fat, v),
                      axis_max(&p->fat, v)};
}

/// Test a proxy being opened (q, qm) against open entries [0, count) of one
/// open list. Overlap on the sweep axis is implied: each of them starts at or
/// before it and has not ended before it starts.
static void test_against(ls_broadphase *bp, pair_sink *s, uint32_t *cand, open_box q, open_meta qm,
                         const open_box *box, const open_meta *meta, uint32_t count)
{
    // Why branch-free: most open proxies miss on u or v at random, which the
    // branch predictor cannot learn; compacting the hits is ~3x faster.
    uint32_t m = 0;
    for (uint32_t j = 0; j < count; j++) {
        const open_box *o = &box[j];
        cand[m] = j;
        m += (uint32_t)((o->umin <= q.umax) & (q.umin <= o->umax) & (o->vmin <= q.vmax) &
                        (q.vmin <= o->vmax));
    }
    for (uint32_t k = 0; k < m; k++) {
        const open_meta *o = &meta[cand[k]];
        if ((o->category & qm.mask) && (qm.category & o->mask) && !(o->is_static & qm.is_static) &&
            o->group != qm.group) {
            sink_push(bp, s, o->id, qm.id);
        }
    }
}

/// How a sweep files its open proxies (bands, above): along the open box's
/// v (side 1) or u extent, bands [lo + k W, lo + (k + 1) W) for k < n (the
/// first and last also take everything below and above), then n2 bands of
/// width W2 for the wider proxies, then the band n + n2 for the widest.
typedef struct band_plan {
    int side;
    int64_t lo, width, width2;
    uint32_t n, n2;
} band_plan;

/// The lower and upper ends of an open box along the plan's side.
static ls_fx band_lo(const band_plan *pl, const open_box *b)
{
    return pl->side ? b->vmin : b->umin;
}

static ls_fx band_hi(const band_plan *pl, const open_box *b)
{
    return pl->side ? b->vmax : b->umax;
}

/// The band of width `width` among n from lo that holds x.
static uint32_t band_at(int64_t lo, int64_t width, uint32_t n, int64_t x)
{
    if (x <= lo) {
        return 0;
    }
    int64_t k = (x - lo) / width;
    return k >= (int64_t)n ? n - 1 : (uint32_t)k;
}

/// The band of a proxy: that of its lower end among the bands of its width.
static uint32_t band_of_box(const band_plan *pl, const open_box *b)
{
    int64_t w = (int64_t)band_hi(pl, b) - band_lo(pl, b);
    if (w <= pl->width) {
        return band_at(pl->lo, pl->width, pl->n, band_lo(pl, b));
    }
    if (w <= pl->width2) {
        return pl->n + band_at(pl->lo, pl->width2, pl->n2, band_lo(pl, b));
    }
    return pl->n + pl->n2;
}

/// W for a set of proxies of mean width `mean` spread over `spread`.
static int64_t band_width(int64_t mean, int64_t spread)
{
    int64_t w = 2 * mean, least = spread / MAX_BANDS + 1;
    return w > least ? w : least;
}

static uint32_t band_count(int64_t width, int64_t spread)
{
    int64_t n = spread / width + 1;
    return n > MAX_BANDS ? MAX_BANDS : (uint32_t)n;
}

/// The plan of this sweep, a pure function of the proxies' fat boxes (the
/// pairs do not depend on it, only the time): the side whose lower ends
/// spread most, W = max(2 x mean width, spread / MAX_BANDS + 1), W2 the same
/// of the proxies wider than W (and more than W).
static band_plan plan_bands(const ls_broadphase *bp)
{
    int64_t lo[2] = {0, 0}, hi[2] = {0, 0}, sum[2] = {0, 0};
    uint32_t count = 0;
    for (uint32_t id = 0; id < bp->high; id++) {
        const proxy *p = &bp->proxies[id];
        if (!p->active) {
            continue;
        }
        open_box b = box_of(bp, p);
        const ls_fx l[2] = {b.umin, b.vmin}, h[2] = {b.umax, b.vmax};
        for (int k = 0; k < 2; k++) {
            lo[k] = count == 0 || l[k] < lo[k] ? l[k] : lo[k];
            hi[k] = count == 0 || l[k] > hi[k] ? l[k] : hi[k];
            sum[k] += (int64_t)h[k] - l[k];
        }
        count++;
    }
    band_plan pl = {0, 0, 1, 2, 1, 1};
    if (count == 0) {
        return pl;
    }
    pl.side = hi[1] - lo[1] > hi[0] - lo[0];
    int64_t spread = hi[pl.side] - lo[pl.side];
    pl.lo = lo[pl.side];
    pl.width = band_width(sum[pl.side] / count, spread);
    pl.n = band_count(pl.width, spread);
    int64_t wide_sum = 0;
    uint32_t wide = 0;
    for (uint32_t id = 0; id < bp->high; id++) {
        const proxy *p = &bp->proxies[id];
        if (p->active) {
            open_box b = box_of(bp, p);
            int64_t w = (int64_t)band_hi(&pl, &b) - band_lo(&pl, &b);
            wide_sum += w > pl.width ? w : 0;
            wide += w > pl.width;
        }
    }
    int64_t w2 = wide ? band_width(wide_sum / wide, spread) : pl.width + 1;
    pl.width2 = w2 > pl.width ? w2 : pl.width + 1;
    pl.n2 = band_count(pl.width2, spread);
    return pl;
}

/// Open proxies filed by band: band k holds entries [off[k], off[k] + n[k])
/// of the open arrays, room for every proxy of that band in this sweep.
typedef struct band_lists {
    uint32_t off[2 * MAX_BANDS + 1];
    uint32_t n[2 * MAX_BANDS + 1];
} band_lists;

/// Test a proxy being opened against the bands of one set of open lists it
/// may overlap (above) and the wide band.
static void test_bands(ls_broadphase *bp, pair_sink *s, uint32_t *cand, const band_plan *pl,
                       open_box q, open_meta qm, const open_box *box, const open_meta *meta,
                       const band_lists *bl)
{
    int64_t lo = band_lo(pl, &q), hi = band_hi(pl, &q);
    uint32_t b0 = band_at(pl->lo, pl->width, pl->n, lo - pl->width);
    uint32_t b1 = band_at(pl->lo, pl->width, pl->n, hi);
    uint32_t c0 = pl->n + band_at(pl->lo, pl->width2, pl->n2, lo - pl->width2);
    uint32_t c1 = pl->n + band_at(pl->lo, pl->width2, pl->n2, hi);
    for (uint32_t k = b0; k <= b1; k++) {
        if (bl->n[k] != 0) {
            test_against(bp, s, cand, q, qm, box + bl->off[k], meta + bl->off[k], bl->n[k]);
        }
    }
    for (uint32_t k = c0; k <= c1; k++) {
        if (bl->n[k] != 0) {
            test_against(bp, s, cand, q, qm, box + bl->off[k], meta + bl->off[k], bl->n[k]);
        }
    }
    uint32_t k = pl->n + pl->n2; // the widest
    if (bl->n[k] != 0) {
        test_against(bp, s, cand, q, qm, box + bl->off[k], meta + bl->off[k], bl->n[k]);
    }
}

/// Room per band: its proxies' count (moved ones only for `moved`), as offsets.
static void band_room(const ls_broadphase *bp, const band_plan *pl, bool moved, band_lists *bl)
{
    uint32_t count[2 * MAX_BANDS + 1] = {0};
    for (uint32_t id = 0; id < bp->high; id++) {
        const proxy *p = &bp->proxies[id];
        if (p->active && (!moved || p->moved)) {
            count[bp->band[id]]++;
        }
    }
    uint32_t at = 0;
    for (uint32_t k = 0; k <= pl->n + pl->n2; k++) {
        bl->off[k] = at;
        bl->n[k] = 0;
        at += count[k];
    }
}

/// One sweep's plan and rooms, shared by its runs.
typedef struct sweep_plan {
    band_plan bands;
    band_lists open, moved; ///< offsets, counts 0
    bool all;
} sweep_plan;

static sweep_plan plan_sweep(ls_broadphase *bp, bool all)
{
    sweep_plan sp;
    sp.bands = plan_bands(bp);
    sp.all = all;
    for (uint32_t id = 0; id < bp->high; id++) {
        const proxy *p = &bp->proxies[id];
        if (p->active) {
            open_box b = box_of(bp, p);
            bp->band[id] = (uint8_t)band_of_box(&sp.bands, &b);
        }
    }
    band_room(bp, &sp.bands, false, &sp.open);
    band_room(bp, &sp.bands, true, &sp.moved);
    return sp;
}

/// File proxy id (open box q) in the run's lists of its band k.
static void open_in(ls_broadphase *bp, sweep_lists *L, band_lists *open, band_lists *moved,
                    bool in_moved, uint32_t id, uint32_t k, open_box q, open_meta qm)
{
    uint32_t at = open->off[k] + open->n[k]++;
    L->open_box[at] = q;
    L->open_meta[at] = qm;
    L->open_pos[id] = at;
    if (in_moved) {
        at = moved->off[k] + moved->n[k]++;
        L->moved_box[at] = q;
        L->moved_meta[at] = qm;
        L->moved_pos[id] = at;
    }
    (void)bp;
}

/// Sweep endpoints [begin, end) with the lists of run L, which start with
/// the `nseed` proxies of seed[] open (those open at `begin`); `all`: test
/// every pair (no pair is kept from before), else only the pairs with a
/// moved proxy.
static void sweep_run(ls_broadphase *bp, const sweep_plan *sp, sweep_lists *L, pair_sink *s,
                      uint32_t begin, uint32_t end, const uint32_t *seed, uint32_t nseed)
{
    const band_plan *pl = &sp->bands;
    bool all = sp->all;
    band_lists open = sp->open, moved_open = sp->moved;
    for (uint32_t i = 0; i < nseed; i++) {
        uint32_t id = seed[i];
        const proxy *p = &bp->proxies[id];
        open_meta qm = {p->category, p->mask, id, p->is_static, p->group};
        open_in(bp, L, &open, &moved_open, p->moved && !all, id, bp->band[id], box_of(bp, p), qm);
    }
    for (uint32_t i = begin; i < end; i++) {
        uint64_t key = bp->ends[i];
        uint32_t id = key_id(bp, key);
        const proxy *p = &bp->proxies[id];
        bool moved = all || p->moved;
        uint32_t k = bp->band[id];
        if (!key_is_max(bp, key)) {
            open_box q = box_of(bp, p);
            open_meta qm = {p->category, p->mask, id, p->is_static, p->group};
            if (moved) {
                test_bands(bp, s, L->cand, pl, q, qm, L->open_box, L->open_meta, &open);
            } else {
                test_bands(bp, s, L->cand, pl, q, qm, L->moved_box, L->moved_meta, &moved_open);
            }
            open_in(bp, L, &open, &moved_open, moved && !all, id, k, q, qm);
        } else {
            // Swap-remove within the band: the open list order only affects
            // the order pairs are found in, and they are sorted afterwards.
            uint32_t at = L->open_pos[id], last = open.off[k] + --open.n[k];
            L->open_box[at] = L->open_box[last];
            L->open_meta[at] = L->open_meta[last];
            L->open_pos[L->open_meta[at].id] = at;
            if (moved && !all) {
                at = L->moved_pos[id];
                last = moved_open.off[k] + --moved_open.n[k];
                L->moved_box[at] = L->moved_box[last];
                L->moved_meta[at] = L->moved_meta[last];
                L->moved_pos[L->moved_meta[at].id] = at;
            }
        }
    }
}

/// The whole sweep in one run into s.
static void sweep(ls_broadphase *bp, pair_sink *s, bool all)
{
    sweep_plan sp = plan_sweep(bp, all);
    sweep_run(bp, &sp, &bp->lists[0], s, 0, bp->n_ends, NULL, 0);
}

/// A sweep in segments (Segments, above).
typedef struct segment_job {
    ls_broadphase *bp;
    const sweep_plan *sp;
    uint32_t start[LS_BROADPHASE_MAX_SEGMENTS + 1]; ///< endpoint runs
    uint32_t nseed[LS_BROADPHASE_MAX_SEGMENTS];     ///< seeds, in each run's cand
    pair_sink sink[LS_BROADPHASE_MAX_SEGMENTS];
} segment_job;

// Run k: its seeds wait in its cand list, which its tests reuse only after
// every seed is filed.
static void segment_task(void *arg, uint32_t k)
{
    segment_job *job = arg;
    sweep_lists *L = &job->bp->lists[k];
    sweep_run(job->bp, job->sp, L, &job->sink[k], job->start[k], job->start[k + 1], L->cand,
              job->nseed[k]);
}

/// The sweep into s, in the broad phase's segments when there are several
/// and enough endpoints (runner NULL: one after the other here), else in one
/// run; the same pairs either way.
static void sweep_pairs(ls_broadphase *bp, pair_sink *s, bool all,
                        const ls_broadphase_runner *runner)
{
    uint32_t nseg = bp->segments, slice = (uint32_t)(2 * (uint64_t)bp->max_keep / nseg);
    if (nseg < 2 || bp->n_ends < MIN_SEGMENT_ENDS || slice == 0) {
        sweep(bp, s, all);
        return;
    }
    sweep_plan sp = plan_sweep(bp, all);
    segment_job job;
    job.bp = bp;
    job.sp = &sp;
    for (uint32_t k = 0; k <= nseg; k++) {
        job.start[k] = (uint32_t)((uint64_t)bp->n_ends * k / nseg);
    }
    // The proxies open where each run starts: the sweep's opens and closes
    // without its tests (run 0's lists hold the open ids meanwhile).
    uint32_t *ids = bp->lists[0].cand, *pos = bp->lists[0].open_pos, n_open = 0, next = 1;
    job.nseed[0] = 0;
    for (uint32_t i = 0; i < job.start[nseg - 1]; i++) {
        while (next < nseg && i == job.start[next]) {
            memcpy(bp->lists[next].cand, ids, n_open * sizeof *ids);
            job.nseed[next++] = n_open;
        }
        uint64_t key = bp->ends[i];
        uint32_t id = key_id(bp, key);
        if (!key_is_max(bp, key)) {
            pos[id] = n_open;
            ids[n_open++] = id;
        } else {
            uint32_t at = pos[id], last = ids[--n_open];
            ids[at] = last;
            pos[last] = at;
        }
    }
    while (next < nseg) { // runs starting at the last endpoints
        memcpy(bp->lists[next].cand, ids, n_open * sizeof *ids);
        job.nseed[next++] = n_open;
    }
    for (uint32_t k = 0; k < nseg; k++) {
        job.sink[k] =
            (pair_sink){bp->fresh + (size_t)k * slice, 0, UINT64_MAX, false, slice, false};
    }
    if (runner) {
        runner->run(runner->ctx, nseg, segment_task, &job);
    } else {
        for (uint32_t k = 0; k < nseg; k++) {
            segment_task(&job, k);
        }
    }
    uint32_t total = 0;
    for (uint32_t k = 0; k < nseg; k++) {
        if (job.sink[k].full) {
            *s = (pair_sink){bp->fresh, 0, UINT64_MAX, false, 0, false};
            sweep(bp, s, all); // a slice filled: one run, whose buffer prunes
            return;
        }
        memmove(bp->fresh + total, job.sink[k].buf, job.sink[k].n * sizeof *bp->fresh);
        total += job.sink[k].n;
    }
    *s = (pair_sink){bp->fresh, total, UINT64_MAX, false, 0, false};
}

// ---------------------------------------------------------------------------
// Public API

ls_broadphase *ls_broadphase_create_(uint32_t max_proxies, uint32_t max_pairs)
{
    return ls_broadphase_create_segmented_(max_proxies, max_pairs, 1);
}

static bool lists_alloc(sweep_lists *L, size_t np)
{
    L->open_box = malloc(np * sizeof *L->open_box);
    L->open_meta = malloc(np * sizeof *L->open_meta);
    L->open_pos = malloc(np * sizeof *L->open_pos);
    L->moved_box = malloc(np * sizeof *L->moved_box);
    L->moved_meta = malloc(np * sizeof *L->moved_meta);
    L->moved_pos = malloc(np * sizeof *L->moved_pos);
    L->cand = malloc(np * sizeof *L->cand);
    return L->open_box && L->open_meta && L->open_pos && L->moved_box && L->moved_meta &&
           L->moved_pos && L->cand;
}

static void lists_free(sweep_lists *L)
{
    free(L->open_box);
    free(L->open_meta);
    free(L->open_pos);
    free(L->moved_box);
    free(L->moved_meta);
    free(L->moved_pos);
    free(L->cand);
}

static size_t lists_size(size_t np)
{
    sweep_lists *L = NULL; // sizeof only
    return np *
           (sizeof *L->open_box + sizeof *L->open_meta + sizeof *L->open_pos +
            sizeof *L->moved_box + sizeof *L->moved_meta + sizeof *L->moved_pos + sizeof *L->cand);
}

ls_broadphase *ls_broadphase_create_segmented_(uint32_t max_proxies, uint32_t max_pairs,
                                               uint32_t segments)
{
    if (max_proxies == 0 || max_proxies > LS_BROADPHASE_MAX_PROXIES ||
        max_pairs > LS_BROADPHASE_MAX_PAIRS || segments == 0 ||
        segments > LS_BROADPHASE_MAX_SEGMENTS) {
        return NULL;
    }
    // Keep in step with ls_broadphase_memory_size_segmented_ below.
    ls_broadphase *bp = calloc(1, sizeof *bp);
    if (!bp) {
        return NULL;
    }
    bp->cap = max_proxies;
    bp->id_bits = 1;
    while (bp->id_bits < 31 && ((max_proxies - 1) >> bp->id_bits) != 0) {
        bp->id_bits++;
    }
    bp->max_keep = max_pairs;
    bp->axis = -1;
    bp->segments = segments;
    size_t np = max_proxies, nk = (size_t)max_pairs * 2 + 1; // +1: never malloc(0)
    bp->proxies = calloc(np, sizeof *bp->proxies);
    bp->ends = malloc(2 * np * sizeof *bp->ends);
    bp->ends_tmp = malloc(2 * np * sizeof *bp->ends_tmp);
    bp->band = malloc(np * sizeof *bp->band);
    bp->pairs = malloc(nk * sizeof *bp->pairs);
    bp->pairs_tmp = malloc(nk * sizeof *bp->pairs_tmp);
    bp->fresh = malloc(nk * sizeof *bp->fresh);
    bool lists = true;
    for (uint32_t k = 0; k < segments; k++) {
        lists = lists_alloc(&bp->lists[k], np) && lists;
    }
    if (!bp->proxies || !bp->ends || !bp->ends_tmp || !bp->band || !bp->pairs || !bp->pairs_tmp ||
        !bp->fresh || !lists) {
        ls_broadphase_destroy_(bp);
        return NULL;
    }
    return bp;
}

void ls_broadphase_destroy_(ls_broadphase *bp)
{
    if (!bp) {
        return;
    }
    free(bp->proxies);
    free(bp->ends);
    free(bp->ends_tmp);
    for (uint32_t k = 0; k < LS_BROADPHASE_MAX_SEGMENTS; k++) {
        lists_free(&bp->lists[k]);
    }
    free(bp->band);
    free(bp->pairs);
    free(bp->pairs_tmp);
    free(bp->fresh);
    free(bp);
}

size_t ls_broadphase_memory_size_(uint32_t max_proxies, uint32_t max_pairs)
{
    return ls_broadphase_memory_size_segmented_(max_proxies, max_pairs, 1);
}

size_t ls_broadphase_memory_size_segmented_(uint32_t max_proxies, uint32_t max_pairs,
                                            uint32_t segments)
{
    size_t np = max_proxies, nk = (size_t)max_pairs * 2 + 1;
    ls_broadphase *bp = NULL; // sizeof only
    return sizeof *bp +
           np * (sizeof *bp->proxies + 2 * sizeof *bp->ends + 2 * sizeof *bp->ends_tmp +
                 sizeof *bp->band) +
           segments * lists_size(np) +
           nk * (sizeof *bp->pairs + sizeof *bp->pairs_tmp + sizeof *bp->fresh);
}

uint32_t ls_broadphase_capacity_(const ls_broadphase *bp)
{
    return bp->cap;
}

static bool contains(const ls_aabb *outer, const ls_aabb *inner)
{
    return outer->min.x <= inner->min.x && outer->min.y <= inner->min.y &&
           outer->min.z <= inner->min.z && inner->max.x <= outer->max.x &&
           inner->max.y <= outer->max.y && inner->max.z <= outer->max.z;
}

static ls_fx clamp_fx(int64_t v)
{
    return (ls_fx)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
}

static ls_aabb grow(ls_aabb b, ls_fx d)
{
    ls_aabb r = {{clamp_fx((int64_t)b.min.x - d), clamp_fx((int64_t)b.min.y - d),
                  clamp_fx((int64_t)b.min.z - d)},
                 {clamp_fx((int64_t)b.max.x + d), clamp_fx((int64_t)b.max.y + d),
                  clamp_fx((int64_t)b.max.z + d)}};
    return r;
}

/// Closed overlap of two boxes on every axis: the sweep's test.
static bool overlap(const ls_aabb *a, const ls_aabb *b)
{
    return (a->min.x <= b->max.x) & (b->min.x <= a->max.x) & (a->min.y <= b->max.y) &
           (b->min.y <= a->max.y) & (a->min.z <= b->max.z) & (b->min.z <= a->max.z);
}

void ls_broadphase_set_(ls_broadphase *bp, uint32_t id, ls_aabb box, uint32_t category,
                        uint32_t mask, bool is_static, uint32_t group)
{
    if (ls_broadphase_set_proxy_(bp, id, box, category, mask, is_static, group)) {
        ls_broadphase_mark_(bp, id + 1);
    }
}

void ls_broadphase_mark_(ls_broadphase *bp, uint32_t high)
{
    LS_ASSERT(high <= bp->cap);
    bp->high = high > bp->high ? high : bp->high;
    bp->changed = true;
}

bool ls_broadphase_set_proxy_(ls_broadphase *bp, uint32_t id, ls_aabb box, uint32_t category,
                              uint32_t mask, bool is_static, uint32_t group)
{
    LS_ASSERT(id < bp->cap);
    LS_ASSERT(box.min.x <= box.max.x && box.min.y <= box.max.y && box.min.z <= box.max.z);
    proxy *p = &bp->proxies[id];
    p->box = box;
    // Without fat boxes only an unchanged box leaves the sweep's input as it was.
    bool inside =
        bp->fat_off ? contains(&box, &p->fat) && contains(&p->fat, &box) : contains(&p->fat, &box);
    if (p->active && p->category == category && p->mask == mask && p->is_static == is_static &&
        p->group == group && inside) {
        return false; // the sweep's input is unchanged; the next pairs() call filters with box
    }
    p->fat = bp->fat_off ? box : grow(box, LS_BROADPHASE_FAT);
    p->moved = true;
    p->category = category;
    p->mask = mask;
    p->is_static = is_static;
    p->group = group;
    p->active = true; // endpoints are (re)placed lazily by the next pairs() call
    return true;
}

void ls_broadphase_remove_(ls_broadphase *bp, uint32_t id)
{
    LS_ASSERT(id < bp->cap);
    bp->proxies[id].active = false;
    bp->changed = true;
}

void ls_broadphase_clear_(ls_broadphase *bp)
{
    for (uint32_t id = 0; id < bp->high; id++) {
        bp->proxies[id].active = false;
    }
    bp->high = 0;
    bp->changed = true;
}

bool ls_broadphase_contains_(const ls_broadphase *bp, uint32_t id)
{
    return id < bp->cap && bp->proxies[id].active;
}

// Sweeps only when some proxy changed: a world at rest (everything static or
// asleep) reuses the last, identical, pair set.
static void recompute_pairs(ls_broadphase *bp, const ls_broadphase_runner *runner)
{
    int axis = choose_axis(bp);
    bool axis_changed = axis != bp->axis;
    bp->axis = axis;
    refresh_endpoints(bp);
    uint32_t added = append_new_endpoints(bp);
    sort_endpoints(bp, axis_changed, added);

    // The kept fat pairs that stay: both proxies present and unmoved (none
    // without fat boxes, where every sweep is whole, as it always was).
    bool all = bp->fat_off;
    uint32_t stay = 0;
    uint64_t id_mask = (UINT64_C(1) << bp->id_bits) - 1;
    for (uint32_t i = 0; i < bp->kept && !all; i++) {
        const proxy *a = &bp->proxies[bp->pairs[i] >> bp->id_bits];
        const proxy *b = &bp->proxies[bp->pairs[i] & id_mask];
        if (a->active && b->active && !a->moved && !b->moved) {
            bp->pairs[stay++] = bp->pairs[i];
        }
    }
    pair_sink s = {bp->fresh, 0, UINT64_MAX, false, 0, false};
    sweep_pairs(bp, &s, all, runner);
    if (!bp->fat_off && (s.dropped || (uint64_t)stay + s.n > 2 * (uint64_t)bp->max_keep)) {
        // The fat pairs do not all fit: the kept prefix may miss pairs of
        // boxes that overlap. Sweep the boxes themselves from now on.
        bp->fat_off = true;
        for (uint32_t id = 0; id < bp->high; id++) {
            bp->proxies[id].fat = bp->proxies[id].box;
        }
        recompute_pairs(bp, runner);
        return;
    }
    radix_sort(s.buf, bp->pairs_tmp, s.n, 2 * bp->id_bits);
    // Merge the two sorted, disjoint lists.
    uint32_t i = 0, j = 0, n = 0;
    while (i < stay || j < s.n) {
        bool take_kept = j == s.n || (i < stay && bp->pairs[i] < s.buf[j]);
        bp->pairs_tmp[n++] = take_kept ? bp->pairs[i++] : s.buf[j++];
    }
    uint64_t *t = bp->pairs;
    bp->pairs = bp->pairs_tmp;
    bp->pairs_tmp = t;
    if (n > bp->max_keep && bp->fat_off) {
        n = bp->max_keep;
        s.dropped = true;
    }
    bp->kept = n;
    bp->kept_dropped = s.dropped;
    bp->changed = false;
    for (uint32_t id = 0; id < bp->high; id++) {
        bp->proxies[id].moved = false;
    }
}

uint32_t ls_broadphase_pairs_(ls_broadphase *bp, ls_pair *out, uint32_t max, bool *overflowed)
{
    return ls_broadphase_pairs_run_(bp, out, max, overflowed, NULL);
}

uint32_t ls_broadphase_pairs_run_(ls_broadphase *bp, ls_pair *out, uint32_t max, bool *overflowed,
                                  const ls_broadphase_runner *runner)
{
    if (bp->changed) {
        recompute_pairs(bp, runner);
    }
    // The kept fat pairs whose boxes overlap, in key order, up to the limit.
    uint32_t limit = max < bp->max_keep ? max : bp->max_keep;
    uint64_t id_mask = (UINT64_C(1) << bp->id_bits) - 1;
    uint32_t n = 0;
    bool more = false;
    for (uint32_t i = 0; i < bp->kept; i++) {
        uint32_t a = (uint32_t)(bp->pairs[i] >> bp->id_bits);
        uint32_t b = (uint32_t)(bp->pairs[i] & id_mask);
        if (!overlap(&bp->proxies[a].box, &bp->proxies[b].box)) {
            continue;
        }
        if (n == limit) {
            more = true;
            break;
        }
        out[n].a = a;
        out[n].b = b;
        n++;
    }
    if (overflowed) {
        *overflowed = bp->kept_dropped || more;
    }
    return n;
}
