// SPDX-License-Identifier: MIT
// Broad phase: the pair list equals an O(n^2) brute force, in (a, b) order, on
// every tick of moving scenes and on degenerate layouts; filters, statics,
// removal, touching boxes, history independence and overflow reporting.
// No allocation after create is by construction: the API has no allocating call.
#include "../fixmath_phys/src/collision/broadphase.h"
#include "ls/rng.h"

#include <criterion/criterion.h>
#include <stdlib.h>

#define FX(x) ((ls_fx)((x)*65536))

/// What the test believes the proxies are; the brute force reads only this.
typedef struct scene {
    uint32_t n;
    ls_aabb *box;
    uint32_t *cat;
    uint32_t *mask;
    bool *is_static;
    bool *present;
} scene;

static scene scene_make(uint32_t n)
{
    scene s = {n,
               calloc(n, sizeof(ls_aabb)),
               calloc(n, sizeof(uint32_t)),
               calloc(n, sizeof(uint32_t)),
               calloc(n, sizeof(bool)),
               calloc(n, sizeof(bool))};
    cr_assert(s.box && s.cat && s.mask && s.is_static && s.present);
    return s;
}

static void scene_free(scene *s)
{
    free(s->box);
    free(s->cat);
    free(s->mask);
    free(s->is_static);
    free(s->present);
}

static bool overlap(const ls_aabb *a, const ls_aabb *b)
{
    return a->min.x <= b->max.x && b->min.x <= a->max.x && a->min.y <= b->max.y &&
           b->min.y <= a->max.y && a->min.z <= b->max.z && b->min.z <= a->max.z;
}

/// The reference: every i < j in order; returns the total count, writes up to max.
static uint32_t brute_pairs(const scene *s, ls_pair *out, uint32_t max)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        if (!s->present[i]) {
            continue;
        }
        for (uint32_t j = i + 1; j < s->n; j++) {
            if (s->present[j] && overlap(&s->box[i], &s->box[j]) && (s->cat[i] & s->mask[j]) &&
                (s->cat[j] & s->mask[i]) && !(s->is_static[i] && s->is_static[j])) {
                if (n < max) {
                    out[n] = (ls_pair){i, j};
                }
                n++;
            }
        }
    }
    return n;
}

static void put(ls_broadphase *bp, scene *s, uint32_t id)
{
    s->present[id] = true;
    ls_broadphase_set_(bp, id, s->box[id], s->cat[id], s->mask[id], s->is_static[id], id);
}

static void take(ls_broadphase *bp, scene *s, uint32_t id)
{
    s->present[id] = false;
    ls_broadphase_remove_(bp, id);
}

enum { BIG = 1 << 20 };

/// The segments of a segmented sweep run last to first, one after the other
/// (any order must give the same pairs).
static void reverse_run(void *ctx, uint32_t count, ls_broadphase_task_fn *task, void *arg)
{
    (void)ctx;
    for (uint32_t k = count; k-- > 0;) {
        task(arg, k);
    }
}

static const ls_broadphase_runner reverse_runner = {reverse_run, NULL};

/// Asserts the broad phase returns exactly the brute-force list.
static void expect_brute(ls_broadphase *bp, const scene *s, const char *what, int tick)
{
    static ls_pair got[BIG], want[BIG];
    bool ovf = true;
    uint32_t n = ls_broadphase_pairs_run_(bp, got, BIG, &ovf, &reverse_runner);
    uint32_t m = brute_pairs(s, want, BIG);
    cr_assert_lt(m, BIG, "%s: test scene too dense", what);
    cr_assert_not(ovf, "%s tick %d: unexpected overflow", what, tick);
    cr_assert_eq(n, m, "%s tick %d: %u pairs, brute force %u", what, tick, n, m);
    for (uint32_t i = 0; i < n; i++) {
        cr_assert(got[i].a == want[i].a && got[i].b == want[i].b,
                  "%s tick %d pair %u: (%u,%u) want (%u,%u)", what, tick, i, got[i].a, got[i].b,
                  want[i].a, want[i].b);
    }
}

static ls_aabb random_box(ls_rng *r, ls_fx world, ls_fx half_lo, ls_fx half_hi)
{
    ls_vec3 c = {ls_rng_range(r, -world, world), ls_rng_range(r, -world, world),
                 ls_rng_range(r, -world, world)};
    ls_vec3 h = {ls_rng_range(r, half_lo, half_hi), ls_rng_range(r, half_lo, half_hi),
                 ls_rng_range(r, half_lo, half_hi)};
    return (ls_aabb){ls_vec3_sub(c, h), ls_vec3_add(c, h)};
}

