// SPDX-License-Identifier: MIT
// Constraint graph colouring (graph.c): constraints of one colour share no
// moving body, so a colour can be solved in parallel with the same bits as
// serially. Colours are assigned greedily in constraint order (joints in slot
// order, then contacts in contact order), so they depend only on ids: a
// constraint between two moving bodies takes the lowest free colour below
// LS_GRAPH_MAX_COLOURS - 4, one with a single moving body the highest free
// colour from the top (so it is solved last in a sweep, as in Box2D), and
// empty colours are dropped (graph.c, SPEC.md §11.1).
#ifndef LS_GRAPH_H
#define LS_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Most colours; constraints that fit in none go to the overflow group,
/// solved serially after the colours, in constraint order.
#define LS_GRAPH_MAX_COLOURS 24

/// A constraint as the graph sees it: its two bodies' slots, UINT32_MAX for a
/// body that does not move (static, kinematic or asleep: never written).
typedef struct ls_graph_edge {
    uint32_t a, b;
} ls_graph_edge;

/// A colouring: order[] holds constraint indices grouped by colour;
/// group g (0..colour_count, the last being the overflow) is
/// order[start[g] .. start[g + 1]).
typedef struct ls_graph {
    uint32_t colour_count;                    ///< colours used (overflow not counted)
    uint32_t start[LS_GRAPH_MAX_COLOURS + 2]; ///< group offsets; start[colour_count + 1] = n
    uint32_t *order;                          ///< capacity max_constraints
    uint32_t max_constraints;
    uint32_t max_bodies;
    uint64_t *used;     ///< (scratch) per colour, one bit per body slot
    uint8_t *colour_of; ///< (scratch) per constraint
} ls_graph;

/// Bytes ls_graph_init_ allocates.
size_t ls_graph_memory_size_(uint32_t max_constraints, uint32_t max_bodies);
/// Allocate a graph for at most max_constraints constraints over max_bodies body slots.
bool ls_graph_init_(ls_graph *g, uint32_t max_constraints, uint32_t max_bodies);
/// Free what ls_graph_init_ allocated.
void ls_graph_free_(ls_graph *g);
/// Colour n constraints (n <= max_constraints). Never allocates.
void ls_graph_colour_(ls_graph *g, const ls_graph_edge *edges, uint32_t n);

#endif
