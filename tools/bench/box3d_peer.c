// SPDX-License-Identifier: MIT
// build/bench_box3d_peer: Box3D (Erin Catto, MIT; BOX3D_DIR, built by `make
// deps-bench` with its own CMake, Release, default SSE2) on its own benchmark
// scenes: large_pyramid, many_pyramids, joint_grid, convex_pile and rain are
// built by Box3D's Create functions (shared/benchmarks.c, release sizes) and
// stepped as its benchmark/main.c does (1/60 s, 4 sub-steps, StepRain before
// each step). The described scenes (pyramid_N, the rollback pile) are built
// from the same description as ours. Each named scene is checked against the
// description (every dynamic body's position, the joint count, the hull's
// points) before it is timed. --threads N = Box3D's workerCount (its own
// scheduler runs the extra workers).
#include "box3d_bench.h"

#include "benchmarks.h"
#include "box3d/box3d.h"
#include "box3d/collision.h"
#include "box3d/math_functions.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct peer {
    b3WorldId w;
    const b3b_scene *s;
    int substeps;
    b3BodyId *ids; // description order (matched by position for the named scenes)
    // BENCH_BOX3D_PROFILE set: b3World_GetProfile summed over the timed steps
    uint32_t profiled;
    double profile[18];
} peer;

// The b3Profile fields BENCH_BOX3D_PROFILE prints (ms), in Box3D's step order.
#define PEER_STAGES 18
static void peer_stages(const b3Profile *p, const char **name, double *ms)
{
    static const char *const names[PEER_STAGES] = {
        "step",    "pairs",        "collide",     "solve",         "solverSetup",
        "prepare", "integrateVel", "warmStart",   "solveImpulses", "integratePos",
        "relax",   "restitution",  "store",       "splitIslands",  "transforms",
        "refit",   "bullets",      "sleepIslands"};
    const float v[PEER_STAGES] = {p->step,
                                  p->pairs,
                                  p->collide,
                                  p->solve,
                                  p->solverSetup,
                                  p->prepareConstraints,
                                  p->integrateVelocities,
                                  p->warmStart,
                                  p->solveImpulses,
                                  p->integratePositions,
                                  p->relaxImpulses,
                                  p->applyRestitution,
                                  p->storeImpulses,
                                  p->splitIslands,
                                  p->transforms,
                                  p->refit,
                                  p->bullets,
                                  p->sleepIslands};
    for (int k = 0; k < PEER_STAGES; k++) {
        name[k] = names[k];
        ms[k] = v[k];
    }
}

typedef struct b3_body_list {
    b3BodyId *ids;
    uint32_t count, cap;
} b3_body_list;

static bool list_shape(b3ShapeId shape, void *context)
{
    b3_body_list *l = context;
    b3BodyId id = b3Shape_GetBody(shape);
    if (b3Body_GetType(id) != b3_dynamicBody) {
        return true;
    }
    if (l->count == l->cap) {
        uint32_t n = l->cap ? 2 * l->cap : 1024;
        b3BodyId *p = realloc(l->ids, n * sizeof *p);
        if (!p) {
            return false;
        }
        l->ids = p, l->cap = n;
    }
    l->ids[l->count++] = id;
    return true;
}

static uint64_t body_key(b3BodyId id)
{
    return (uint64_t)(uint32_t)id.index1 << 32 | (uint64_t)id.world0 << 16 | id.generation;
}

static int cmp_key(const void *a, const void *b)
{
    uint64_t x = body_key(*(const b3BodyId *)a), y = body_key(*(const b3BodyId *)b);
    return (x > y) - (x < y);
}

// Every live dynamic body (a body with several shapes once), by an AABB query
// over the whole world: Box3D's API has no body iterator.
static b3_body_list all_bodies(b3WorldId w)
{
    b3_body_list l = {NULL, 0, 0};
    b3AABB box = {{-1e5f, -1e5f, -1e5f}, {1e5f, 1e5f, 1e5f}};
    b3QueryFilter filter = b3DefaultQueryFilter();
    filter.categoryBits = B3_DEFAULT_MASK_BITS, filter.maskBits = B3_DEFAULT_MASK_BITS;
    b3World_OverlapAABB(w, box, filter, list_shape, &l);
    if (l.count) {
        qsort(l.ids, l.count, sizeof *l.ids, cmp_key);
        uint32_t n = 1;
        for (uint32_t i = 1; i < l.count; i++) {
            if (cmp_key(&l.ids[i], &l.ids[n - 1]) != 0) {
                l.ids[n++] = l.ids[i];
            }
        }
        l.count = n;
    }
    return l;
}

// ---- matching the named scenes against the description ---------------------------