static void move_box(ls_rng *r, ls_aabb *b, ls_fx step)
{
    ls_vec3 d = {ls_rng_range(r, -step, step), ls_rng_range(r, -step, step),
                 ls_rng_range(r, -step, step)};
    b->min = ls_vec3_add(b->min, d);
    b->max = ls_vec3_add(b->max, d);
}

Test(broadphase, equals_brute_force_on_every_tick_of_5000_moving_boxes)
{
    enum { N = 5000, TICKS = 60 };
    ls_rng r = ls_rng_make(2024, 3);
    scene s = scene_make(N);
    ls_broadphase *bp = ls_broadphase_create_(N, BIG);
    cr_assert_not_null(bp);
    for (uint32_t i = 0; i < N; i++) {
        s.box[i] = random_box(&r, FX(30), FX(0.25), FX(2));
        s.cat[i] = s.mask[i] = 0xFFFFFFFFu;
        s.is_static[i] = i % 10 == 0;
        put(bp, &s, i);
    }
    for (int t = 0; t < TICKS; t++) {
        expect_brute(bp, &s, "5000 boxes", t);
        for (uint32_t i = 0; i < N; i++) {
            if (!s.is_static[i]) {
                move_box(&r, &s.box[i], FX(0.1));
                put(bp, &s, i);
            }
        }
    }
    ls_broadphase_destroy_(bp);
    scene_free(&s);
}

/// Every category and mask: all pairs pass the filter.
static void random_filter_all(scene *s, uint32_t i)
{
    s->cat[i] = s->mask[i] = 0xFFFFFFFFu;
}

// The bands of the sweep (broadphase.c): boxes spread over a plane (x, z in
// +-60 m, y in 0..4 m), most 0.2..0.5 m wide, one in ten 2..6 m (the second
// set of bands), one in a hundred 30..60 m (the widest band), a tenth of
// them static, moving; and the same scene turned so that the bands run along
// the other axis.
static ls_aabb plane_box(ls_rng *r, uint32_t i, bool turned)
{
    ls_fx half = i % 100 == 0  ? ls_rng_range(r, FX(15), FX(30))
                 : i % 10 == 0 ? ls_rng_range(r, FX(1), FX(3))
                               : ls_rng_range(r, FX(0.1), FX(0.25));
    ls_vec3 c = {ls_rng_range(r, FX(-60), FX(60)), ls_rng_range(r, 0, FX(4)),
                 ls_rng_range(r, FX(-60), FX(60))};
    ls_vec3 h = {half, ls_rng_range(r, FX(0.1), FX(0.25)), half};
    if (turned) {
        c = (ls_vec3){c.y, c.x, c.z};
        h = (ls_vec3){h.y, h.x, h.z};
    }
    return (ls_aabb){ls_vec3_sub(c, h), ls_vec3_add(c, h)};
}

Test(broadphase, equals_brute_force_on_a_plane_of_mixed_widths)
{
    enum { N = 3000, TICKS = 30 };
    for (int turned = 0; turned < 2; turned++) {
        ls_rng r = ls_rng_make(2026, 11 + (uint64_t)turned);
        scene s = scene_make(N);
        ls_broadphase *bp = ls_broadphase_create_(N, BIG);
        cr_assert_not_null(bp);
        for (uint32_t i = 0; i < N; i++) {
            s.box[i] = plane_box(&r, i, turned);
            s.cat[i] = s.mask[i] = 0xFFFFFFFFu;
            s.is_static[i] = i % 10 == 3;
            put(bp, &s, i);
        }
        for (int t = 0; t < TICKS; t++) {
            expect_brute(bp, &s, turned ? "plane (turned)" : "plane", t);
            for (uint32_t i = 0; i < N; i++) {
                if (!s.is_static[i]) {
                    move_box(&r, &s.box[i], FX(0.3));
                    put(bp, &s, i);
                }
            }
        }
        ls_broadphase_destroy_(bp);
        scene_free(&s);
    }
}

