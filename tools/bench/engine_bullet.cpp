// SPDX-License-Identifier: MIT
// build/bench_bullet: Bullet (Debian libbullet-dev 3.24, single precision)
// behind the bench interface: btDiscreteDynamicsWorld + btDbvtBroadphase +
// btSequentialImpulseConstraintSolver, built from OUR scene file so bodies,
// sizes, masses, dt, gravity and iteration count are identical. Hulls are
// btConvexHullShape, meshes btBvhTriangleMeshShape over a
// btTriangleIndexVertexArray, compound bodies btCompoundShape with one child
// transform per shape; a dynamic body sits at its centre of mass with principal
// axes (Bullet requires both). Benchmark only.
#include "bench.h"

#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace
{

// How our hulls become btConvexHullShapes (BENCH_BULLET_HULL=raw|shrink|sat;
// tools/bench/README.md has the numbers of each):
//   raw    (default) our points, margin = linear slop (0.005 m): the hull is at most
//          5 mm larger than ours (rounded), Bullet's GJK/EPA + persistent manifold;
//   shrink Bullet's default 0.04 m margin with the points of our hull shrunk by it
//          (as Bullet's ConvexDecomposition demo does): exact size, but about 3x the
//          points (every vertex of degree d > 3 splits), so a slower support function;
//   sat    raw + initializePolyhedralFeatures(): SAT and face clipping (full manifolds
//          each step, like ours) instead of one GJK point per step.
enum HullMode { HULL_RAW, HULL_SHRINK, HULL_SAT };

struct BulletWorld {
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher{&config};
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
    // Triangle data the mesh shapes point into (declared before `shapes`, so freed after them).
    std::vector<std::unique_ptr<std::vector<btScalar>>> mesh_vertices;
    std::vector<std::unique_ptr<std::vector<int>>> mesh_indices;
    std::vector<std::unique_ptr<btTriangleIndexVertexArray>> meshes;
    std::vector<std::unique_ptr<btCollisionShape>> shapes; // bodies' shapes and compound children
    std::vector<std::unique_ptr<btRigidBody>> bodies;
    std::vector<btRigidBody *> dynamic;
    btScalar dt = 0;
    HullMode hull_mode = HULL_RAW;
    double hull_margin = 0.005;

    ~BulletWorld()
    {
        for (auto &b : bodies) {
            world.removeRigidBody(b.get());
        }
    }
};

// Our pair rules: friction sqrt(a*b), restitution max(a, b) (Bullet's defaults are
// a*b for both). Each engine gets the same per-pair coefficients.
btScalar mix_friction(const btCollisionObject *a, const btCollisionObject *b)
{
    return btSqrt(a->getFriction() * b->getFriction());
}

btScalar mix_restitution(const btCollisionObject *a, const btCollisionObject *b)
{
    return std::max(a->getRestitution(), b->getRestitution());
}

btVector3 vec(const double v[3])
{
    return btVector3(btScalar(v[0]), btScalar(v[1]), btScalar(v[2]));
}

btTransform pose_of(const bench_shape &s)
{
    btTransform xf;
    xf.setIdentity();
    xf.setOrigin(vec(s.pos));
    xf.setRotation(btQuaternion(btScalar(s.quat[0]), btScalar(s.quat[1]), btScalar(s.quat[2]),
                                btScalar(s.quat[3])));
    return xf;
}

// Bullet's convex margin lies OUTSIDE a btConvexHullShape's points (inside a
// btBoxShape's extents). The `shrink` mode keeps our size with the default
// 0.04 m margin: the points are those of our hull shrunk by m (every face plane
// moved in by m; vertices = intersections of three shrunk planes inside all of
// them), so points + margin = our hull with edges rounded by m, as Bullet's
// boxes. Returns false if the hull is too thin for m (the caller tries a smaller one).
bool shrink_hull(const bench_shape &s, double m, std::vector<btVector3> &out)
{
    out.clear();
    const uint32_t nf = s.face_count;
    auto plane = [&](uint32_t f, int k) { return s.planes[4 * size_t(f) + size_t(k)]; };
    auto try_triple = [&](uint32_t a, uint32_t b, uint32_t c) {
        const double n[3][3] = {{plane(a, 0), plane(a, 1), plane(a, 2)},
                                {plane(b, 0), plane(b, 1), plane(b, 2)},
                                {plane(c, 0), plane(c, 1), plane(c, 2)}};
        const double r[3] = {plane(a, 3) - m, plane(b, 3) - m, plane(c, 3) - m};
        double det = n[0][0] * (n[1][1] * n[2][2] - n[1][2] * n[2][1]) -
                     n[0][1] * (n[1][0] * n[2][2] - n[1][2] * n[2][0]) +
                     n[0][2] * (n[1][0] * n[2][1] - n[1][1] * n[2][0]);
        if (std::fabs(det) < 1e-9) {
            return;
        }
        double x[3];
        for (int i = 0; i < 3; i++) { // Cramer's rule
            double t[3][3];
            for (int row = 0; row < 3; row++) {
                for (int col = 0; col < 3; col++) {
                    t[row][col] = col == i ? r[row] : n[row][col];
                }
            }
            x[i] = (t[0][0] * (t[1][1] * t[2][2] - t[1][2] * t[2][1]) -
                    t[0][1] * (t[1][0] * t[2][2] - t[1][2] * t[2][0]) +
                    t[0][2] * (t[1][0] * t[2][1] - t[1][1] * t[2][0])) /
                   det;
        }
        for (uint32_t f = 0; f < nf; f++) {
            if (plane(f, 0) * x[0] + plane(f, 1) * x[1] + plane(f, 2) * x[2] >
                plane(f, 3) - m + 1e-9) {
                return;
            }
        }
        btVector3 p = vec(x);
        for (const btVector3 &q : out) {
            if ((q - p).length2() < btScalar(1e-12)) {
                return;
            }
        }
        out.push_back(p);
    };
    for (uint32_t a = 0; a < nf; a++) {
        for (uint32_t b = a + 1; b < nf; b++) {
            for (uint32_t c = b + 1; c < nf; c++) {
                try_triple(a, b, c);
            }
        }
    }
    if (out.size() < 4) {
        return false;
    }
    btVector3 lo = out[0], hi = out[0];
    for (const btVector3 &p : out) {
        lo.setMin(p), hi.setMax(p);
    }
    btVector3 ext = hi - lo;
    return ext.x() > btScalar(1e-4) && ext.y() > btScalar(1e-4) && ext.z() > btScalar(1e-4);
}

// One shape in its own frame (bake: with its pose applied to the points, for a
// hull or mesh that is the body's only shape, so no btCompoundShape is needed).
btCollisionShape *make_shape(BulletWorld *w, const bench_shape &s, bool bake)
{
    btTransform pose = bake ? pose_of(s) : btTransform::getIdentity();
    switch (s.kind) {
    case BENCH_SPHERE:
        return new btSphereShape(btScalar(s.radius));
    case BENCH_BOX: // default margin 0.04 m lies inside the half extents (size unchanged)
        return new btBoxShape(vec(s.half));
    case BENCH_CAPSULE: // Bullet's capsule is along local Y, like ours
        return new btCapsuleShape(btScalar(s.radius), btScalar(2 * s.half_height));
    case BENCH_HULL: {
        auto *hull = new btConvexHullShape();
        std::vector<btVector3> pts;
        double m = w->hull_margin;
        if (w->hull_mode == HULL_SHRINK) {
            m = double(hull->getMargin()); // Bullet's default 0.04 m
            while (!shrink_hull(s, m, pts) && m > 0.002) {
                m /= 2; // a hull thinner than 2 margins: smaller margin
            }
        }
        if (pts.size() < 4) { // our points as they are
            pts.clear();
            for (uint32_t i = 0; i < s.vertex_count; i++) {
                pts.push_back(vec(s.vertices + 3 * size_t(i)));
            }
        }
        hull->setMargin(btScalar(m));
        for (const btVector3 &p : pts) {
            hull->addPoint(pose * p, false);
        }
        hull->recalcLocalAabb();
        if (w->hull_mode == HULL_SAT) {
            hull->initializePolyhedralFeatures(); // SAT + face clipping: full manifolds per step
        }
        return hull;
    }
    case BENCH_MESH: { // static: btBvhTriangleMeshShape over our triangles (margin 0)
        auto *v = new std::vector<btScalar>(3 * size_t(s.vertex_count));
        auto *ix = new std::vector<int>(3 * size_t(s.triangle_count));
        for (uint32_t i = 0; i < s.vertex_count; i++) {
            btVector3 p = pose * vec(s.vertices + 3 * size_t(i));
            (*v)[3 * i] = p.x(), (*v)[3 * i + 1] = p.y(), (*v)[3 * i + 2] = p.z();
        }
        for (size_t i = 0; i < ix->size(); i++) {
            (*ix)[i] = int(s.triangles[i]);
        }
        auto *arr = new btTriangleIndexVertexArray(int(s.triangle_count), ix->data(),
                                                   3 * int(sizeof(int)), int(s.vertex_count),
                                                   v->data(), 3 * int(sizeof(btScalar)));
        w->mesh_vertices.emplace_back(v);
        w->mesh_indices.emplace_back(ix);
        w->meshes.emplace_back(arr);
        return new btBvhTriangleMeshShape(arr, true); // quantized AABB tree
    }
    default:
        return new btStaticPlaneShape(vec(s.normal), btScalar(s.plane_d));
    }
}

// The body's collision shape in its peer frame (centre of mass and principal
// axes for a dynamic body): the shape itself when it is alone and either sits
// at the origin or is a hull/mesh (pose baked into its points), else a
// btCompoundShape with one child transform per shape.
btCollisionShape *make_body_shape(BulletWorld *w, const bench_body &b)
{
    const bench_shape &s0 = b.shapes[0];
    if (b.shape_count == 1 && (s0.identity || s0.kind == BENCH_HULL || s0.kind == BENCH_MESH)) {
        btCollisionShape *shape = make_shape(w, s0, !s0.identity);
        w->shapes.emplace_back(shape);
        return shape;
    }
    auto *compound = new btCompoundShape(true, int(b.shape_count));
    for (uint32_t k = 0; k < b.shape_count; k++) {
        btCollisionShape *child = make_shape(w, b.shapes[k], false);
        w->shapes.emplace_back(child);
        compound->addChildShape(pose_of(b.shapes[k]), child);
    }
    w->shapes.emplace_back(compound);
    return compound;
}

void *bullet_create(const bench_scene *s, char *err, size_t err_size)
{
    gCalculateCombinedFrictionCallback = mix_friction;
    gCalculateCombinedRestitutionCallback = mix_restitution;
    gDeactivationTime = btScalar(s->sleep_time); // our sleep_time (Bullet default 2 s)
    HullMode mode = HULL_RAW;
    if (const char *v = std::getenv("BENCH_BULLET_HULL"); v && *v) {
        if (std::strcmp(v, "shrink") == 0) {
            mode = HULL_SHRINK;
        } else if (std::strcmp(v, "sat") == 0) {
            mode = HULL_SAT;
        } else if (std::strcmp(v, "raw") != 0) {
            std::snprintf(err, err_size, "BENCH_BULLET_HULL=%s: expected raw, shrink or sat", v);
            return nullptr;
        }
    }
    auto *w = new BulletWorld;
    w->dt = btScalar(s->dt);
    w->hull_mode = mode;
    w->hull_margin = s->linear_slop;
    w->world.setGravity(
        btVector3(btScalar(s->gravity[0]), btScalar(s->gravity[1]), btScalar(s->gravity[2])));
    btContactSolverInfo &si = w->world.getSolverInfo();
    si.m_numIterations = s->velocity_iterations; // 8, like our velocity iterations
    si.m_erp = btScalar(s->baumgarte);           // 0.2 (Bullet default too)
    si.m_splitImpulse = 1;                       // position error by split impulse, like ours
    si.m_linearSlop = btScalar(s->linear_slop);  // 0.005 m
    si.m_restitutionVelocityThreshold = btScalar(s->restitution_thresh); // 1 m/s
    for (uint32_t i = 0; i < s->count; i++) {
        const bench_body &b = s->bodies[i];
        btCollisionShape *shape = make_body_shape(w, b);
        btScalar mass = b.type == BENCH_DYNAMIC ? btScalar(b.mass) : btScalar(0);
        // Principal moments from the same shapes and densities as ours (bench_common.c), not
        // calculateLocalInertia (which takes a hull's or compound's bounding box).
        btVector3 inertia = mass > 0 ? vec(b.inertia) : btVector3(0, 0, 0);
        btRigidBody::btRigidBodyConstructionInfo info(mass, nullptr, shape, inertia);
        btTransform xf;
        xf.setIdentity();
        xf.setOrigin(btVector3(btScalar(b.pos[0]), btScalar(b.pos[1]), btScalar(b.pos[2])));
        xf.setRotation(btQuaternion(btScalar(b.quat[0]), btScalar(b.quat[1]), btScalar(b.quat[2]),
                                    btScalar(b.quat[3])));
        info.m_startWorldTransform = xf;
        // One material per collision object: a compound body takes its first shape's.
        info.m_friction = btScalar(b.shapes[0].friction);
        info.m_restitution = btScalar(b.shapes[0].restitution);
        info.m_linearSleepingThreshold = btScalar(s->sleep_linear);
        info.m_angularSleepingThreshold = btScalar(s->sleep_angular);
        info.m_linearDamping = btScalar(b.lin_damp);
        info.m_angularDamping = btScalar(b.ang_damp);
        auto *body = new btRigidBody(info);
        w->bodies.emplace_back(body);
        if (b.type == BENCH_DYNAMIC) {
            body->setLinearVelocity(
                btVector3(btScalar(b.vel[0]), btScalar(b.vel[1]), btScalar(b.vel[2])));
            body->setAngularVelocity(
                btVector3(btScalar(b.angvel[0]), btScalar(b.angvel[1]), btScalar(b.angvel[2])));
            if (!b.allow_sleep) {
                body->setActivationState(DISABLE_DEACTIVATION);
            }
            w->dynamic.push_back(body);
        }
        w->world.addRigidBody(body);
    }
    return w;
}

void bullet_step(void *h)
{
    auto *w = static_cast<BulletWorld *>(h);
    w->world.stepSimulation(w->dt, 0); // maxSubSteps 0: exactly one step of dt
}

void bullet_positions(void *h, double *xyz)
{
    auto *w = static_cast<BulletWorld *>(h);
    for (btRigidBody *b : w->dynamic) {
        const btVector3 &p = b->getWorldTransform().getOrigin();
        *xyz++ = p.x(), *xyz++ = p.y(), *xyz++ = p.z();
    }
}

bench_stats bullet_stats(void *h)
{
    auto *w = static_cast<BulletWorld *>(h);
    bench_stats st{0, 0, 0};
    int n = w->dispatcher.getNumManifolds();
    for (int i = 0; i < n; i++) {
        const btPersistentManifold *m = w->dispatcher.getManifoldByIndexInternal(i);
        bool touching = false;
        for (int k = 0; k < m->getNumContacts(); k++) {
            btScalar dist = m->getContactPoint(k).getDistance();
            touching = touching || dist <= 0;
            st.max_penetration = std::max(st.max_penetration, double(-dist));
        }
        st.contacts += touching;
    }
    for (btRigidBody *b : w->dynamic) {
        st.asleep += b->getActivationState() == ISLAND_SLEEPING;
    }
    return st;
}

void bullet_destroy(void *h)
{
    delete static_cast<BulletWorld *>(h);
}

} // namespace

int main(int argc, char **argv)
{
    static const bench_engine e = {"bullet",    "3.24",           "float",      bullet_create,
                                   bullet_step, bullet_positions, bullet_stats, bullet_destroy};
    return bench_engine_main(&e, argc, argv);
}
