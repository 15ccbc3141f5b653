// SPDX-License-Identifier: MIT
// build/bench_bullet: Bullet (Debian libbullet-dev 3.24, single precision)
// behind the bench interface: btDiscreteDynamicsWorld + btDbvtBroadphase +
// btSequentialImpulseConstraintSolver, built from OUR scene file so bodies,
// sizes, masses, dt, gravity and iteration count are identical. Hulls are
// btConvexHullShape, meshes btBvhTriangleMeshShape over a
// btTriangleIndexVertexArray, compound bodies btCompoundShape with one child
// transform per shape; a dynamic body sits at its centre of mass with principal
// axes (Bullet requires both). Joints: btPoint2PointConstraint (ball),
// btHingeConstraint (limits, motor), btFixedConstraint, btSliderConstraint
// (prismatic), btConeTwistConstraint (cone) and a one-row distance constraint
// of our own (Bullet has none); joint springs are explicit forces before each
// step (tools/bench/README.md). Benchmark only.
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

/// btHingeConstraint::getHingeAngle per our angle (B relative to A,
/// right-handed about the axis); checked with both bodies dynamic and with a
/// static A. The slider's position is computed from the anchors (no sign).
constexpr double BULLET_HINGE_SIGN = -1.0;

// Distance joint (Bullet has none): one row along the line between the
// anchors, two-sided at a fixed length, one-sided at a bound of [min, max],
// no row while the length is inside the range.
class DistanceConstraint : public btTypedConstraint
{
  public:
    DistanceConstraint(btRigidBody &a, btRigidBody &b, const bench_joint &j)
        : btTypedConstraint(POINT2POINT_CONSTRAINT_TYPE, a, b), joint(j)
    {
    }
    void getInfo1(btConstraintInfo1 *info) override
    {
        btVector3 d = world_b() - world_a();
        btScalar len = d.length();
        bool rigid = joint.min_length == joint.max_length;
        active = rigid || len > btScalar(joint.max_length) || len < btScalar(joint.min_length);
        info->m_numConstraintRows = active ? 1 : 0;
        info->nub = active ? 0 : 1;
    }
    void getInfo2(btConstraintInfo2 *info) override
    {
        btVector3 pa = world_a(), pb = world_b(), d = pb - pa;
        btScalar len = d.length();
        btVector3 n = len > btScalar(1e-9) ? d / len : btVector3(0, 1, 0);
        btVector3 ra = pa - m_rbA.getCenterOfMassPosition(),
                  rb = pb - m_rbB.getCenterOfMassPosition();
        btVector3 ca = ra.cross(n), cb = rb.cross(n);
        // J v = c, the lambda of body A along -n (Bullet's point-to-point convention).
        for (int k = 0; k < 3; k++) {
            info->m_J1linearAxis[k] = -n[k];
            info->m_J1angularAxis[k] = -ca[k];
            info->m_J2linearAxis[k] = n[k];
            info->m_J2angularAxis[k] = cb[k];
        }
        btScalar target = len > btScalar(joint.max_length)   ? btScalar(joint.max_length)
                          : len < btScalar(joint.min_length) ? btScalar(joint.min_length)
                                                             : len;
        info->m_constraintError[0] = info->fps * info->erp * (target - len);
        if (joint.min_length != joint.max_length) {
            if (len > btScalar(joint.max_length)) { // rope taut: may only pull
                info->m_lowerLimit[0] = -SIMD_INFINITY, info->m_upperLimit[0] = 0;
            } else { // pushed below the minimum: may only push
                info->m_lowerLimit[0] = 0, info->m_upperLimit[0] = SIMD_INFINITY;
            }
        }
    }
    void setParam(int, btScalar, int) override
    {
    }
    btScalar getParam(int, int) const override
    {
        return 0;
    }