// The sweep in 2, 3 and 4 segments (broadphase.c, "Segments") on the moving
// plane above, run in reverse order: the brute-force pairs on every tick.
Test(broadphase, a_sweep_in_segments_equals_brute_force)
{
    enum { N = 2000, TICKS = 10 };
    for (uint32_t seg = 2; seg <= LS_BROADPHASE_MAX_SEGMENTS; seg++) {
        ls_rng r = ls_rng_make(77, seg);
        scene s = scene_make(N);
        ls_broadphase *bp = ls_broadphase_create_segmented_(N, BIG, seg);
        cr_assert_not_null(bp);
        for (uint32_t i = 0; i < N; i++) {
            s.box[i] = plane_box(&r, i, false);
            random_filter_all(&s, i);
            s.is_static[i] = i % 7 == 2;
            put(bp, &s, i);
        }
        for (int t = 0; t < TICKS; t++) {
            expect_brute(bp, &s, "segments", t);
            for (uint32_t i = 0; i < N; i++) {
                if (!s.is_static[i] && (i + (uint32_t)t) % 3 != 0) {
                    move_box(&r, &s.box[i], FX(0.4));
                    put(bp, &s, i);
                }
            }
        }
        ls_broadphase_destroy_(bp);
        scene_free(&s);
    }
    cr_assert_null(ls_broadphase_create_segmented_(8, 8, 0));
    cr_assert_null(ls_broadphase_create_segmented_(8, 8, LS_BROADPHASE_MAX_SEGMENTS + 1));
}

// A segment whose slice of the pair buffer fills (max_pairs far below the
// pairs found) has the whole sweep done again in one run: the canonical
// prefix and the overflow, as without segments.
Test(broadphase, a_full_segment_slice_gives_the_canonical_prefix)
{
    enum { N = 800 };
    static ls_pair want[BIG], got[BIG];
    ls_rng r = ls_rng_make(5, 5);
    scene s = scene_make(N);
    for (uint32_t i = 0; i < N; i++) {
        s.box[i] = random_box(&r, FX(4), FX(0.2), FX(0.6));
        random_filter_all(&s, i);
        s.present[i] = true;
    }
    uint32_t total = brute_pairs(&s, want, BIG);
    cr_assert_gt(total, 1000);
    const uint32_t caps[] = {total / 8, total / 2, total - 1, total, 2 * total};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        ls_broadphase *bp = ls_broadphase_create_segmented_(N, caps[c], 3);
        cr_assert_not_null(bp);
        for (uint32_t i = 0; i < N; i++) {
            put(bp, &s, i);
        }
        bool ovf = false;
        uint32_t n = ls_broadphase_pairs_run_(bp, got, BIG, &ovf, &reverse_runner);
        uint32_t expect = total < caps[c] ? total : caps[c];
        cr_assert_eq(n, expect, "max_pairs %u: %u pairs, want %u", caps[c], n, expect);
        cr_assert_eq(ovf, total > caps[c], "max_pairs %u", caps[c]);
        for (uint32_t i = 0; i < n; i++) {
            cr_assert(got[i].a == want[i].a && got[i].b == want[i].b, "max_pairs %u pair %u",
                      caps[c], i);
        }
        ls_broadphase_destroy_(bp);
    }
    scene_free(&s);
}

/// Random filter: one of four categories, a random subset of them as mask.
static void random_filter(ls_rng *r, scene *s, uint32_t i)
{
    s->cat[i] = 1u << ls_rng_below(r, 4);
    s->mask[i] = ls_rng_below(r, 4) == 0 ? 0xFFFFFFFFu : ls_rng_below(r, 16);
    s->is_static[i] = ls_rng_below(r, 8) == 0;
}

/// One tick of churn: small moves, some removals, re-adds and teleports.
static void churn(ls_rng *r, ls_broadphase *bp, scene *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t roll = ls_rng_below(r, 100);
        if (roll < 2) {
            take(bp, s, i);
        } else if (roll < 4 && !s->present[i]) {
            random_filter(r, s, i);
            put(bp, s, i);
        } else if (roll < 5) {
            s->box[i] = random_box(r, FX(20), 0, FX(2));
            put(bp, s, i);
        } else if (s->present[i]) {
            move_box(r, &s->box[i], FX(0.2));
            put(bp, s, i);
        }
    }
}

/// Swap the x and y extents of every box, so the widest axis (the sweep axis) changes.
static void swap_xy(ls_broadphase *bp, scene *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        ls_aabb *b = &s->box[i];
        *b = (ls_aabb){{b->min.y, b->min.x, b->min.z}, {b->max.y, b->max.x, b->max.z}};
        if (s->present[i]) {
            put(bp, s, i);
        }
    }
}