typedef struct placed {
    double p[3];
    uint32_t index; // description index, or position in the Box3D list
} placed;

static int cmp_placed(const void *a, const void *b)
{
    const double *x = ((const placed *)a)->p, *y = ((const placed *)b)->p;
    const int order[3] = {1, 0, 2}; // y, then x, then z (values at least 0.5 m apart)
    for (int k = 0; k < 3; k++) {
        double d = x[order[k]] - y[order[k]];
        if (fabs(d) > 1e-3) {
            return d < 0 ? -1 : 1;
        }
    }
    return 0;
}

static int match(peer *o, char *err, size_t n)
{
    const b3b_scene *s = o->s;
    b3_body_list l = all_bodies(o->w);
    uint32_t dyn = 0;
    for (uint32_t i = 0; i < s->body_count; i++) {
        dyn += (uint32_t)s->bodies[i].dynamic;
    }
    placed *a = calloc(dyn ? dyn : 1, sizeof *a), *b = calloc(l.count ? l.count : 1, sizeof *b);
    int rc = -1;
    if (!a || !b) {
        snprintf(err, n, "out of memory");
        goto done;
    }
    if (l.count != dyn) {
        snprintf(err, n, "Box3D built %u dynamic bodies, the description has %u", l.count, dyn);
        goto done;
    }
    for (uint32_t i = 0, k = 0; i < s->body_count; i++) {
        if (s->bodies[i].dynamic) {
            memcpy(a[k].p, s->bodies[i].pos, sizeof a[k].p);
            a[k++].index = i;
        }
    }
    for (uint32_t i = 0; i < l.count; i++) {
        b3Pos p = b3Body_GetPosition(l.ids[i]);
        b[i].p[0] = p.x, b[i].p[1] = p.y, b[i].p[2] = p.z, b[i].index = i;
    }
    qsort(a, dyn, sizeof *a, cmp_placed);
    qsort(b, l.count, sizeof *b, cmp_placed);
    for (uint32_t i = 0; i < dyn; i++) {
        if (cmp_placed(&a[i], &b[i]) != 0) {
            snprintf(err, n,
                     "Box3D's body at (%.4f, %.4f, %.4f) differs from the description's "
                     "(%.4f, %.4f, %.4f)",
                     b[i].p[0], b[i].p[1], b[i].p[2], a[i].p[0], a[i].p[1], a[i].p[2]);
            goto done;
        }
        o->ids[a[i].index] = l.ids[b[i].index];
    }
    b3Counters c = b3World_GetCounters(o->w);
    if ((uint32_t)c.jointCount != s->joint_count) {
        snprintf(err, n, "Box3D built %d joints, the description has %u", c.jointCount,
                 s->joint_count);
        goto done;
    }
    if (s->hull_count && dyn) { // every hull vertex is one of the description's points
        b3ShapeId shape;
        b3Body_GetShapes(l.ids[0], &shape, 1);
        const b3HullData *h = b3Shape_GetHull(shape);
        const b3Vec3 *pts = b3GetHullPoints(h);
        for (int i = 0; pts && i < h->vertexCount; i++) {
            double best = 1e9;
            for (uint32_t k = 0; k < s->hull_count; k++) {
                double dx = pts[i].x - s->hull[k][0], dy = pts[i].y - s->hull[k][1],
                       dz = pts[i].z - s->hull[k][2];
                best = fmin(best, sqrt(dx * dx + dy * dy + dz * dz));
            }
            if (best > 1e-4) {
                snprintf(err, n, "Box3D's hull vertex %d is not one of the description's points",
                         i);
                goto done;
            }
        }
    }
    rc = 0;
done:
    free(a), free(b), free(l.ids);
    return rc;
}

// ---- the described scenes ---------------------------------------------------------

static b3BodyId static_box(b3WorldId w, double x, double y, double z, double hx, double hy,
                           double hz)
{
    b3BodyDef bd = b3DefaultBodyDef();
    bd.position = (b3Pos){(float)x, (float)y, (float)z};
    b3BodyId id = b3CreateBody(w, &bd);
    b3BoxHull box = b3MakeBoxHull((float)hx, (float)hy, (float)hz);
    b3ShapeDef sd = b3DefaultShapeDef();
    b3CreateHullShape(id, &sd, &box.base);
    return id;
}