  private:
    btVector3 world_a() const
    {
        return m_rbA.getCenterOfMassTransform() * btVector3(btScalar(joint.local_a[0]),
                                                            btScalar(joint.local_a[1]),
                                                            btScalar(joint.local_a[2]));
    }
    btVector3 world_b() const
    {
        return m_rbB.getCenterOfMassTransform() * btVector3(btScalar(joint.local_b[0]),
                                                            btScalar(joint.local_b[1]),
                                                            btScalar(joint.local_b[2]));
    }
    const bench_joint &joint;
    bool active = false;
};

struct BulletJoint {
    const bench_joint *src;
    btTypedConstraint *c; // owned by BulletWorld::constraints (null: a pure distance spring)
    btRigidBody *a, *b;
};

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
    std::vector<std::unique_ptr<btTypedConstraint>> constraints; // freed before the bodies
    std::vector<btRigidBody *> dynamic;
    std::vector<btRigidBody *> body_of; // every body in file order
    std::vector<BulletJoint> joints;
    const bench_scene *scene = nullptr;
    btScalar dt = 0;
    HullMode hull_mode = HULL_RAW;
    double hull_margin = 0.005;

    ~BulletWorld()
    {
        for (auto &c : constraints) {
            world.removeConstraint(c.get());
        }
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

// A joint frame in the world (origin at the anchor, axis `primary` along the
// joint axis), then in body b's frame.
btTransform frame_in(const btRigidBody *b, const bench_joint &j, int primary)
{
    double m[3][3];
    bench_basis(j.axis, primary, m);
    btMatrix3x3 basis{btScalar(m[0][0]), btScalar(m[0][1]), btScalar(m[0][2]),
                      btScalar(m[1][0]), btScalar(m[1][1]), btScalar(m[1][2]),
                      btScalar(m[2][0]), btScalar(m[2][1]), btScalar(m[2][2])};
    btTransform w(basis, vec(j.anchor));
    return b->getCenterOfMassTransform().inverse() * w;
}

void add_joint(BulletWorld *w, const bench_joint &j)
{
    btRigidBody *a = w->body_of[j.a], *b = w->body_of[j.b];
    btTypedConstraint *c = nullptr;
    switch (j.kind) {
    case BENCH_JOINT_BALL:
        c = new btPoint2PointConstraint(*a, *b, vec(j.local_a), vec(j.local_b));
        break;
    case BENCH_JOINT_HINGE: { // hinge axis = the frames' Z
        auto *h = new btHingeConstraint(*a, *b, frame_in(a, j, 2), frame_in(b, j, 2), false);
        if (j.enable_limit) {
            double lo = BULLET_HINGE_SIGN > 0 ? j.lower : -j.upper;
            double hi = BULLET_HINGE_SIGN > 0 ? j.upper : -j.lower;
            h->setLimit(btScalar(lo), btScalar(hi));
        }
        if (j.enable_motor) {
            h->enableAngularMotor(true, btScalar(BULLET_HINGE_SIGN * j.motor_speed),
                                  btScalar(j.max_motor) * w->dt);
        }
        c = h;
        break;
    }
    case BENCH_JOINT_FIXED:
        c = new btFixedConstraint(*a, *b, frame_in(a, j, 0), frame_in(b, j, 0));
        break;
    case BENCH_JOINT_PRISMATIC: { // slide axis = the frames' X; rotation locked
        auto *sl = new btSliderConstraint(*a, *b, frame_in(a, j, 0), frame_in(b, j, 0), true);
        if (j.enable_limit) {
            sl->setLowerLinLimit(btScalar(j.lower));
            sl->setUpperLinLimit(btScalar(j.upper));
        } else {
            sl->setLowerLinLimit(1), sl->setUpperLinLimit(-1); // free
        }
        sl->setLowerAngLimit(0), sl->setUpperAngLimit(0);
        if (j.enable_motor) {
            sl->setPoweredLinMotor(true);
            sl->setTargetLinMotorVelocity(btScalar(j.motor_speed));
            sl->setMaxLinMotorForce(btScalar(j.max_motor));
        }
        c = sl;
        break;
    }
    case BENCH_JOINT_CONE: { // twist axis = the frames' X; an asymmetric twist range
        // is centred by turning B's frame about X by its middle.
        btTransform fa = frame_in(a, j, 0), fb = frame_in(b, j, 0);
        double mid = j.enable_twist ? (j.twist_lower + j.twist_upper) / 2 : 0;
        double span = j.enable_twist ? (j.twist_upper - j.twist_lower) / 2 : 1e30;
        fb.setBasis(fb.getBasis() * btMatrix3x3(btQuaternion(btVector3(1, 0, 0), btScalar(-mid))));
        auto *ct = new btConeTwistConstraint(*a, *b, fa, fb);
        ct->setLimit(btScalar(j.cone), btScalar(j.cone), btScalar(span));
        c = ct;
        if (j.enable_motor && j.max_motor > 0) {
            // Joint friction (our cone's motor, speed 0): the cone-twist's own
            // motor acts only in its obsolete solve, so a second constraint,
            // a 6-DOF one with every axis free and a motor of speed 0 and
            // force max_motor on each angular axis (Bullet bounds it by
            // force / fps).
            auto *fr = new btGeneric6DofConstraint(*a, *b, fa, fb, true);
            fr->setLinearLowerLimit(btVector3(1, 1, 1)); // lower > upper: free
            fr->setLinearUpperLimit(btVector3(-1, -1, -1));
            for (int k = 0; k < 3; k++) {
                btRotationalLimitMotor *m = fr->getRotationalLimitMotor(k);
                m->m_loLimit = 1, m->m_hiLimit = -1; // free
                m->m_enableMotor = true;
                m->m_targetVelocity = 0;
                m->m_maxMotorForce = btScalar(j.max_motor);
            }
            w->constraints.emplace_back(fr);
            w->world.addConstraint(fr, true);
        }
        break;
    }
    default: // distance
        if (!(j.enable_spring && j.min_length == j.rest_length && j.max_length == j.rest_length)) {
            c = new DistanceConstraint(*a, *b, j);
        }
        break;
    }
    if (c) {
        if (j.break_force > 0) { // Bullet: per row, the same impulse bound for every row
            c->setBreakingImpulseThreshold(btScalar(j.break_force) * w->dt);
        }
        w->constraints.emplace_back(c);
        w->world.addConstraint(c, !j.collide);
    }
    w->joints.push_back(BulletJoint{&j, c, a, b});
}

btVector3 point_of(const btRigidBody *b, const double local[3])
{
    return b->getCenterOfMassTransform() * vec(local);
}

// Springs: -k x - c v (k, c from hertz, damping ratio and the pair's effective
// mass or inertia), applied as forces before the step.
void joints_before_step(BulletWorld *w)
{
    for (const BulletJoint &bj : w->joints) {
        const bench_joint &j = *bj.src;
        if (!j.enable_spring || (bj.c && !bj.c->isEnabled()) ||
            (!bj.a->isActive() && !bj.b->isActive())) {
            continue;
        }
        btScalar om = btScalar(2 * 3.14159265358979323846 * j.spring_hertz);
        if (j.kind == BENCH_JOINT_HINGE) {
            auto *h = static_cast<btHingeConstraint *>(bj.c);
            btVector3 ax = bj.a->getCenterOfMassTransform().getBasis() *
                           h->getAFrame().getBasis().getColumn(2);
            btScalar th = btScalar(BULLET_HINGE_SIGN) * h->getHingeAngle();
            btScalar rate = (bj.b->getAngularVelocity() - bj.a->getAngularVelocity()).dot(ax);
            btScalar k = btScalar(j.eff_inertia) * om * om;
            btScalar c = 2 * btScalar(j.spring_damping * j.eff_inertia) * om;
            btVector3 t = ax * (-k * th - c * rate);
            bj.b->applyTorque(t);
            bj.a->applyTorque(-t);
            continue;
        }
        // Prismatic (along the axis) and distance (along the anchors' line).
        btVector3 pa = point_of(bj.a, j.local_a), pb = point_of(bj.b, j.local_b), d = pb - pa;
        btVector3 va = bj.a->getVelocityInLocalPoint(pa - bj.a->getCenterOfMassPosition());
        btVector3 vb = bj.b->getVelocityInLocalPoint(pb - bj.b->getCenterOfMassPosition());
        btVector3 n;
        btScalar x;
        if (j.kind == BENCH_JOINT_PRISMATIC) {
            n = bj.a->getCenterOfMassTransform().getBasis() * vec(j.axis_a);
            x = d.dot(n);
        } else {
            btScalar len = d.length();
            n = len > btScalar(1e-9) ? d / len : btVector3(0, 1, 0);
            x = len - btScalar(j.rest_length);
        }
        btScalar k = btScalar(j.eff_mass) * om * om,
                 c = 2 * btScalar(j.spring_damping * j.eff_mass) * om;
        btVector3 f = n * (-k * x - c * (vb - va).dot(n));
        bj.b->applyForce(f, pb - bj.b->getCenterOfMassPosition());
        bj.a->applyForce(-f, pa - bj.a->getCenterOfMassPosition());
    }
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
    w->scene = s;
    w->hull_mode = mode;
    w->hull_margin = s->linear_slop;
    w->world.setGravity(
        btVector3(btScalar(s->gravity[0]), btScalar(s->gravity[1]), btScalar(s->gravity[2])));
    btContactSolverInfo &si = w->world.getSolverInfo();
    si.m_numIterations = s->peer_iterations; // our passes: substeps x (solve + relax)
    si.m_erp = btScalar(s->peer_erp);        // 0.2 (Bullet default too)
    si.m_splitImpulse = 1; // position error by split impulse (Bullet's best; ours: the soft step)
    si.m_linearSlop = btScalar(s->linear_slop);                          // 0.005 m
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
        w->body_of.push_back(body);
        const bench_shape &s0 = b.shapes[0];
        if (s0.category == 1 && s0.mask == 0xffffffffu) {
            w->world.addRigidBody(body); // Bullet's default groups (static-static pairs skipped)
        } else { // our filter (one per body: the first shape's); the same AND rule as ours
            w->world.addRigidBody(body, int(s0.category), int(s0.mask));
        }
    }
    for (uint32_t k = 0; k < s->joint_count; k++) {
        add_joint(w, s->joints[k]);
    }
    return w;
}