Test(broadphase, equals_brute_force_on_every_tick_of_1000_boxes_with_churn_and_axis_changes)
{
    enum { N = 1000, TICKS = 200 };
    ls_rng r = ls_rng_make(77, 5);
    scene s = scene_make(N);
    ls_broadphase *bp = ls_broadphase_create_(N, BIG);
    cr_assert_not_null(bp);
    for (uint32_t i = 0; i < N; i++) {
        // A column: narrow in x and z, tall in y, so y is the sweep axis at first.
        ls_aabb b = random_box(&r, FX(4), FX(0.1), FX(1.5));
        b.min.y = (ls_fx)(b.min.y * 8);
        b.max.y = b.min.y + ls_rng_range(&r, 0, FX(3));
        s.box[i] = b;
        random_filter(&r, &s, i);
        if (ls_rng_below(&r, 4) != 0) {
            put(bp, &s, i);
        }
    }
    for (int t = 0; t < TICKS; t++) {
        expect_brute(bp, &s, "churn", t);
        if (t % 50 == 49) {
            swap_xy(bp, &s);
        } else {
            churn(&r, bp, &s);
        }
    }
    ls_broadphase_destroy_(bp);
    scene_free(&s);
}

/// The brute-force list truncated to `cap` pairs, and whether it was.
static void expect_brute_prefix(ls_broadphase *bp, const scene *s, uint32_t cap, int tick)
{
    static ls_pair got[BIG], want[BIG];
    bool ovf = false;
    uint32_t n = ls_broadphase_pairs_(bp, got, BIG, &ovf);
    uint32_t m = brute_pairs(s, want, BIG);
    cr_assert_eq(n, m < cap ? m : cap, "tick %d: %u pairs, brute force %u, cap %u", tick, n, m,
                 cap);
    cr_assert_eq(ovf, m > cap, "tick %d: overflow %d with %u of %u", tick, ovf, m, cap);
    for (uint32_t i = 0; i < n; i++) {
        cr_assert(got[i].a == want[i].a && got[i].b == want[i].b,
                  "tick %d pair %u: (%u,%u) want (%u,%u)", tick, i, got[i].a, got[i].b, want[i].a,
                  want[i].b);
    }
}

// The fat boxes and the incremental sweep (broadphase.c): most boxes creep
// within their fat boxes (pairs begin and end among them without a sweep), a
// few jump, some change filters in place, some leave and come back; then the
// pair capacity is lowered so that the fat pairs no longer fit, and the
// plain-box sweep must give the brute-force prefix.
Test(broadphase, fat_boxes_and_the_incremental_sweep_equal_brute_force_and_keep_the_prefix)
{
    enum { N = 2000, TICKS = 120 };
    for (int phase = 0; phase < 2; phase++) {
        uint32_t cap = phase == 0 ? BIG : 600;
        ls_rng r = ls_rng_make(31 + (uint64_t)phase, 7);
        scene s = scene_make(N);
        ls_broadphase *bp = ls_broadphase_create_(N, cap);
        cr_assert_not_null(bp);
        for (uint32_t i = 0; i < N; i++) {
            s.box[i] = random_box(&r, FX(6), FX(0.05), FX(0.6));
            random_filter(&r, &s, i);
            put(bp, &s, i);
        }
        for (int t = 0; t < TICKS; t++) {
            if (phase == 0) {
                expect_brute(bp, &s, "fat", t);
            } else {
                expect_brute_prefix(bp, &s, cap, t);
            }
            for (uint32_t i = 0; i < N; i++) {
                uint32_t roll = ls_rng_below(&r, 1000);
                if (roll < 3) {
                    take(bp, &s, i);
                } else if (roll < 6 && !s.present[i]) {
                    put(bp, &s, i);
                } else if (roll < 10) {
                    s.box[i] = random_box(&r, FX(6), FX(0.05), FX(0.6)); // a jump
                    put(bp, &s, i);
                } else if (roll < 14 && s.present[i]) {
                    random_filter(&r, &s, i); // new filter, same box
                    put(bp, &s, i);
                } else if (s.present[i]) {
                    move_box(&r, &s.box[i], FX(0.01)); // creeps: mostly inside its fat box
                    put(bp, &s, i);
                }
            }
        }
        ls_broadphase_destroy_(bp);
        scene_free(&s);
    }
}

