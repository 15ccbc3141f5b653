// SPDX-License-Identifier: MIT
// Constraint graph colouring (graph.h). Why colours: two constraints that
// share no moving body write disjoint velocities, so every constraint of one
// colour can be solved at once on any number of threads and the bits are the
// same as solving them one after the other. Colours are solved one after the
// other, then the overflow group serially, so the solve order is a pure
// function of the constraint list: the colouring is recomputed from scratch
// every step (no history, unlike Box2D's persistent graph), greedily in
// constraint order, and nothing in it depends on the number of workers.
//
// The rule (SPEC.md §11 "Threads"), with C = LS_GRAPH_MAX_COLOURS:
//  - a constraint between two moving bodies takes the lowest colour in
//    [0, LS_GRAPH_DYNAMIC_COLOURS) where neither body is used yet;
//  - a constraint with one moving body takes the highest colour in [1, C)
//    where that body is unused (Box2D's trick: constraints against static
//    geometry fill the colours from the top, so they are solved after the
//    body-body ones of each iteration and have the last word, which keeps
//    stacks stiff; and they never crowd colour 0);
//  - a constraint with no moving body takes colour 0 (it writes nothing);
//  - a constraint that fits nowhere goes to the overflow group.
// Empty colours are then dropped (the groups keep ascending colour order) and
// each group lists its constraints in ascending index.
#include "graph.h"

#include <stdlib.h>
#include <string.h>

/// Colours a constraint between two moving bodies may take; the top ones are
/// left to constraints with one moving body.
#define LS_GRAPH_DYNAMIC_COLOURS (LS_GRAPH_MAX_COLOURS - 4)
#define LS_GRAPH_OVERFLOW        LS_GRAPH_MAX_COLOURS

_Static_assert(LS_GRAPH_MAX_COLOURS < 255, "colour_of is a byte");
_Static_assert(LS_GRAPH_DYNAMIC_COLOURS >= 2, "need colours for body-body constraints");

static size_t words_per_colour(uint32_t max_bodies)
{
    return ((size_t)max_bodies + 63) / 64;
}

size_t ls_graph_memory_size_(uint32_t max_constraints, uint32_t max_bodies)
{
    size_t n = max_constraints ? max_constraints : 1;
    size_t words = words_per_colour(max_bodies ? max_bodies : 1);
    return n * (sizeof(uint32_t) + sizeof(uint8_t)) +
           (size_t)LS_GRAPH_MAX_COLOURS * words * sizeof(uint64_t);
}

bool ls_graph_init_(ls_graph *g, uint32_t max_constraints, uint32_t max_bodies)
{
    memset(g, 0, sizeof *g);
    size_t n = max_constraints ? max_constraints : 1;
    size_t words = words_per_colour(max_bodies ? max_bodies : 1);
    g->max_constraints = max_constraints;
    g->max_bodies = max_bodies;
    g->order = calloc(n, sizeof *g->order);
    g->colour_of = calloc(n, sizeof *g->colour_of);
    // Zeroed once: ls_graph_colour_ clears exactly the bits it set.
    g->used = calloc((size_t)LS_GRAPH_MAX_COLOURS * words, sizeof *g->used);
    if (!g->order || !g->colour_of || !g->used) {
        ls_graph_free_(g);
        return false;
    }
    return true;
}

void ls_graph_free_(ls_graph *g)
{
    free(g->order);
    free(g->colour_of);
    free(g->used);
    g->order = NULL;
    g->colour_of = NULL;
    g->used = NULL;
}

static bool bit(const uint64_t *set, uint32_t i)
{
    return (set[i >> 6] >> (i & 63)) & 1u;
}

static void set_bit(uint64_t *set, uint32_t i)
{
    set[i >> 6] |= (uint64_t)1 << (i & 63);
}

static void clear_bit(uint64_t *set, uint32_t i)
{
    set[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

// The colour of one constraint (see the rule at the top); marks its bodies.
static uint32_t assign(ls_graph *g, size_t words, uint32_t a, uint32_t b)
{
    if (a == UINT32_MAX) {
        a = b;
        b = UINT32_MAX;
    }
    if (a == UINT32_MAX) {
        return 0;
    }
    if (b != UINT32_MAX && b != a) {
        for (uint32_t c = 0; c < LS_GRAPH_DYNAMIC_COLOURS; c++) {
            uint64_t *set = g->used + c * words;
            if (!bit(set, a) && !bit(set, b)) {
                set_bit(set, a);
                set_bit(set, b);
                return c;
            }
        }
        return LS_GRAPH_OVERFLOW;
    }
    for (uint32_t c = LS_GRAPH_MAX_COLOURS - 1; c >= 1; c--) {
        uint64_t *set = g->used + c * words;
        if (!bit(set, a)) {
            set_bit(set, a);
            return c;
        }
    }
    return LS_GRAPH_OVERFLOW;
}

void ls_graph_colour_(ls_graph *g, const ls_graph_edge *edges, uint32_t n)
{
    if (n > g->max_constraints) {
        n = g->max_constraints; // never happens with the world's capacities
    }
    const size_t words = words_per_colour(g->max_bodies ? g->max_bodies : 1);
    uint32_t count[LS_GRAPH_MAX_COLOURS + 1] = {0};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a = edges[i].a < g->max_bodies ? edges[i].a : UINT32_MAX;
        uint32_t b = edges[i].b < g->max_bodies ? edges[i].b : UINT32_MAX;
        uint32_t c = assign(g, words, a, b);
        g->colour_of[i] = (uint8_t)c;
        count[c]++;
    }
    // Group offsets over the non-empty colours, in ascending colour, then the
    // overflow; `slot` maps a colour to its group.
    uint32_t slot[LS_GRAPH_MAX_COLOURS + 1];
    uint32_t next[LS_GRAPH_MAX_COLOURS + 2];
    uint32_t groups = 0, at = 0;
    for (uint32_t c = 0; c < LS_GRAPH_MAX_COLOURS; c++) {
        if (count[c] == 0) {
            continue;
        }
        slot[c] = groups;
        g->start[groups++] = at;
        at += count[c];
    }
    g->colour_count = groups;
    slot[LS_GRAPH_OVERFLOW] = groups;
    g->start[groups] = at;
    g->start[groups + 1] = n;
    for (uint32_t k = groups + 2; k < LS_GRAPH_MAX_COLOURS + 2; k++) {
        g->start[k] = n;
    }
    memcpy(next, g->start, sizeof next);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = g->colour_of[i];
        g->order[next[slot[c]]++] = i;
        // Leave the bit sets empty for the next call (cheaper than clearing
        // max_bodies bits per colour).
        if (c != LS_GRAPH_OVERFLOW) {
            uint64_t *set = g->used + c * words;
            if (edges[i].a < g->max_bodies) {
                clear_bit(set, edges[i].a);
            }
            if (edges[i].b < g->max_bodies) {
                clear_bit(set, edges[i].b);
            }
        }
    }
}