void bullet_step(void *h)
{
    auto *w = static_cast<BulletWorld *>(h);
    if (!w->joints.empty()) {
        joints_before_step(w);
    }
    w->world.stepSimulation(w->dt, 0); // maxSubSteps 0: exactly one step of dt
}

void bullet_poses(void *h, double *pose)
{
    auto *w = static_cast<BulletWorld *>(h);
    for (btRigidBody *b : w->body_of) {
        const btTransform &xf = b->getWorldTransform();
        btQuaternion q = xf.getRotation();
        *pose++ = xf.getOrigin().x(), *pose++ = xf.getOrigin().y(), *pose++ = xf.getOrigin().z();
        *pose++ = q.x(), *pose++ = q.y(), *pose++ = q.z(), *pose++ = q.w();
    }
}

bench_stats bullet_stats(void *h)
{
    auto *w = static_cast<BulletWorld *>(h);
    bench_stats st{0, 0, 0, 0};
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
    for (const BulletJoint &j : w->joints) {
        st.broken += j.c && !j.c->isEnabled();
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
    static const bench_engine e = {"bullet",      "3.24",      "float",      1,
                                   bullet_create, bullet_step, bullet_poses, bullet_stats,
                                   bullet_destroy};
    return bench_engine_main(&e, argc, argv);
}