/// Fills a scene by `layout` and checks one pairs() call against brute force.
static void check_layout(uint32_t n, void (*layout)(ls_rng *, scene *, uint32_t), const char *what)
{
    ls_rng r = ls_rng_make(n, 9);
    scene s = scene_make(n);
    ls_broadphase *bp = ls_broadphase_create_(n, BIG);
    cr_assert_not_null(bp);
    for (uint32_t i = 0; i < n; i++) {
        s.cat[i] = s.mask[i] = 1;
        layout(&r, &s, i);
        put(bp, &s, i);
    }
    expect_brute(bp, &s, what, 0);
    expect_brute(bp, &s, what, 1); // the incremental path on an unchanged scene
    ls_broadphase_destroy_(bp);
    scene_free(&s);
}

static void all_identical(ls_rng *r, scene *s, uint32_t i)
{
    (void)r;
    s->box[i] = (ls_aabb){{FX(1), FX(2), FX(3)}, {FX(2), FX(3), FX(4)}};
}

static void shared_min_x(ls_rng *r, scene *s, uint32_t i)
{
    s->box[i] = random_box(r, FX(10), 0, FX(1));
    s->box[i].min.x = FX(5);
    s->box[i].max.x = FX(5) + ls_rng_range(r, 0, 4);
}

static void zero_thickness_grid(ls_rng *r, scene *s, uint32_t i)
{
    // Integer grid coordinates, many zero-size extents: exact ties everywhere.
    ls_fx x = FX(ls_rng_below(r, 6)), y = FX(ls_rng_below(r, 6)), z = FX(ls_rng_below(r, 6));
    ls_fx w = FX(ls_rng_below(r, 2));
    s->box[i] = (ls_aabb){{x, y, z}, {x + w, y, z + w}};
}

static void near_extremes(ls_rng *r, scene *s, uint32_t i)
{
    ls_fx lo = ls_rng_below(r, 2) ? LS_FX_MIN : LS_FX_MAX - FX(3);
    ls_fx x = lo + ls_rng_range(r, 0, FX(2));
    s->box[i] = (ls_aabb){{x, FX(-32767), x}, {x + ls_rng_range(r, 0, FX(1)), LS_FX_MAX, x}};
}

Test(broadphase, equals_brute_force_on_degenerate_layouts)
{
    check_layout(200, all_identical, "identical");
    check_layout(500, shared_min_x, "shared min x");
    check_layout(500, zero_thickness_grid, "zero thickness grid");
    check_layout(300, near_extremes, "near +-32768");
}

static ls_aabb cube(ls_fx x, ls_fx y, ls_fx z, ls_fx size)
{
    return (ls_aabb){{x, y, z}, {x + size, y + size, z + size}};
}

static void expect_pairs(ls_broadphase *bp, const ls_pair *want, uint32_t n_want)
{
    ls_pair got[64];
    bool ovf = true;
    uint32_t n = ls_broadphase_pairs_(bp, got, 64, &ovf);
    cr_assert_not(ovf);
    cr_assert_eq(n, n_want, "%u pairs, want %u", n, n_want);
    for (uint32_t i = 0; i < n; i++) {
        cr_assert(got[i].a == want[i].a && got[i].b == want[i].b, "pair %u: (%u,%u) want (%u,%u)",
                  i, got[i].a, got[i].b, want[i].a, want[i].b);
    }
}

Test(broadphase, touching_faces_edges_and_corners_count_but_a_one_ulp_gap_does_not)
{
    ls_broadphase *bp = ls_broadphase_create_(8, 64);
    ls_broadphase_set_(bp, 0, cube(0, 0, 0, FX(1)), 1, 1, false, 0);
    ls_broadphase_set_(bp, 1, cube(FX(1), 0, 0, FX(1)), 1, 1, false, 1);         // face of 0 on x
    ls_broadphase_set_(bp, 2, cube(0, FX(-1), 0, FX(1)), 1, 1, false, 2);        // face of 0 on y
    ls_broadphase_set_(bp, 3, cube(FX(1), FX(1), FX(1), FX(1)), 1, 1, false, 3); // corner of 0
    ls_broadphase_set_(bp, 4, cube(0, 0, FX(1) + 1, FX(1)), 1, 1, false, 4);     // 1 ulp above 0
    ls_broadphase_set_(bp, 5, (ls_aabb){{0, 0, 0}, {0, 0, 0}}, 1, 1, false, 5);  // a point
    const ls_pair want[] = {{0, 1}, {0, 2}, {0, 3}, {0, 5}, {1, 2}, {1, 3}, {2, 5}, {3, 4}};
    expect_pairs(bp, want, 8);
    ls_broadphase_destroy_(bp);
}