static void build_described(peer *o)
{
    const b3b_scene *s = o->s;
    if (!s->sleep) {
        b3World_EnableSleeping(o->w, false);
    }
    if (s->ground) {
        static_box(o->w, 0, -1, 0, s->ground_half[0], s->ground_half[1], s->ground_half[2]);
    }
    if (s->bin_half > 0) { // walls 1 m thick, 8 m high, inner faces at |x|, |z| = bin_half
        double h = s->bin_half;
        static_box(o->w, h + 0.5, 4, 0, 0.5, 4, h + 1);
        static_box(o->w, -h - 0.5, 4, 0, 0.5, 4, h + 1);
        static_box(o->w, 0, 4, h + 0.5, h + 1, 4, 0.5);
        static_box(o->w, 0, 4, -h - 0.5, h + 1, 4, 0.5);
    }
    b3HullData *hull = NULL;
    if (s->hull_count) {
        b3Vec3 p[64];
        for (uint32_t i = 0; i < s->hull_count; i++) {
            p[i] = (b3Vec3){(float)s->hull[i][0], (float)s->hull[i][1], (float)s->hull[i][2]};
        }
        hull = b3CreateHull(p, (int)s->hull_count, (int)s->hull_count);
    }
    for (uint32_t i = 0; i < s->body_count; i++) {
        const b3b_body *b = &s->bodies[i];
        b3BodyDef bd = b3DefaultBodyDef();
        bd.type = b->dynamic ? b3_dynamicBody : b3_staticBody;
        bd.position = (b3Pos){(float)b->pos[0], (float)b->pos[1], (float)b->pos[2]};
        bd.rotation = b3MakeQuatFromAxisAngle((b3Vec3){0, 1, 0}, (float)b->yaw);
        bd.enableSleep = s->sleep != 0;
        o->ids[i] = b3CreateBody(o->w, &bd);
        b3ShapeDef sd = b3DefaultShapeDef();
        sd.density = (float)b->density;
        sd.filter.categoryBits = b->category == 0xFFFFFFFFu ? B3_DEFAULT_MASK_BITS : b->category;
        sd.filter.maskBits = b->mask == 0xFFFFFFFFu ? B3_DEFAULT_MASK_BITS : b->mask;
        if (b->shape == B3B_BOX) {
            b3BoxHull box = b3MakeBoxHull((float)b->half[0], (float)b->half[1], (float)b->half[2]);
            b3CreateHullShape(o->ids[i], &sd, &box.base);
        } else if (b->shape == B3B_SPHERE) {
            b3Sphere sphere = {{0, 0, 0}, (float)b->radius};
            b3CreateSphereShape(o->ids[i], &sd, &sphere);
        } else {
            b3CreateHullShape(o->ids[i], &sd, hull);
        }
    }
    if (hull) {
        b3DestroyHull(hull);
    }
    for (uint32_t i = 0; i < s->joint_count; i++) {
        const b3b_joint *j = &s->joints[i];
        const double *pa = s->bodies[j->a].pos, *pb = s->bodies[j->b].pos;
        b3SphericalJointDef jd = b3DefaultSphericalJointDef();
        jd.base.bodyIdA = o->ids[j->a], jd.base.bodyIdB = o->ids[j->b];
        jd.base.localFrameA.p =
            (b3Vec3){(float)(j->anchor[0] - pa[0]), (float)(j->anchor[1] - pa[1]),
                     (float)(j->anchor[2] - pa[2])};
        jd.base.localFrameB.p =
            (b3Vec3){(float)(j->anchor[0] - pb[0]), (float)(j->anchor[1] - pb[1]),
                     (float)(j->anchor[2] - pb[2])};
        b3CreateSphericalJoint(o->w, &jd);
    }
}

// ---- the engine interface ------------------------------------------------------------

static void peer_destroy(void *h)
{
    peer *o = h;
    if (o->profiled) { // ms per timed step, Box3D's own stages (b3Profile)
        const char *name[PEER_STAGES];
        double unused[PEER_STAGES];
        b3Profile zero = {0};
        peer_stages(&zero, name, unused);
        fprintf(stderr, "profile (ms/step over %u steps):", o->profiled);
        for (int k = 0; k < PEER_STAGES; k++) {
            fprintf(stderr, " %s %.3f", name[k], o->profile[k] / o->profiled);
        }
        fprintf(stderr, "\n");
    }
    if (o->s->rain) {
        DestroyRain();
    }
    if (B3_IS_NON_NULL(o->w)) {
        b3DestroyWorld(o->w);
    }
    free(o->ids);
    free(o);
}