Test(broadphase, pairs_need_each_category_accepted_by_the_other_mask)
{
    ls_broadphase *bp = ls_broadphase_create_(8, 64);
    ls_aabb b = cube(0, 0, 0, FX(1));
    ls_broadphase_set_(bp, 0, b, 0x1, 0x2, false, 0); // accepts only 1
    ls_broadphase_set_(bp, 1, b, 0x2, 0x1, false, 1); // accepts only 0
    ls_broadphase_set_(bp, 2, b, 0x2, 0x0, false, 2); // accepts nobody
    ls_broadphase_set_(bp, 3, b, 0x4, 0xFF, false, 3);
    ls_broadphase_set_(bp, 4, b, 0x8, 0x4, false, 4); // 3 and 4 accept each other
    const ls_pair want[] = {{0, 1}, {3, 4}};
    expect_pairs(bp, want, 2);
    ls_broadphase_destroy_(bp);
}

Test(broadphase, static_static_pairs_are_excluded_and_static_dynamic_pairs_kept)
{
    ls_broadphase *bp = ls_broadphase_create_(8, 64);
    ls_aabb b = cube(0, 0, 0, FX(1));
    ls_broadphase_set_(bp, 0, b, 1, 1, true, 0);
    ls_broadphase_set_(bp, 1, b, 1, 1, true, 1);
    ls_broadphase_set_(bp, 2, b, 1, 1, false, 2);
    ls_broadphase_set_(bp, 3, b, 1, 1, true, 3);
    const ls_pair want[] = {{0, 2}, {1, 2}, {2, 3}};
    expect_pairs(bp, want, 3);
    ls_broadphase_destroy_(bp);
}

Test(broadphase, removed_proxies_leave_no_pairs_and_can_be_set_again)
{
    ls_broadphase *bp = ls_broadphase_create_(8, 64);
    ls_aabb b = cube(0, 0, 0, FX(1));
    for (uint32_t i = 0; i < 4; i++) {
        ls_broadphase_set_(bp, i, b, 1, 1, false, i);
    }
    const ls_pair all[] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    expect_pairs(bp, all, 6);
    ls_broadphase_remove_(bp, 1);
    ls_broadphase_remove_(bp, 7); // not present: no-op
    cr_assert_not(ls_broadphase_contains_(bp, 1));
    const ls_pair without1[] = {{0, 2}, {0, 3}, {2, 3}};
    expect_pairs(bp, without1, 3);
    ls_broadphase_set_(bp, 1, b, 1, 1, false, 1);
    ls_broadphase_remove_(bp, 2); // removed and re-added between calls
    ls_broadphase_set_(bp, 2, b, 1, 1, false, 2);
    expect_pairs(bp, all, 6);
    ls_broadphase_clear_(bp);
    expect_pairs(bp, NULL, 0);
    ls_broadphase_destroy_(bp);
}

/// Fills bp with the same final boxes as `s`, via a history chosen by `seed`:
/// ids inserted in a shuffled order, with decoy boxes set, queried and moved away.
static void build_with_history(ls_broadphase *bp, const scene *s, uint64_t seed)
{
    ls_rng r = ls_rng_make(seed, 11);
    uint32_t order[300];
    for (uint32_t i = 0; i < s->n; i++) {
        order[i] = i;
    }
    for (uint32_t i = s->n - 1; i > 0; i--) {
        uint32_t j = ls_rng_below(&r, i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    static ls_pair scratch[BIG];
    for (uint32_t k = 0; k < s->n; k++) {
        uint32_t i = order[k];
        ls_broadphase_set_(bp, i, random_box(&r, FX(10), 0, FX(3)), 1, 1, false, i);
        if (k % 37 == 0) {
            ls_broadphase_pairs_(bp, scratch, BIG, NULL); // sorts the decoys into the order
        }
        if (k % 5 == 0) {
            ls_broadphase_remove_(bp, i);
        }
    }
    ls_broadphase_pairs_(bp, scratch, BIG, NULL);
    for (uint32_t k = s->n; k-- > 0;) {
        uint32_t i = order[k];
        if (s->present[i]) {
            ls_broadphase_set_(bp, i, s->box[i], s->cat[i], s->mask[i], s->is_static[i], i);
        } else {
            ls_broadphase_remove_(bp, i);
        }
    }
}

Test(broadphase, same_final_boxes_give_the_same_pairs_whatever_the_insertion_history)
{
    enum { N = 300 };
    ls_rng r = ls_rng_make(5, 1);
    scene s = scene_make(N);
    for (uint32_t i = 0; i < N; i++) {
        s.box[i] = random_box(&r, FX(10), 0, FX(3));
        random_filter(&r, &s, i);
        s.present[i] = ls_rng_below(&r, 5) != 0;
    }
    static ls_pair first[BIG], again[BIG];
    ls_broadphase *bp = ls_broadphase_create_(N, BIG);
    build_with_history(bp, &s, 1);
    uint32_t n = ls_broadphase_pairs_(bp, first, BIG, NULL);
    ls_broadphase_destroy_(bp);
    cr_assert_gt(n, 100, "the scene should have many pairs");
    for (uint64_t seed = 2; seed < 6; seed++) {
        bp = ls_broadphase_create_(N, BIG);
        build_with_history(bp, &s, seed);
        cr_assert_eq(ls_broadphase_pairs_(bp, again, BIG, NULL), n);
        cr_assert_arr_eq(again, first, n * sizeof(ls_pair), "history %d", (int)seed);
        expect_brute(bp, &s, "history", (int)seed);
        ls_broadphase_destroy_(bp);
    }
    scene_free(&s);
}

/// Ten identical boxes: 45 pairs (i, j), i < j.
static ls_broadphase *ten_overlapping(uint32_t max_pairs)
{
    ls_broadphase *bp = ls_broadphase_create_(10, max_pairs);
    cr_assert_not_null(bp);
    for (uint32_t i = 0; i < 10; i++) {
        ls_broadphase_set_(bp, 9 - i, cube(0, 0, 0, FX(1)), 1, 1, false, 9 - i);
    }
    return bp;
}

static void expect_canonical_prefix(const ls_pair *p, uint32_t n)
{
    uint32_t k = 0;
    for (uint32_t a = 0; a < 10 && k < n; a++) {
        for (uint32_t b = a + 1; b < 10 && k < n; b++, k++) {
            cr_assert(p[k].a == a && p[k].b == b, "pair %u: (%u,%u)", k, p[k].a, p[k].b);
        }
    }
}

Test(broadphase, a_small_output_buffer_gets_the_canonical_prefix_and_reports_overflow)
{
    ls_broadphase *bp = ten_overlapping(64);
    ls_pair p[45];
    bool ovf = false;
    cr_assert_eq(ls_broadphase_pairs_(bp, p, 12, &ovf), 12);
    cr_assert(ovf);
    expect_canonical_prefix(p, 12);
    cr_assert_eq(ls_broadphase_pairs_(bp, p, 45, &ovf), 45);
    cr_assert_not(ovf, "exactly enough room is not an overflow");
    expect_canonical_prefix(p, 45);
    cr_assert_eq(ls_broadphase_pairs_(bp, NULL, 0, &ovf), 0);
    cr_assert(ovf);
    ls_broadphase_destroy_(bp);
}

Test(broadphase, a_full_internal_pair_buffer_keeps_the_canonical_prefix_and_reports_overflow)
{
    for (uint32_t cap = 0; cap < 46; cap += 5) {
        ls_broadphase *bp = ten_overlapping(cap);
        ls_pair p[64];
        bool ovf = false;
        uint32_t n = ls_broadphase_pairs_(bp, p, 64, &ovf);
        cr_assert_eq(n, cap, "max_pairs %u", cap);
        cr_assert_eq(ovf, cap < 45, "max_pairs %u", cap);
        expect_canonical_prefix(p, n);
        ls_broadphase_destroy_(bp);
    }
}

Test(broadphase, create_rejects_zero_proxies_and_reports_its_capacity)
{
    cr_assert_null(ls_broadphase_create_(0, 10));
    ls_broadphase *bp = ls_broadphase_create_(3, 0);
    cr_assert_not_null(bp);
    cr_assert_eq(ls_broadphase_capacity_(bp), 3);
    cr_assert_eq(ls_broadphase_pairs_(bp, NULL, 0, NULL), 0, "empty broad phase");
    ls_broadphase_destroy_(bp);
    ls_broadphase_destroy_(NULL);
}