static void *peer_create(const b3b_scene *s, const b3b_opts *opt, char *err, size_t n)
{
    peer *o = calloc(1, sizeof *o);
    if (o) {
        o->ids = calloc(s->body_count ? s->body_count : 1, sizeof *o->ids);
    }
    if (!o || !o->ids) {
        free(o);
        snprintf(err, n, "out of memory");
        return NULL;
    }
    o->s = s, o->substeps = opt->substeps;
    b3WorldDef wd = b3DefaultWorldDef();
    wd.workerCount = opt->threads;
    const char *name = s->name;
    if (strcmp(name, "convex_pile") == 0) {
        GetConvexPileCapacity(&wd.capacity);
    } else if (strcmp(name, "rain") == 0) {
        GetRainCapacity(&wd.capacity);
    }
    o->w = b3CreateWorld(&wd);
    int named = 1;
    if (strcmp(name, "large_pyramid") == 0) {
        CreateLargePyramid(o->w);
    } else if (strcmp(name, "many_pyramids") == 0) {
        CreateManyPyramids(o->w);
    } else if (strcmp(name, "joint_grid") == 0) {
        CreateJointGrid(o->w);
    } else if (strcmp(name, "convex_pile") == 0) {
        CreateConvexPile(o->w);
    } else if (s->rain) {
        CreateRain(o->w);
        named = 0;
    } else {
        build_described(o);
        named = 0;
    }
    if (named && match(o, err, n) != 0) {
        peer_destroy(o);
        return NULL;
    }
    return o;
}

static void peer_step(void *h, uint32_t index)
{
    peer *o = h;
    if (o->s->rain) {
        StepRain(o->w, (int)index);
    }
    b3World_Step(o->w, 1.0f / 60.0f, o->substeps);
    if (index > 0 && getenv("BENCH_BOX3D_PROFILE")) { // the timed steps (1..N-1)
        const char *name[PEER_STAGES];
        double ms[PEER_STAGES];
        b3Profile p = b3World_GetProfile(o->w);
        peer_stages(&p, name, ms);
        for (int k = 0; k < PEER_STAGES; k++) {
            o->profile[k] += ms[k];
        }
        o->profiled++;
    }
}

static uint32_t peer_bodies(void *h, b3b_state *out, uint32_t max)
{
    peer *o = h;
    b3_body_list l = all_bodies(o->w);
    uint32_t n = out ? (l.count < max ? l.count : max) : l.count;
    for (uint32_t i = 0; out && i < n; i++) {
        b3Pos p = b3Body_GetWorldCenter(l.ids[i]);
        out[i].key = body_key(l.ids[i]);
        out[i].p[0] = p.x, out[i].p[1] = p.y, out[i].p[2] = p.z;
    }
    free(l.ids);
    return n;
}

static void peer_tops(void *h, double *pos)
{
    peer *o = h;
    for (uint32_t i = 0; i < o->s->body_count; i++) {
        if (o->s->bodies[i].top) {
            b3Pos p = b3Body_GetWorldCenter(o->ids[i]);
            *pos++ = p.x, *pos++ = p.y, *pos++ = p.z;
        }
    }
}

// Deepest manifold point of the last step (separations are computed before
// solving, as ours), over every dynamic body's contacts.
static double peer_max_penetration(void *h)
{
    peer *o = h;
    b3_body_list l = all_bodies(o->w);
    double deepest = 0;
    b3ContactData *data = NULL;
    int cap = 0;
    for (uint32_t i = 0; i < l.count; i++) {
        int need = b3Body_GetContactCapacity(l.ids[i]);
        if (need > cap) {
            b3ContactData *p = realloc(data, (size_t)need * sizeof *p);
            if (!p) {
                break;
            }
            data = p, cap = need;
        }
        int n = b3Body_GetContactData(l.ids[i], data, cap);
        for (int c = 0; c < n; c++) {
            for (int m = 0; m < data[c].manifoldCount; m++) {
                const b3Manifold *mf = &data[c].manifolds[m];
                for (int k = 0; k < mf->pointCount; k++) {
                    deepest = fmax(deepest, -mf->points[k].separation);
                }
            }
        }
    }
    free(data);
    free(l.ids);
    return deepest;
}

static uint32_t peer_body_count(void *h)
{
    return (uint32_t)b3World_GetCounters(((peer *)h)->w).bodyCount;
}

static uint32_t peer_joint_count(void *h)
{
    return (uint32_t)b3World_GetCounters(((peer *)h)->w).jointCount;
}

static const char *peer_warning(void *h)
{
    (void)h;
    return NULL;
}

int main(int argc, char **argv)
{
    static const b3b_engine e = {"box3d",
                                 4, // --substeps default: Box3D's benchmark uses 4
                                 peer_create,
                                 peer_step,
                                 peer_bodies,
                                 peer_tops,
                                 peer_max_penetration,
                                 peer_body_count,
                                 peer_joint_count,
                                 peer_warning,
                                 peer_destroy};
    return b3b_main(&e, argc, argv);
}
